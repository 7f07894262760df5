/**
 * CallbackTable (owns `callbacks`): callback tokens (SPEC 4, `callback`), single use, bound
 * to one attempt of one step. A token is stored before the outbound POST, so an answer that
 * arrives first is kept. An attempt whose POST did not get through (it failed, or a restart
 * cut it off) leaves its token open for the retry, which sends it again: the job may hold it.
 */
import type { CallbackAnswer } from "../../src/engine/verdict";
import type { Sql } from "./sql";

export interface CallbackRow {
  token: string;
  stepIndex: number;
  attempt: number;
  state: "open" | "answered" | "used" | "expired";
  result: string | null;
}

export class CallbackTable {
  constructor(private readonly db: Sql) {}

  open(token: string, stepIndex: number, attempt: number, now: number): void {
    this.db.run`INSERT INTO callbacks (token, step_idx, attempt, state, created_at)
      VALUES (${token}, ${stepIndex}, ${attempt}, 'open', ${now})`;
  }

  get(token: string): CallbackRow | undefined {
    return this.db
      .one<CallbackRow>`SELECT token, step_idx AS stepIndex, attempt, state, result FROM callbacks
      WHERE token = ${token}`;
  }

  /** Records an answer to an open token; false when the token is not open (used, expired). */
  answer(token: string, answer: CallbackAnswer): boolean {
    const row = this.get(token);
    if (!row || row.state !== "open") return false;
    this.db
      .run`UPDATE callbacks SET state = 'answered', result = ${JSON.stringify(answer)} WHERE token = ${token}`;
    return true;
  }

  /** Marks the token's answer as applied to its step. */
  use(token: string): void {
    this.db.run`UPDATE callbacks SET state = 'used' WHERE token = ${token}`;
  }

  /** The step's token left open by an attempt whose POST did not get through, now `attempt`'s; undefined when none. */
  carryOver(stepIndex: number, attempt: number): string | undefined {
    const row = this.db.one<{ token: string }>`SELECT token FROM callbacks
      WHERE step_idx = ${stepIndex} AND state IN ('open', 'answered') ORDER BY created_at DESC`;
    if (row) this.db.run`UPDATE callbacks SET attempt = ${attempt} WHERE token = ${row.token}`;
    return row?.token;
  }

  /** Closes every open token of a step (timeout, cancel): later answers get a 409. */
  expire(stepIndex: number): void {
    this.db
      .run`UPDATE callbacks SET state = 'expired' WHERE step_idx = ${stepIndex} AND state IN ('open', 'answered')`;
  }

  /** The run was cancelled: no token can complete a step any more. */
  expireAll(): void {
    this.db.run`UPDATE callbacks SET state = 'expired' WHERE state IN ('open', 'answered')`;
  }

  /** The open or answered token of a step's attempt, if any. */
  ofAttempt(stepIndex: number, attempt: number): CallbackRow | undefined {
    return this.db
      .one<CallbackRow>`SELECT token, step_idx AS stepIndex, attempt, state, result FROM callbacks
      WHERE step_idx = ${stepIndex} AND attempt = ${attempt} AND state IN ('open', 'answered')`;
  }
}

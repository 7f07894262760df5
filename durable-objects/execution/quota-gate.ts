/**
 * The run's side of flow control (SPEC 10), one per RunObject instance: before a call (a
 * step's, a forEach item's, a compensation's) is recorded as an attempt, it asks "may this go
 * now?". A call whose destination is neither limited nor known to be paused goes at once, with
 * no round trip (the hot path: a Map lookup, and a host parsed only once some destination is
 * listed or paused). Otherwise the destination's object (DestinationObject) grants a slot, a
 * lease the gate renews while the call is in flight and gives back when it ends, or queues the
 * call: the step then waits (`waitingFor: "quota"`) until the grant wakes it, or until
 * RECHECK_MS, when it asks again (a grant the run could not be told of is not lost).
 */
import {
  limited,
  redirectedInto,
  redirectRefusal,
  type DestinationTable,
} from "../../src/engine/destinations";
import { destinationPause, type AttemptResult, type QuotaWait } from "../../src/engine/verdict";
import type { ToolSet } from "../../src/tools";
import type { AcquireOutcome, DestinationObject } from "../destinations/destination-object";
import type { PauseCache } from "../destinations/pause-cache";
import type { PauseNotice } from "../destinations/pause-board";
import { QuotaLeases, tell, type Lease } from "./quota-leases";
import type { Ticket } from "./tickets";

export type { Lease };

/** A queued call asks again after this long if no grant woke it first. */
export const RECHECK_MS = 30_000;
/** A destination that could not be asked is asked again after this long. */
const UNREACHABLE_RECHECK_MS = 5_000;
/** A grant the run was told of is used without asking again while this fresh (a lease lives longer). */
const FRESH_MS = 5_000;

export type Admission = { type: "go"; lease: Lease | null } | { type: "wait"; wait: QuotaWait };

const FREE: Admission = { type: "go", lease: null };

export interface GateEnv {
  table: DestinationTable;
  tools: ToolSet;
  /** This isolate's knowledge of pauses. */
  pauses: PauseCache;
  /** The destination's object. */
  slots(destination: string): DurableObjectStub<DestinationObject>;
  /** Reads the pause board (null: nothing to read). */
  readBoard: (() => Promise<PauseNotice[]>) | null;
  /** A destination answered that it granted `ticket` (as RunObject.quotaGranted is told). */
  onGrant(destination: string, ticket: Ticket): void;
  /** Runs work beside the run (never awaited by a call's path). */
  beside(work: Promise<unknown>): void;
  runId(): string;
  now(): number;
}

export class QuotaGate {
  /** Grants the destinations told this run of: ticket → destination and when. */
  private readonly fresh = new Map<Ticket, { destination: string; at: number }>();
  /** Calls waiting in memory for a grant (forEach items, compensations): how to wake each. */
  private readonly sleepers = new Map<Ticket, () => void>();
  /** Destinations this instance asked for slots (a cancel gives everything back to them). */
  private readonly asked = new Set<string>();
  /** The slots the calls in flight hold. */
  private readonly leases: QuotaLeases;

  constructor(private readonly env: GateEnv) {
    this.leases = new QuotaLeases(env);
  }

  /** Whether a call of `tool` with (resolved) `params` may go now; a Promise when its destination must be asked. */
  admit(
    tool: string,
    params: Record<string, unknown>,
    ticket: Ticket,
    now: number,
  ): Admission | Promise<Admission> {
    // A grant this run was told of is used (its lease taken), even if the pause has ended since.
    const granted = this.fresh.size > 0 ? this.fresh.get(ticket) : undefined;
    if (granted) return this.ask(granted.destination, ticket);
    const target = this.env.tools.target(tool, params);
    if (target === null) return FREE;
    const { pauses, table } = this.env;
    pauses.refresh(now, this.env.readBoard, this.env.now, (work) => this.env.beside(work));
    if (table.empty && pauses.empty) return FREE;
    const destination = table.resolve(target);
    if (destination === null) return FREE;
    if (!limited(destination.limits) && pauses.pausedUntil(destination.key, now) === null)
      return FREE;
    return this.ask(destination.key, ticket);
  }

  /**
   * Follows `first` (what `admit` answered) for a call that waits in memory, not as a step
   * (forEach items, compensations): `onWait` once when it must wait; asks again when woken by
   * its grant or at its time; null when `stop()` says to give up (the run halted meanwhile).
   */
  async admitWaiting(
    first: Admission | Promise<Admission>,
    tool: string,
    params: Record<string, unknown>,
    ticket: Ticket,
    onWait: (wait: QuotaWait) => void,
    stop: () => boolean,
  ): Promise<{ lease: Lease | null } | null> {
    let admission = await first;
    let told = false;
    while (admission.type === "wait") {
      if (!told) onWait(admission.wait);
      told = true;
      await this.sleep(ticket, admission.wait.until - this.env.now());
      if (stop()) return null;
      admission = await this.admit(tool, params, ticket, this.env.now());
    }
    if (stop()) {
      this.release(admission.lease);
      return null;
    }
    return admission;
  }

  /** A destination granted `ticket` (told through RunObject.quotaGranted): true when a call waiting in memory takes it. */
  granted(destination: string, ticket: Ticket): boolean {
    this.fresh.set(ticket, { destination, at: this.env.now() });
    const wake = this.sleepers.get(ticket);
    wake?.();
    return wake !== undefined;
  }

  /** Gives back a grant no call of this run wants any more. */
  giveBack(destination: string, ticket: Ticket): void {
    this.fresh.delete(ticket);
    this.leases.giveBack(destination, ticket);
  }

  /** The call holding `lease` ended (any outcome): its slot goes to the next caller. */
  release(lease: Lease | null): void {
    this.leases.release(lease);
  }

  /** Slots are being given back: their answers may grant this run's queued calls (see `released`). */
  get releasing(): boolean {
    return this.leases.releasing;
  }

  /** Resolves once the give-backs sent so far are answered (and the grants they brought applied). */
  async released(): Promise<void> {
    await this.leases.released();
  }

  /** A call ended (any outcome): its slot goes back, and a 429 (or a 503 with Retry-After) pauses its destination. */
  ended(
    tool: string,
    params: Record<string, unknown>,
    lease: Lease | null,
    result: AttemptResult,
    now: number,
  ): void {
    this.release(lease);
    const pause = destinationPause(result);
    const answeredBy = "answeredBy" in result ? result.answeredBy : undefined;
    if (pause !== null) this.reportPause(tool, params, pause, now, answeredBy);
  }

  /** Whether a call of `tool` may follow a redirect to `url` (the tool asks before each hop): see redirectRefusal. */
  redirectRefusal(
    tool: string,
    params: Record<string, unknown>,
    url: string,
    now: number,
  ): AttemptResult | null {
    const { table, pauses } = this.env;
    if (table.empty && pauses.empty) return null;
    const to = redirectedInto(table, this.env.tools.target(tool, params), url);
    return redirectRefusal(to, to && pauses.pausedUntil(to.key, now), now);
  }

  /**
   * A call's answer asks every run to leave its destination alone for `ms` (a 429, a 503 with
   * Retry-After: see destinationPause): known in this isolate at once, and by the destination.
   * `answeredBy`: the origin a redirect led to, whose answer it was.
   */
  reportPause(
    tool: string,
    params: Record<string, unknown>,
    ms: number,
    now: number,
    answeredBy?: string,
  ): void {
    const { table } = this.env;
    const target = this.env.tools.target(tool, params);
    const destination =
      (answeredBy === undefined ? null : redirectedInto(table, target, answeredBy)) ??
      (target && table.resolve(target));
    if (!destination) return;
    const key = destination.key;
    this.env.pauses.note(key, ms, now);
    tell(this.env, key, (slots) => slots.pause(key, ms));
  }

  /**
   * The run was cancelled (or stopped): waiting calls wake (and give up), and every destination
   * asked gets its slots and places in its queue back now.
   */
  async cancel(): Promise<void> {
    for (const wake of [...this.sleepers.values()]) wake();
    const runId = this.env.runId();
    const asked = [...this.asked];
    this.asked.clear();
    this.fresh.clear();
    this.leases.forget();
    await Promise.all(
      asked.map((d) =>
        this.env
          .slots(d)
          .cancelRun(d, runId)
          .catch((err: unknown) =>
            console.error(`edgestep: giving back slots of ${d} failed`, err),
          ),
      ),
    );
  }

  /** Wakes the calls waiting in memory, so that they see the run halted. */
  wakeAll(): void {
    for (const wake of [...this.sleepers.values()]) wake();
  }

  private async ask(destination: string, ticket: Ticket): Promise<Admission> {
    this.asked.add(destination);
    if (!this.takeFresh(ticket)) {
      let outcome: AcquireOutcome;
      try {
        outcome = await this.env.slots(destination).acquire(destination, this.env.runId(), ticket);
      } catch (err) {
        console.error(`edgestep: asking ${destination} for a slot failed`, err);
        return this.waiting(destination, "queued", UNREACHABLE_RECHECK_MS, null, null);
      }
      if (!outcome.granted && !this.takeFresh(ticket)) {
        const paused = outcome.pausedForMs;
        const reason = paused === null ? "queued" : "paused";
        return this.waiting(destination, reason, RECHECK_MS, outcome.position, paused);
      }
    }
    this.fresh.delete(ticket); // a grant told while asking is this very lease
    return { type: "go", lease: this.leases.hold(destination, ticket) };
  }

  private waiting(
    destination: string,
    reason: QuotaWait["reason"],
    recheckMs: number,
    position: number | null,
    pausedForMs: number | null,
  ): Admission {
    const now = this.env.now();
    const pausedUntil = pausedForMs === null ? null : now + pausedForMs;
    return {
      type: "wait",
      wait: { destination, reason, until: now + recheckMs, position, pausedUntil },
    };
  }

  /** Uses a grant the run was told of, if it is fresh. */
  private takeFresh(ticket: Ticket): boolean {
    const grant = this.fresh.get(ticket);
    if (grant === undefined) return false;
    this.fresh.delete(ticket);
    return this.env.now() - grant.at < FRESH_MS;
  }

  /** Waits `ms`, or until `ticket` is granted or the run halts (`wakeAll`). */
  private sleep(ticket: Ticket, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(ticket);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.sleepers.set(ticket, done);
    });
  }
}

/**
 * The chaos run's client for edgestep's HTTP API. Every call retries network errors, because the
 * server may be down (killed, restarting) at any moment.
 */
import { sleep } from "./util.ts";

export interface StepView {
  id: string;
  status: string;
  attempts: number;
  error?: { category: string; message: string; status?: number };
  nextAttemptAt?: string;
}
export interface RunView {
  runId: string;
  status: string;
  steps: StepView[];
}
export interface StepResult {
  success: boolean;
  data: unknown;
  error?: unknown;
}
export interface AttemptLogEntry {
  attempt: number;
  startedAt: string;
  endedAt: string | null;
  category?: string;
  status?: number;
}

/** The statuses after which a run never changes again. */
export const FINAL = new Set(["completed", "partial", "failed", "cancelled"]);

export class Api {
  private readonly base: string;
  constructor(base: string) {
    this.base = base;
  }

  /** GET with retries across restarts (network errors); 404 and other statuses are returned. */
  async get<T>(path: string): Promise<{ status: number; body: T }> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const res = await fetch(`${this.base}${path}`, { signal: AbortSignal.timeout(15_000) });
        const text = await res.text();
        return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await sleep(250);
      }
    }
  }

  /** Submits a plan under an Idempotency-Key, so a submission cut off by a kill can be repeated safely. */
  async submit(plan: unknown, key: string): Promise<string> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        const res = await fetch(`${this.base}/v1/runs`, {
          method: "POST",
          headers: { "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify(plan),
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await res.json()) as { runId?: string };
        if ((res.status === 202 || res.status === 200) && body.runId) return body.runId;
        // Busy (rate limit, overload): wait as told, up to 5 s, and try again.
        if ((res.status === 429 || res.status === 503) && Date.now() < deadline) {
          await sleep(Math.min(5_000, 1_000 * (Number(res.headers.get("retry-after")) || 1)));
          continue;
        }
        throw Object.assign(
          new Error(`POST /v1/runs answered ${res.status}: ${JSON.stringify(body)}`),
          { fatal: true },
        );
      } catch (err) {
        if ((err as { fatal?: boolean }).fatal || Date.now() > deadline) throw err;
        await sleep(250);
      }
    }
  }
}

/**
 * Submitting the runs while the server is being killed: batches spread over time, each under an
 * Idempotency-Key so a submission cut off by a kill is repeated after the restart without creating
 * a second run.
 */
import type { Api } from "./api.ts";
import type { ChaosPlan } from "./plans.ts";
import { sleep } from "./util.ts";

export interface Submitted {
  /** The plan's position among all the runs (submissions finish out of order). */
  index: number;
  plan: ChaosPlan;
  runId: string;
}

/** Splits the plans, in order, into `count` batches as even as possible. */
export function splitIntoBatches(plans: ChaosPlan[], count: number): ChaosPlan[][] {
  const batches: ChaosPlan[][] = Array.from({ length: count }, () => []);
  plans.forEach((p, i) => batches[Math.floor((i * count) / plans.length)]!.push(p));
  return batches;
}

export class Submissions {
  private readonly api: Api;
  private readonly keyPrefix: string;
  private readonly submitted: Submitted[] = [];
  private readonly errors: unknown[] = [];
  private readonly requests: Promise<void>[] = [];
  private readonly spreading: Promise<void>[] = [];

  /** `keyPrefix` makes the Idempotency-Keys unique to this chaos run. */
  constructor(api: Api, keyPrefix: string) {
    this.api = api;
    this.keyPrefix = keyPrefix;
  }

  /** Runs submitted so far. */
  get count(): number {
    return this.submitted.length;
  }

  /** A submission failed for good: there is no point in going on. */
  get failed(): boolean {
    return this.errors.length > 0;
  }

  /**
   * Starts submitting `batch` (indexes from `firstIndex`) `afterMs` from now, one run every
   * `overMs / (batch.length - 1)` ms, without waiting for the answers.
   */
  spread(batch: ChaosPlan[], firstIndex: number, afterMs: number, overMs: number): void {
    this.spreading.push(this.submitBatch(batch, firstIndex, afterMs, overMs));
  }

  /** Waits for every submission; throws the first failure, else returns the runs in plan order. */
  async settle(): Promise<Submitted[]> {
    await Promise.all(this.spreading);
    await Promise.all(this.requests);
    if (this.errors.length > 0) throw this.errors[0];
    return this.submitted.sort((a, b) => a.index - b.index);
  }

  private async submitBatch(
    batch: ChaosPlan[],
    firstIndex: number,
    afterMs: number,
    overMs: number,
  ): Promise<void> {
    await sleep(afterMs);
    for (let j = 0; j < batch.length && !this.failed; j++) {
      const index = firstIndex + j;
      const plan = batch[j]!;
      this.requests.push(
        this.api.submit(plan.document, `${this.keyPrefix}-${index}`).then(
          (runId) => void this.submitted.push({ index, plan, runId }),
          (err: unknown) => void this.errors.push(err),
        ),
      );
      if (j < batch.length - 1) await sleep(overMs / (batch.length - 1));
    }
  }
}

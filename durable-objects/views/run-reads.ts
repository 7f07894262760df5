/**
 * RunReads: what the run's read RPCs answer (SPEC 6, 6.1), given the run its caller owns.
 * Reads never write the checkpoint; long polls (`waitMs`) wait on its change feed.
 */
import type { RunRecord } from "../../src/engine/records";
import { planView } from "../../src/engine/plan-view";
import type { Checkpoint } from "../storage/checkpoint";
import type { WebhookOutbox } from "../webhooks/outbox";
import {
  eventPage,
  resultsPage,
  statusText,
  stepDetail,
  stepsPage,
  summaryView,
  type StepsQuery,
} from "./run-views";
import { etagMatches, etagOf, type StatusRead } from "./status-reads";
import type { StepViews } from "./step-views";

export interface ReadDeps {
  checkpoint: Checkpoint;
  outbox: WebhookOutbox;
  /** The steps of the full status, as JSON text kept per step. */
  stepViews: StepViews;
  now(): number;
  /** The run, unless there is none or its deletion began (then it reads as gone). */
  live(): RunRecord | undefined;
}

export class RunReads {
  constructor(private readonly d: ReadDeps) {}

  /** The run if `owner` owns it (another key's run reads as missing). */
  owned(owner: string): RunRecord | undefined {
    const run = this.d.live();
    return run && run.owner === owner ? run : undefined;
  }

  /**
   * `GET /v1/runs/:id` (SPEC 6, 6.1): `notModified` when `If-None-Match` names the current
   * document; with `waitMs`, first waits (a long poll) until it no longer does.
   */
  async status(owner: string, read: StatusRead) {
    const d = this.d;
    let run = this.owned(owner);
    if (run && read.waitMs !== undefined) run = await this.changedFrom(run, read);
    if (!run) return null;
    const etag = etagOf(run.version, read.view);
    if (etagMatches(read.ifNoneMatch, etag)) return { etag, notModified: true as const };
    const json =
      read.view === "summary"
        ? JSON.stringify(summaryView(d.checkpoint, d.outbox, run, d.now()))
        : statusText(d.checkpoint, d.outbox, d.stepViews, run, d.now());
    return { etag, notModified: false as const, json };
  }

  /** `GET /v1/runs/:id/steps`: a page of step entries (SPEC 6.1). */
  steps(owner: string, query: StepsQuery) {
    const d = this.d;
    return this.owned(owner) ? stepsPage(d.checkpoint, query) : null;
  }

  step(owner: string, stepId: string) {
    const d = this.d;
    return this.owned(owner) ? stepDetail(d.checkpoint, stepId) : null;
  }

  /** `GET /v1/runs/:id/plan`: the plan the run executes (see planView). */
  plan(owner: string) {
    const d = this.d;
    return this.owned(owner) ? planView(d.checkpoint.plan.read()) : null;
  }

  /** A page of `GET /v1/runs/:id/results` after step index `after` (see resultsPage). */
  results(owner: string, after: number) {
    const d = this.d;
    return this.owned(owner) ? resultsPage(d.checkpoint, after) : null;
  }

  /**
   * A page of the event log after `after`; with `waitMs`, an empty page of a live run first
   * waits (at most that long) for the next change, so a stream follows the run without polling.
   */
  async events(owner: string, after: number, limit: number, waitMs: number) {
    const d = this.d;
    const deadline = Date.now() + waitMs;
    for (;;) {
      const run = this.owned(owner);
      if (!run) return null;
      const page = eventPage(d.checkpoint, run, after, limit);
      const left = deadline - Date.now();
      if (page.events.length > 0 || page.finished || left <= 0) return page;
      await d.checkpoint.changes.next(left);
    }
  }

  /** Waits (at most `read.waitMs`) until the run no longer matches `read.ifNoneMatch`; the run as it is then. */
  private async changedFrom(run: RunRecord, read: StatusRead) {
    const d = this.d;
    const deadline = Date.now() + read.waitMs!;
    let current: RunRecord | undefined = run;
    while (current && etagMatches(read.ifNoneMatch, etagOf(current.version, read.view))) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      await d.checkpoint.changes.next(left);
      current = d.live();
    }
    return current;
  }
}

/**
 * Listings (SPEC 8.2), pure: the entry a run publishes to its owner's index, the state whose
 * change makes an update due (and when), the entry as a listing shows it, and the cursor.
 */
import { RUN_ID_PATTERN } from "../ids";
import type { CompiledPlan } from "./plan";
import type { RunRecord, RunStatus } from "./records";
import { iso, stepCompletion, stepSummary, type SummaryCounts } from "./status";

/** What the run's index holds of one run. `version` orders updates: an older one is ignored. */
export interface ListingEntry {
  runId: string;
  version: number;
  name: string | null;
  status: RunStatus;
  createdAt: number;
  startedAt: number | null;
  endedAt: number | null;
  tags: Record<string, string>;
  counts: SummaryCounts;
}

export function listingEntry(run: RunRecord, plan: CompiledPlan): ListingEntry {
  const { total, succeeded, failed, skipped, cancelled } = run.counts;
  return {
    runId: run.id,
    version: run.version,
    name: plan.name,
    status: run.status,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    endedAt: run.endedAt,
    tags: plan.tags,
    counts: { total, succeeded, failed, skipped, cancelled },
  };
}

/**
 * The part of the entry that can change (name, tags and createdAt never do), as text: an
 * update is due when it differs from the one the index acknowledged. Read from the run row
 * alone, so checking costs the same for any plan.
 */
export function listingState(run: RunRecord): string {
  const c = run.counts;
  return JSON.stringify([
    run.status,
    run.startedAt,
    run.endedAt,
    c.total,
    c.succeeded,
    c.failed,
    c.skipped,
    c.cancelled,
  ]);
}

/** The listing outbox's row (storage/listing-outbox-table.ts). */
export interface ListingOutboxState {
  ackedState: string | null;
  ackedStatus: string | null;
  sentAt: number | null;
  retryAt: number | null;
  failures: number;
}

/** The outbox of a run the index has heard nothing from yet. */
export const NOTHING_ACKED: ListingOutboxState = {
  ackedState: null,
  ackedStatus: null,
  sentAt: null,
  retryAt: null,
  failures: 0,
};

/**
 * Progress-only changes reach the index at most this often: each is a call into the owner's
 * index, which every run of the key shares, and SPEC 8.2 bounds the delay of status changes
 * only (2 s); a run's own `GET` is always current.
 */
export const COALESCE_MS = 5000;
/**
 * A run that became `running` tells the index this long after its last update: a run that
 * ends sooner sends its final status alone, one update rather than two (each is a call into
 * the owner's index, which every run of the key shares). Every other status goes at once.
 */
export const STATUS_COALESCE_MS = 250;
/** An update in flight is claimed this long: past it, it is sent again (a crash mid-send). */
export const CLAIM_MS = 10_000;

/**
 * When the index should next hear from the run, or null when it is up to date: at once for a
 * new status (or a run it has never seen) but `running` (`STATUS_COALESCE_MS` after the last
 * update), `COALESCE_MS` after the last update for progress,
 * never before `retryAt` (a failure's backoff, or a claim). While the run is being deleted,
 * what is due is the removal of its entry.
 */
export function listingUpdateDue(run: RunRecord, outbox: ListingOutboxState): number | null {
  const notBefore = outbox.retryAt ?? Number.NEGATIVE_INFINITY;
  if (run.deleteRequestedAt !== null) return Math.max(run.deleteRequestedAt, notBefore);
  if (listingState(run) === outbox.ackedState) return null;
  const last = outbox.sentAt ?? run.createdAt;
  const base = !sentByLiveObject(run, outbox)
    ? run.createdAt
    : last + (outbox.ackedStatus === run.status ? COALESCE_MS : STATUS_COALESCE_MS);
  return Math.max(base, notBefore);
}

/** A change the live object sends when it falls due: progress alone, or a run that became `running`. */
function sentByLiveObject(run: RunRecord, outbox: ListingOutboxState): boolean {
  return (
    outbox.ackedStatus === run.status || (outbox.ackedStatus !== null && run.status === "running")
  );
}

/**
 * The part of `listingUpdateDue` the run's alarm points at: a new status, a run the index has
 * never seen, a retry after a failure (or a claim), the removal of a deleted run. A change of
 * progress alone, and a run that became `running`, are sent by the live object and not woken
 * for: should the object go away first, they reach the index with the run's next status
 * change or alarm (a running run always has one: its lease, a retry or a timer; its final
 * status is always woken for).
 */
export function listingAlarmDue(run: RunRecord, outbox: ListingOutboxState): number | null {
  const due = listingUpdateDue(run, outbox);
  if (due === null || run.deleteRequestedAt !== null || outbox.retryAt !== null) return due;
  return sentByLiveObject(run, outbox) ? null : due;
}

/** How long to wait before trying the index again after `failures` failures in a row: 1 s, 2 s, ... 60 s. */
export function listingBackoff(failures: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.max(0, failures - 1));
}

/** A run in a listing (SPEC 8.2). */
export function listingView(e: ListingEntry) {
  return {
    runId: e.runId,
    name: e.name,
    status: e.status,
    createdAt: iso(e.createdAt)!,
    startedAt: iso(e.startedAt),
    endedAt: iso(e.endedAt),
    tags: e.tags,
    summary: stepSummary(e.counts),
    progress: stepCompletion(e.counts),
  };
}

export type ListingView = ReturnType<typeof listingView>;

/** What a listing filters on (SPEC 8.2); every given filter must match. */
export interface ListingFilter {
  statuses?: readonly RunStatus[];
  name?: string;
  tags?: readonly { key: string; value: string }[];
  /** Exclusive bounds, epoch ms. */
  createdAfter?: number;
  createdBefore?: number;
}

/** A place in the order of a listing (createdAt descending, then runId descending). */
export interface Position {
  createdAt: number;
  runId: string;
}

export interface ListingQuery extends ListingFilter {
  limit: number;
  /** The page starts after this position (the cursor). */
  after?: Position;
}

/**
 * The cursor names the position of the last run on the page, not an offset: runs created or
 * changed meanwhile cannot shift a later page, so paging returns every run at most once.
 * Opaque to clients: base64url of `[createdAt, runId]`.
 */
export function encodeCursor(p: Position): string {
  return btoa(JSON.stringify([p.createdAt, p.runId]))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
}

/** The position a cursor names, or null when it is not one this API gave out. */
export function decodeCursor(cursor: string): Position | null {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(cursor)) return null;
  try {
    const value: unknown = JSON.parse(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")));
    if (!Array.isArray(value) || value.length !== 2) return null;
    const [createdAt, runId] = value as unknown[];
    if (!Number.isSafeInteger(createdAt) || typeof runId !== "string") return null;
    if (!RUN_ID_PATTERN.test(runId)) return null;
    return { createdAt: createdAt as number, runId };
  } catch {
    return null;
  }
}

/**
 * Conditional and long-polled status reads (SPEC 6.1). The ETag names the run's `version`,
 * which storage bumps with every change a status document shows, so comparing tags costs
 * nothing and an unchanged run is answered 304 without building the document. `elapsedMs`,
 * computed from the clock at read time, is not a change: the tag is weak.
 */
export type StatusView = "full" | "summary";

export interface StatusRead {
  view: StatusView;
  /** The client's `If-None-Match`. */
  ifNoneMatch?: string;
  /** Long poll: wait up to this many ms for the document to differ from `ifNoneMatch`. */
  waitMs?: number;
}

export function etagOf(version: number, view: StatusView): string {
  return `W/"${version}-${view}"`;
}

/** `If-None-Match` names `etag` (weak comparison; `*` matches any). */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "");
  return ifNoneMatch.split(",").some((t) => t.trim() === "*" || opaque(t) === opaque(etag));
}

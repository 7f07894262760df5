/**
 * The runs list's refresh: as many runs as the page shows (its first page plus every
 * "Load more"), page after page of at most 200 (the API's limit), so a refresh never
 * shortens a list the user lengthened. Pure: `list` is the API call.
 */
import type { RunList } from "../types";

/** What the refresh sets of a listing query (the filters are the caller's). */
interface PageOf {
  cursor?: string | null;
  limit?: number;
}

export const MAX_PAGE = 200;

export async function listUpTo<Q extends object>(
  list: (q: Q & PageOf) => Promise<RunList>,
  query: Q,
  want: number,
): Promise<RunList> {
  let page = await list({ ...query, limit: Math.min(MAX_PAGE, want) });
  const runs = [...page.runs];
  while (page.next && runs.length < want) {
    page = await list({
      ...query,
      cursor: page.next,
      limit: Math.min(MAX_PAGE, want - runs.length),
    });
    runs.push(...page.runs);
  }
  return { ...page, runs };
}

/**
 * The runs list's data for its filters: the runs shown (as many as were loaded), the next
 * page's cursor and the counts by status, refreshed every few seconds. A refresh that could
 * only fail the same way is not sent again: a filter the API refuses (400) waits for the
 * filter to change, a refused key (401) for the key prompt (the page mounts again after it).
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api } from "../api";
import type { RunListEntry, RunStats } from "../types";
import type { Filters } from "./filter-query";
import { listUpTo } from "./list-up-to";
import { parseTagFilter } from "./tag-filter";

const REFRESH_MS = 3000;

export interface RunListData {
  runs: RunListEntry[] | null;
  next: string | null;
  stats: RunStats | null;
  /** The server has no listing routes (SPEC 8). */
  unavailable: boolean;
  error: string | null;
  /** A refresh is due (false once a failure stopped them, until the filters change). */
  refreshing: boolean;
  more(): Promise<void>;
}

/**
 * A load failed for good: the filter was refused (400), whose answer the previous filter's
 * rows are not, or the key (401), which the prompt now asks for. Anything else (a 5xx, the
 * network) may pass: the rows stay and the list asks again.
 */
const forGood = (err: unknown) =>
  err instanceof ApiError && (err.status === 400 || err.status === 401);

export function useRunList(applied: Filters): RunListData {
  const [runs, setRuns] = useState<RunListEntry[] | null>(null);
  const [next, setNext] = useState<string | null>(null);
  const [stats, setStats] = useState<RunStats | null>(null);
  const [unavailable, setUnavailable] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [refreshing, setRefreshing] = useState(true);
  const shown = useRef(50);

  useEffect(() => {
    let stop = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tags = parseTagFilter(applied.tags);
    setRefreshing(true);
    const load = async () => {
      try {
        const [page, counts] = await Promise.all([
          listUpTo(api.list, { status: applied.status, name: applied.name, tags }, shown.current),
          api
            .stats()
            .catch((err: unknown) =>
              err instanceof ApiError && err.noRoute ? null : Promise.reject(err),
            ),
        ]);
        if (stop) return;
        setRuns(page.runs);
        setNext(page.next);
        setStats(counts);
        setError(null);
      } catch (err) {
        if (stop) return;
        if (err instanceof ApiError && err.noRoute) return setUnavailable(true);
        setError((err as Error).message);
        if (forGood(err)) {
          setRuns(null);
          setNext(null);
          setRefreshing(false);
          return;
        }
      }
      if (!stop) timer = setTimeout(load, REFRESH_MS);
    };
    void load();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [applied]);

  const more = async () => {
    if (!next) return;
    const tags = parseTagFilter(applied.tags);
    const page = await api.list({ ...applied, tags, cursor: next });
    setRuns((r) => [...(r ?? []), ...page.runs]);
    shown.current += page.runs.length;
    setNext(page.next);
  };

  return { runs, next, stats, unavailable, error, refreshing, more };
}

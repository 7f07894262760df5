/**
 * The runs list (SPEC 8): newest first, filtered by status, name and tags, with counts by
 * status, refreshed every few seconds. On a server without the listing routes it says so
 * and offers to open a run by id.
 */
import { useEffect, useState } from "preact/hooks";
import { ago, duration } from "../format";
import { filtersOfQuery, queryOfFilters, type Filters } from "./filter-query";
import { useRunList } from "./use-run-list";
import { StatusBadge } from "../run/header";
import { navigate, runPath } from "../router";
import { RUN_STATUSES, type RunListEntry, type RunStats } from "../types";

function OpenById() {
  const [id, setId] = useState("");
  return (
    <form
      class="open-by-id"
      onSubmit={(e) => {
        e.preventDefault();
        if (id.trim()) navigate(runPath(id.trim()));
      }}
    >
      <input
        name="runId"
        placeholder="run_… (open a run by its id)"
        value={id}
        onInput={(e) => setId((e.target as HTMLInputElement).value)}
      />
      <button type="submit">Open</button>
    </form>
  );
}

/**
 * Counts by status of every run of the key (`GET /v1/stats` takes no filter): labelled so, and
 * said again when a name or tag filter narrows the list below them.
 */
function Counts({
  stats,
  active,
  narrowed,
  pick,
}: {
  stats: RunStats;
  active: string;
  narrowed: boolean;
  pick: (s: string) => void;
}) {
  return (
    <div class="counts" data-testid="counts">
      <span class="muted small">all runs:</span>
      <button type="button" class={active === "" ? "chip on" : "chip"} onClick={() => pick("")}>
        {`all ${stats.total}`}
      </button>
      {RUN_STATUSES.filter((s) => stats.byStatus[s]).map((s) => (
        <button
          type="button"
          key={s}
          data-count-status={s}
          class={active === s ? `chip on st-${s}` : `chip st-${s}`}
          onClick={() => pick(active === s ? "" : s)}
        >
          {`${s} ${stats.byStatus[s]}`}
        </button>
      ))}
      {narrowed && (
        <span class="muted small" data-testid="counts-unfiltered">
          (counts of all runs: the name and tag filters do not apply to them)
        </span>
      )}
    </div>
  );
}

function Row({ r, now }: { r: RunListEntry; now: number }) {
  const took = r.startedAt
    ? (r.endedAt ? Date.parse(r.endedAt) : now) - Date.parse(r.startedAt)
    : null;
  return (
    <tr data-run-id={r.runId}>
      <td>
        <StatusBadge status={r.status} />
      </td>
      <td>
        <a href={runPath(r.runId)}>{r.name ?? <span class="muted">unnamed</span>}</a>
        <div class="muted mono small">{r.runId}</div>
      </td>
      <td>{ago(r.createdAt, now)}</td>
      <td>{duration(took)}</td>
      <td>
        <div class="progress small" title={`${r.progress.completedSteps}/${r.progress.totalSteps}`}>
          <div class="progress-fill" style={{ width: `${r.progress.percentage}%` }} />
        </div>
        <span class="small">{`${r.progress.completedSteps}/${r.progress.totalSteps}`}</span>
        {r.summary.failedSteps > 0 && (
          <span class="small bad">{` · ${r.summary.failedSteps} failed`}</span>
        )}
      </td>
      <td>
        {Object.entries(r.tags ?? {}).map(([k, v]) => (
          <span class="tag" key={k}>{`${k}:${v}`}</span>
        ))}
      </td>
    </tr>
  );
}

/** The filters as typed (kept in the address) and, 250 ms behind them, as the list applies them. */
function useFilters() {
  // The address holds the filters: Back from a run, or a reload, shows the same list.
  const [filters, setFilters] = useState<Filters>(() => filtersOfQuery(location.search));
  const [applied, setApplied] = useState<Filters>(filters);
  useEffect(() => {
    // Replaced, not pushed: each keystroke is no page of its own to go Back to.
    history.replaceState(history.state, "", `${location.pathname}${queryOfFilters(filters)}`);
  }, [filters]);
  // Typing settles for a moment before the list is asked again.
  useEffect(() => {
    const t = setTimeout(() => setApplied(filters), 250);
    return () => clearTimeout(t);
  }, [filters]);
  return { filters, setFilters, applied };
}

export function RunsPage() {
  const { filters, setFilters, applied } = useFilters();
  const { runs, next, stats, unavailable, error, refreshing, more } = useRunList(applied);
  if (unavailable) return <ListingUnavailable />;
  return (
    <div class="page" data-refreshing={String(refreshing)}>
      <div class="page-head">
        <h1>Runs</h1>
        <OpenById />
      </div>
      {stats && (
        <Counts
          stats={stats}
          active={filters.status}
          narrowed={applied.name !== "" || applied.tags.trim() !== ""}
          pick={(status) => setFilters({ ...filters, status })}
        />
      )}
      <FilterForm filters={filters} onChange={setFilters} />
      {error && <p class="message">{error}</p>}
      {runs === null ? (
        !error && <p class="muted">Loading…</p>
      ) : runs.length === 0 ? (
        <p class="muted" data-testid="no-runs">
          No runs match.
        </p>
      ) : (
        <RunsTable runs={runs} now={Date.now()} />
      )}
      {next && (
        <button type="button" onClick={more}>
          Load more
        </button>
      )}
    </div>
  );
}

function ListingUnavailable() {
  return (
    <div class="page">
      <h1>Runs</h1>
      <p class="notice" data-testid="listing-unavailable">
        Listing is not available on this server (it needs <code>GET /v1/runs</code>). Open a run by
        its id:
      </p>
      <OpenById />
      <p>
        Or write a plan in the <a href="/playground">playground</a> and submit it.
      </p>
    </div>
  );
}

function FilterForm({ filters, onChange }: { filters: Filters; onChange: (f: Filters) => void }) {
  const set = (k: keyof Filters) => (e: Event) =>
    onChange({ ...filters, [k]: (e.target as HTMLInputElement).value });
  return (
    <form class="filters" onSubmit={(e) => e.preventDefault()}>
      <select name="status" value={filters.status} onChange={set("status")}>
        <option value="">any status</option>
        {RUN_STATUSES.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
      <input name="name" placeholder="name (exact)" value={filters.name} onInput={set("name")} />
      <input
        name="tag"
        placeholder='tags key:value … (key:"a value" with spaces)'
        value={filters.tags}
        onInput={set("tags")}
      />
    </form>
  );
}

function RunsTable({ runs, now }: { runs: readonly RunListEntry[]; now: number }) {
  return (
    <div class="table-scroll">
      <table class="runs">
        <thead>
          <tr>
            <th>status</th>
            <th>name</th>
            <th>created</th>
            <th>took</th>
            <th>progress</th>
            <th>tags</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <Row key={r.runId} r={r} now={now} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

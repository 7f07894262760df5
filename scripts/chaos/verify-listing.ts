/**
 * The listing against the runs (SPEC 8.2: the listing never loses a run, whatever crashes):
 * after the drain, paging through `GET /v1/runs` must show every run the chaos run created,
 * exactly once, with the status its own `GET` shows. A status change may take a moment to
 * reach the listing (2 s at most), so the check is repeated for up to `graceMs`; what still
 * differs then is reported.
 */
import type { Api, RunView } from "./api.ts";
import type { Finding } from "./report.ts";
import type { Submitted } from "./submissions.ts";
import { sleep } from "./util.ts";

interface ListedRun {
  runId: string;
  status: string;
}

/** Every run of the listing, page by page (200 a page), in listing order. */
async function listAll(api: Api): Promise<ListedRun[] | Finding> {
  const runs: ListedRun[] = [];
  let cursor: string | null = null;
  do {
    const query: string = cursor === null ? "" : `&cursor=${cursor}`;
    const page = await api.get<{ runs: ListedRun[]; next: string | null }>(
      `/v1/runs?limit=200${query}`,
    );
    if (page.status !== 200) return { runId: "-", problem: `GET /v1/runs answered ${page.status}` };
    runs.push(...page.body.runs);
    cursor = page.body.next;
  } while (cursor !== null);
  return runs;
}

function compare(listed: ListedRun[], submitted: Submitted[], views: Map<string, RunView>) {
  const findings: Finding[] = [];
  const byId = new Map<string, ListedRun[]>();
  for (const run of listed) byId.set(run.runId, [...(byId.get(run.runId) ?? []), run]);
  for (const { runId } of submitted) {
    const entries = byId.get(runId) ?? [];
    const status = views.get(runId)?.status;
    if (entries.length === 0) findings.push({ runId, problem: "missing from the listing" });
    else if (entries.length > 1)
      findings.push({ runId, problem: `listed ${entries.length} times` });
    else if (status !== undefined && entries[0]!.status !== status)
      findings.push({ runId, problem: `listed as ${entries[0]!.status}, but it is ${status}` });
  }
  const known = new Set(submitted.map((s) => s.runId));
  for (const runId of byId.keys())
    if (!known.has(runId)) findings.push({ runId, problem: "listed, but never submitted" });
  return findings;
}

export async function verifyListing(
  api: Api,
  submitted: Submitted[],
  views: Map<string, RunView>,
  graceMs = 10_000,
): Promise<Finding[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const listed = await listAll(api);
    const findings = Array.isArray(listed) ? compare(listed, submitted, views) : [listed];
    if (findings.length === 0 || Date.now() > deadline) return findings;
    await sleep(500);
  }
}

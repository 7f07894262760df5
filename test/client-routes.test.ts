/**
 * The client's side of the routes of SPEC 6.1 (summary view, ETag and 304, long poll, step
 * pages) and SPEC 8 (listing, stats, deletion):
 *  - "queries": the client's requests parse with the schemas those routes validate with
 *    (src/api/schemas/);
 *  - "SPEC 8 routes" and "SPEC 6.1 routes": end to end against the Worker.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  listRunsQuerySchema,
  runListSchema,
  runQuerySchema,
  statsSchema,
  stepsPageSchema,
  stepsQuerySchema,
} from "../src/api/schemas";
import { EdgestepApiError, EdgestepClient } from "../src/client/index.ts";
import { drive, unique } from "./helpers";

/** A client whose requests are recorded and answered with `answer`. */
function recording(answer: unknown, status = 200) {
  const requests: Request[] = [];
  const client = new EdgestepClient({
    url: "http://edgestep.test",
    fetch: async (request) => {
      requests.push(request);
      return status === 204 || status === 304
        ? new Response(null, { status })
        : Response.json(answer, { status, headers: { etag: '"v1"' } });
    },
  });
  return { client, requests };
}

/** The query as a route reads it: every parameter once, `tag` as its repeated values. */
const queryOf = (request: Request) => {
  const params = new URL(request.url).searchParams;
  const tags = params.getAll("tag");
  return { ...Object.fromEntries(params), ...(tags.length > 0 && { tag: tags }) };
};

describe("queries the pending routes will parse", () => {
  it("listRuns sends filters that listRunsQuerySchema parses to what was asked", async () => {
    const { client, requests } = recording({ runs: [], next: null });
    await client.listRuns({
      status: ["failed", "partial"],
      name: "nightly",
      tag: { team: "payments", env: "prod:eu" },
      createdAfter: new Date("2026-11-01T00:00:00Z"),
      createdBefore: "2026-11-02",
      limit: 10,
      cursor: "c1",
    });
    const request = requests[0]!;
    expect(request.method).toBe("GET");
    expect(new URL(request.url).pathname).toBe("/v1/runs");
    expect(listRunsQuerySchema.parse(queryOf(request))).toEqual({
      status: ["failed", "partial"],
      name: "nightly",
      tag: [
        { key: "team", value: "payments" },
        { key: "env", value: "prod:eu" },
      ],
      createdAfter: Date.parse("2026-11-01T00:00:00Z"),
      createdBefore: Date.parse("2026-11-02T00:00:00Z"),
      limit: 10,
      cursor: "c1",
    });
  });

  it("the listing schema names a bad parameter, not an index inside it", () => {
    const bad = listRunsQuerySchema.safeParse({ status: "failed,bogus", tag: ["no-colon"] });
    expect(bad.success).toBe(false);
    const paths = bad.error!.issues.map((i) => i.path.join("."));
    expect(paths.sort()).toEqual(["status", "tag"]);
    expect(listRunsQuerySchema.safeParse({ limit: "201" }).success).toBe(false);
    expect(listRunsQuerySchema.safeParse({ sort: "x" }).success).toBe(false);
    expect(listRunsQuerySchema.parse({})).toEqual({ limit: 50 });
  });

  it("iterateRuns follows next until it is null", async () => {
    const pages = [
      { runs: [{ runId: "r1" }], next: "c2" },
      { runs: [{ runId: "r2" }], next: null },
    ];
    const cursors: (string | null)[] = [];
    const client = new EdgestepClient({
      url: "http://edgestep.test",
      fetch: async (request) => {
        cursors.push(new URL(request.url).searchParams.get("cursor"));
        return Response.json(pages[cursors.length - 1]);
      },
    });
    const ids: string[] = [];
    for await (const run of client.iterateRuns({ status: "failed" })) ids.push(run.runId);
    expect(ids).toEqual(["r1", "r2"]);
    expect(cursors).toEqual([null, "c2"]);
  });

  it("listSteps, getRunSummary and pollRun send what the 6.1 schemas parse", async () => {
    const { client, requests } = recording({ steps: [], next: null });
    await client.listSteps("run_x", { status: ["failed", "running"], after: 7, limit: 20 });
    expect(stepsQuerySchema.parse(queryOf(requests[0]!))).toEqual({
      status: ["failed", "running"],
      after: 7,
      limit: 20,
    });
    await client.getRunSummary("run_x");
    expect(runQuerySchema.parse(queryOf(requests[1]!))).toEqual({ view: "summary" });
    await client.pollRun("run_x", { view: "summary", wait: 5000, etag: '"v0"' });
    expect(runQuerySchema.parse(queryOf(requests[2]!))).toEqual({ view: "summary", wait: 5000 });
    expect(requests[2]!.headers.get("if-none-match")).toBe('"v0"');
    expect(stepsQuerySchema.safeParse({ status: "done" }).success).toBe(false);
    expect(runQuerySchema.safeParse({ wait: "30001" }).success).toBe(false);
  });

  it("pollRun reports a 304 as unchanged, keeping the ETag", async () => {
    const { client } = recording(undefined, 304);
    expect(await client.pollRun("run_x", { etag: '"v1"', wait: 10 })).toEqual({
      changed: false,
      etag: '"v1"',
    });
  });

  it("deleteRun sends DELETE and resolves on 204", async () => {
    const { client, requests } = recording(undefined, 204);
    await expect(client.deleteRun("run_x")).resolves.toBeUndefined();
    expect(requests[0]!.method).toBe("DELETE");
    expect(new URL(requests[0]!.url).pathname).toBe("/v1/runs/run_x");
  });
});

const worker = new EdgestepClient({
  url: "http://edgestep.test",
  fetch: (request) => exports.default.fetch(request),
});
const plan = (tags: Record<string, string>) => ({
  name: "pending-routes",
  tags,
  steps: [{ id: "a", tool: "pass", params: { value: 1 } }],
});

describe("SPEC 8 routes through the client", () => {
  it("lists a tagged run, counts it, deletes it, and then it is gone", async () => {
    const tag = unique("client-listing");
    const { runId } = await worker.createRun(plan({ suite: tag }) as never);
    await drive(runId);
    const page = await worker.listRuns({ tag: { suite: tag } });
    expect(runListSchema.parse(page).runs.map((r) => r.runId)).toEqual([runId]);
    const stats = statsSchema.parse(await worker.getStats());
    expect(stats.total).toBeGreaterThan(0);
    await worker.deleteRun(runId);
    expect((await worker.listRuns({ tag: { suite: tag } })).runs).toEqual([]);
    const gone = await worker.getRun(runId).catch((e: unknown) => e);
    expect(gone).toBeInstanceOf(EdgestepApiError);
    expect(gone).toMatchObject({ code: "not_found" });
  });

  it("a run that is not final cannot be deleted (409 conflict)", async () => {
    const { runId } = await worker.createRun({ steps: [{ id: "gate", tool: "approval" }] });
    const err = await worker.deleteRun(runId).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: "conflict", status: 409 });
  });
});

describe("SPEC 6.1 routes through the client", () => {
  it("the summary has no steps; the step pages filter by status", async () => {
    const { runId } = await worker.createRun({
      steps: [
        { id: "a", tool: "pass" },
        { id: "b", tool: "approval" },
      ],
    });
    await drive(runId);
    expect(await worker.getRunSummary(runId)).not.toHaveProperty("steps");
    const page = stepsPageSchema.parse(await worker.listSteps(runId, { status: "waiting" }));
    expect(page.steps.map((s) => s.id)).toEqual(["b"]);
  });

  it("pollRun answers 304 while the ETag is current, and the change once there is one", async () => {
    const { runId } = await worker.createRun({ steps: [{ id: "gate", tool: "approval" }] });
    await drive(runId);
    const first = await worker.pollRun(runId, { view: "summary" });
    expect(first.changed).toBe(true);
    const same = await worker.pollRun(runId, { view: "summary", etag: first.etag, wait: 50 });
    expect(same).toEqual({ changed: false, etag: first.etag });
    const changed = worker.pollRun(runId, { view: "summary", etag: first.etag, wait: 10_000 });
    await worker.cancelRun(runId);
    const answer = await changed;
    expect(answer.changed && answer.run.status).toBe("cancelled");
  });
});

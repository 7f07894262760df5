/**
 * Finding runs (SPEC 8.1, 8.2): tags on plans and in the status; `GET /v1/runs` with each
 * filter and their combination, newest first, cursor paging (also while runs are created
 * and change status); bad query parameters. Each test lists by a tag of its own (see
 * listing-helpers.ts).
 */
import { describe, expect, it } from "vitest";
import { api, drive, post, status, submit, unique } from "./helpers";
import {
  created,
  del,
  failingPlan,
  gatedPlan,
  keyApi,
  list,
  listAll,
  listedIds,
  passPlan,
  queryString,
  stats,
  testTag,
} from "./listing-helpers";

/** Listing order: createdAt descending, then runId descending. */
function expectNewestFirst(runs: any[]): void {
  for (let i = 1; i < runs.length; i++) {
    const [a, b] = [runs[i - 1], runs[i]];
    const newer = a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.runId > b.runId);
    expect(newer, `${a.runId} ${a.createdAt} before ${b.runId} ${b.createdAt}`).toBe(true);
  }
}

describe("tags (SPEC 8.1)", () => {
  it("are shown in the status, both views, and are {} when the plan has none", async () => {
    const tagged = await created(passPlan({ tags: { team: "data", env: "prod:eu" } }));
    const full = await status(tagged);
    expect(full.tags).toEqual({ team: "data", env: "prod:eu" });
    const summary = await (await api(`/v1/runs/${tagged}?view=summary`)).json();
    expect((summary as any).tags).toEqual({ team: "data", env: "prod:eu" });
    expect((await status(await created(passPlan()))).tags).toEqual({});
  });

  it("are validated with the path of each problem, and nothing is stored", async () => {
    const { tag, tags } = testTag();
    const keys = (n: number) =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, "v"]));
    const cases: [unknown, string][] = [
      [{ ...tags, team: "x".repeat(257) }, "tags.team"],
      [{ ...tags, "bad key": "v" }, "tags.bad key"],
      [{ ...tags, ["k".repeat(65)]: "v" }, `tags.${"k".repeat(65)}`],
      [{ ...tags, n: 1 }, "tags.n"],
      [{ ...tags, ...keys(20) }, "tags"],
      [["a"], "tags"],
    ];
    for (const [bad, path] of cases) {
      const { res, body } = await submit(passPlan({ tags: bad }));
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(body.error.code).toBe("invalid_plan");
      expect(body.error.issues.map((i: any) => i.path)).toEqual([path]);
    }
    expect(await listedIds({ tag })).toEqual([]);
    // at the limits: 20 tags, a value of 256 characters
    const most = { ...tags, ...keys(18), long: "x".repeat(256) };
    expect((await status(await created(passPlan({ tags: most })))).tags).toEqual(most);
  });

  it("a value of 256 characters outside the BMP (512 UTF-16 units) is found by its own filter", async () => {
    const { tag, tags } = testTag("wide");
    const wide = { ...tags, emoji: "😀".repeat(256) };
    const runId = await created(passPlan({ tags: wide }));
    expect(await listedIds({ tag: [tag, `emoji:${wide.emoji}`] })).toEqual([runId]);
  });

  it("keep a key named __proto__ as data, in the status and in listings", async () => {
    const { tag, tags } = testTag("proto");
    const plan = `{"tags":{"__proto__":"polluted","test":"${tags.test}"},"steps":[{"tool":"pass"}]}`;
    const runId = await created(plan);
    const s = await status(runId);
    expect(Object.keys(s.tags).sort()).toEqual(["__proto__", "test"]);
    expect(Object.getOwnPropertyDescriptor(s.tags, "__proto__")?.value).toBe("polluted");
    const [entry] = (await list({ tag: "__proto__:polluted" })).runs.filter(
      (r) => r.runId === runId,
    );
    expect(Object.getOwnPropertyDescriptor(entry.tags, "__proto__")?.value).toBe("polluted");
    expect((await list({ tag })).runs.map((r) => r.runId)).toEqual([runId]);
  });
});

describe("GET /v1/runs (SPEC 8.2)", () => {
  it("lists a new run by the time its POST has answered, with its entry", async () => {
    const { tag, tags } = testTag();
    const runId = await created(gatedPlan({ name: "nightly", tags }));
    const { runs, next } = await list({ tag });
    expect(next).toBeNull();
    expect(runs).toEqual([
      {
        runId,
        name: "nightly",
        status: "waiting",
        createdAt: expect.any(String),
        startedAt: null,
        endedAt: null,
        tags,
        summary: {
          totalSteps: 1,
          successfulSteps: 0,
          failedSteps: 0,
          skippedSteps: 0,
          cancelledSteps: 0,
        },
        progress: { completedSteps: 0, totalSteps: 1, percentage: 0 },
      },
    ]);
    expect(runs[0].createdAt).toBe((await status(runId)).createdAt);
  });

  it("shows a run's status, times and progress once it changed", async () => {
    const { tag, tags } = testTag();
    const runId = await created(passPlan({ tags }));
    const s = await drive(runId);
    expect(s.status).toBe("completed");
    const [entry] = (await list({ tag })).runs;
    expect(entry).toMatchObject({
      runId,
      status: "completed",
      startedAt: s.startedAt,
      endedAt: s.endedAt,
      summary: s.summary,
      progress: { completedSteps: 1, totalSteps: 1, percentage: 100 },
    });
  });

  it("lists newest first, then by run id", async () => {
    const { tag, tags } = testTag();
    const ids = await Promise.all(Array.from({ length: 12 }, () => created(gatedPlan({ tags }))));
    const runs = await listAll({ tag });
    expect(runs.map((r) => r.runId).sort()).toEqual([...ids].sort());
    expectNewestFirst(runs);
  });

  it("filters by status (a comma list)", async () => {
    const { tag, tags } = testTag();
    const waiting = await created(gatedPlan({ tags }));
    const completed = await created(passPlan({ tags }));
    const failed = await created(failingPlan({ tags }));
    const cancelled = await created(gatedPlan({ tags }));
    expect((await drive(completed)).status).toBe("completed");
    expect((await drive(failed)).status).toBe("failed");
    expect((await post(`/v1/runs/${cancelled}/cancel`)).res.status).toBe(200);
    expect(await listedIds({ tag, status: "waiting" })).toEqual([waiting]);
    expect(await listedIds({ tag, status: "completed" })).toEqual([completed]);
    expect((await listedIds({ tag, status: "failed,cancelled" })).sort()).toEqual(
      [failed, cancelled].sort(),
    );
    expect(await listedIds({ tag, status: "running,paused" })).toEqual([]);
  });

  it("filters by name (exact match)", async () => {
    const { tag, tags } = testTag();
    const a = await created(gatedPlan({ name: "report", tags }));
    await created(gatedPlan({ name: "report-weekly", tags }));
    await created(gatedPlan({ name: "Report", tags }));
    await created(gatedPlan({ tags }));
    expect(await listedIds({ tag, name: "report" })).toEqual([a]);
  });

  it("filters by tags: every tag given must match, and a value may hold colons", async () => {
    const { tag, tags } = testTag();
    const both = await created(gatedPlan({ tags: { ...tags, team: "data", env: "prod:eu" } }));
    const teamOnly = await created(gatedPlan({ tags: { ...tags, team: "data", env: "dev" } }));
    await created(gatedPlan({ tags: { ...tags, team: "web", env: "prod:eu" } }));
    expect(await listedIds({ tag: [tag, "env:prod:eu", "team:data"] })).toEqual([both]);
    expect((await listedIds({ tag: [tag, "team:data"] })).sort()).toEqual([both, teamOnly].sort());
    expect(await listedIds({ tag: ["team:data", "env:dev", tag] })).toEqual([teamOnly]);
    expect(await listedIds({ tag: [tag, "team:nobody"] })).toEqual([]);
    expect(await listedIds({ tag: [tag, "env:prod"] })).toEqual([]);
  });

  it("filters by creation time, both bounds exclusive", async () => {
    const { tag, tags } = testTag();
    for (let i = 0; i < 4; i++) {
      await created(gatedPlan({ tags }));
      await scheduler.wait(3); // distinct creation times
    }
    const all = await listAll({ tag });
    expect(all).toHaveLength(4);
    const times = all.map((r) => r.createdAt);
    expect(await listedIds({ tag, createdAfter: times[2] })).toEqual(
      all.filter((r) => r.createdAt > times[2]).map((r) => r.runId),
    );
    expect(await listedIds({ tag, createdBefore: times[1] })).toEqual(
      all.filter((r) => r.createdAt < times[1]).map((r) => r.runId),
    );
    const between = await listedIds({ tag, createdAfter: times[3], createdBefore: times[0] });
    expect(between).toEqual(
      all.filter((r) => r.createdAt > times[3] && r.createdAt < times[0]).map((r) => r.runId),
    );
    expect(between.length).toBeGreaterThan(0);
    // a date without a time is midnight UTC: every run of this test was created after it
    const today = times[0].slice(0, 10);
    expect(await listedIds({ tag, createdAfter: today })).toHaveLength(4);
    expect(await listedIds({ tag, createdBefore: today })).toEqual([]);
    // seconds may be left out, as ISO-8601 allows
    expect(await listedIds({ tag, createdAfter: `${today}T00:00Z` })).toHaveLength(4);
    // a fraction finer than a millisecond counts: what was created at .243 is before .2431
    const [newest] = times as [string];
    const finer = newest.replace(/Z$/, "1Z");
    expect(await listedIds({ tag, createdBefore: finer })).toContain(all[0]!.runId);
    expect(await listedIds({ tag, createdAfter: finer })).not.toContain(all[0]!.runId);
    // a "+" sent unencoded arrives as a space: read as the zone's "+" it was
    const plus = new Date(Date.parse(newest) + 3_600_001).toISOString().replace("Z", " 01:00");
    expect(await listedIds({ tag, createdBefore: plus })).toContain(all[0]!.runId);
  });

  it("combines filters: status, name, tags and creation time together", async () => {
    const { tag, tags } = testTag();
    const before = new Date(Date.now() - 60_000).toISOString();
    const match = await created(failingPlan({ name: "etl", tags: { ...tags, team: "data" } }));
    const otherStatus = await created(gatedPlan({ name: "etl", tags: { ...tags, team: "data" } }));
    const otherName = await created(failingPlan({ name: "elt", tags: { ...tags, team: "data" } }));
    const otherTeam = await created(failingPlan({ name: "etl", tags: { ...tags, team: "web" } }));
    for (const id of [match, otherName, otherTeam]) expect((await drive(id)).status).toBe("failed");
    const query = { tag: [tag, "team:data"], status: "failed,partial", name: "etl" };
    expect(await listedIds({ ...query, createdAfter: before })).toEqual([match]);
    expect(await listedIds({ ...query, createdBefore: before })).toEqual([]);
    expect(await listedIds({ tag, name: "etl" })).toHaveLength(3);
    expect(otherStatus).toBeTruthy();
  });

  it("pages with limit and an opaque cursor, the last page's next null", async () => {
    const { tag, tags } = testTag();
    const ids = await Promise.all(Array.from({ length: 5 }, () => created(gatedPlan({ tags }))));
    const first = await list({ tag, limit: 2 });
    expect(first.runs).toHaveLength(2);
    expect(first.next).toMatch(/^[A-Za-z0-9_-]+$/);
    const second = await list({ tag, limit: 2, cursor: first.next! });
    const third = await list({ tag, limit: 2, cursor: second.next! });
    expect(third.runs).toHaveLength(1);
    expect(third.next).toBeNull();
    const paged = [...first.runs, ...second.runs, ...third.runs];
    expect(paged.map((r) => r.runId).sort()).toEqual([...ids].sort());
    expectNewestFirst(paged);
    // exactly a page's worth: the last full page says there is no more
    expect((await list({ tag, limit: 5 })).next).toBeNull();
    expect((await list({ tag })).runs).toHaveLength(5); // default limit 50
  });

  it("pages through 500 runs while runs are created and change status: each at most once, none missing", async () => {
    const { tag, tags } = testTag("page500");
    const original: string[] = [];
    for (let batch = 0; batch < 25; batch++) {
      original.push(
        ...(await Promise.all(Array.from({ length: 20 }, () => created(gatedPlan({ tags }))))),
      );
    }
    const seen: string[] = [];
    const added: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const res: { runs: any[]; next: string | null } = await list({
        tag,
        limit: 37,
        ...(cursor !== null && { cursor }),
      });
      seen.push(...res.runs.map((r) => r.runId));
      cursor = res.next;
      // meanwhile: new runs, and runs of this and later pages change status
      added.push(await created(gatedPlan({ tags })), await created(gatedPlan({ tags })));
      const toCancel = original[(page * 41 + 13) % original.length]!;
      await post(`/v1/runs/${toCancel}/cancel`);
      const toApprove = original[(page * 53 + 7) % original.length]!;
      await post(`/v1/runs/${toApprove}/approve`, { approved: true });
      page++;
    } while (cursor !== null);
    expect(new Set(seen).size).toBe(seen.length); // at most once
    const missing = original.filter((id) => !seen.includes(id));
    expect(missing).toEqual([]); // every run created before the first page
    expect(seen.filter((id) => !original.includes(id) && !added.includes(id))).toEqual([]);
    expect(page).toBeGreaterThanOrEqual(14);
  }, 120_000);
});

describe("each API key finds, counts and deletes only its own runs", () => {
  it("listing, stats and delete are scoped to the key; another key's run is a 404", async () => {
    const [a, b] = [keyApi(unique("key-a")), keyApi(unique("key-b"))];
    const aRuns = [await created(gatedPlan(), {}, a), await created(gatedPlan(), {}, a)];
    const bRun = await created(gatedPlan({ name: "b" }), {}, b);
    expect((await a(`/v1/runs/${aRuns[1]}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await listedIds({}, a)).sort()).toEqual([...aRuns].sort());
    expect(await listedIds({}, b)).toEqual([bRun]);
    expect(await stats(a)).toEqual({ total: 2, byStatus: { waiting: 1, cancelled: 1 } });
    expect(await stats(b)).toEqual({ total: 1, byStatus: { waiting: 1 } });
    // b can neither see nor delete a's run; a can delete it
    expect((await b(`/v1/runs/${aRuns[1]}`)).status).toBe(404);
    expect(await del(aRuns[1]!, b)).toEqual({ status: 404, code: "not_found" });
    expect(await listedIds({ status: "cancelled" }, a)).toEqual([aRuns[1]]);
    expect((await del(aRuns[1]!, a)).status).toBe(204);
    expect(await stats(a)).toEqual({ total: 1, byStatus: { waiting: 1 } });
    expect(await stats(b)).toEqual({ total: 1, byStatus: { waiting: 1 } });
    expect(await listedIds({}, b)).toEqual([bRun]);
  });

  it("the same Idempotency-Key under two keys names two runs", async () => {
    const [a, b] = [keyApi(unique("key-a")), keyApi(unique("key-b"))];
    const headers = { "idempotency-key": "nightly-report" };
    const ra = await created(gatedPlan(), headers, a);
    const rb = await created(gatedPlan(), headers, b);
    expect(ra).not.toBe(rb);
    expect(await listedIds({}, a)).toEqual([ra]);
    expect(await listedIds({}, b)).toEqual([rb]);
  });
});

describe("GET /v1/runs: bad query parameters are a 400 naming the parameter", () => {
  const cases: [string, string][] = [
    ["status=bogus", "query.status"],
    ["status=failed,bogus", "query.status"],
    ["status=", "query.status"],
    ["limit=0", "query.limit"],
    ["limit=201", "query.limit"],
    ["limit=ten", "query.limit"],
    ["limit=1.5", "query.limit"],
    ["createdAfter=yesterday", "query.createdAfter"],
    ["createdBefore=2026-13-01", "query.createdBefore"],
    ["createdAfter=2026-11-27T12:00:00", "query.createdAfter"],
    ["tag=nocolon", "query.tag"],
    ["tag=bad%20key:v", "query.tag"],
    ["cursor=not-a-cursor", "query.cursor"],
    [`cursor=${btoa("[1,2]")}`, "query.cursor"],
    ["name=", "query.name"],
    ["sort=asc", "query.sort"],
    ["limit=1&limit=500", "query.limit"],
    ["status=completed&status=failed", "query.status"],
  ];
  for (const [query, path] of cases) {
    it(`${query} → ${path}`, async () => {
      const res = await api(`/v1/runs?${query}`);
      const body = (await res.json()) as any;
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(body.error.code).toBe("invalid_request");
      expect(body.error.issues.map((i: any) => i.path)).toContain(path);
    });
  }

  it("a time without its zone says a zone is needed, and how to write + in a URL", async () => {
    const res = await api("/v1/runs?createdAfter=2026-11-27T12:00:00");
    const body = (await res.json()) as any;
    expect(body.error.issues).toEqual([
      {
        path: "query.createdAfter",
        message: expect.stringContaining("a date and time with its zone"),
      },
    ]);
    expect(body.error.issues[0].message).toContain("%2B01:00");
  });

  it("GET /v1/stats takes no parameter: a filter it would ignore is a 400 naming it", async () => {
    const res = await api("/v1/stats?status=failed");
    const body = (await res.json()) as any;
    expect(res.status).toBe(400);
    expect(body.error.issues.map((i: any) => i.path)).toEqual(["query.status"]);
  });

  it("a good query of every parameter is a 200", async () => {
    const q = queryString({
      status: "failed,partial",
      name: "x",
      tag: ["a:b", "c:d:e"],
      createdAfter: "2026-01-01",
      createdBefore: "2036-01-01T00:00:00Z",
      limit: 200,
    });
    expect((await api(`/v1/runs${q}`)).status).toBe(200);
  });
});

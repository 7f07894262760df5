/**
 * The floor of `npm run bench` (BENCH_FLOOR=1): a Durable Object that does only what any
 * durable executor must do for a run under `wrangler dev`, with none of edgestep's engine,
 * to show how much of a figure is the platform's and how much is edgestep's.
 *
 * Per run: a new object with its own SQLite tables, the plan stored, the run's entry in its
 * owner's index before the `202` and again at its end (SPEC 8.2), an alarm a lease ahead (so a
 * crash resumes the run) and cleared at the end, a step's start committed before its call
 * (SPEC 5.5) and its result after it, and a status read of one row. Not done: validation,
 * templates, retries, events, counters, ETags, webhooks; steps run one after another, in the
 * plan's order (enough for the plans of (1) and (5): chains). A step with `params.url` is a GET
 * of it, any other step passes.
 *
 *   POST /v1/runs       a plan -> 202 { runId, status }
 *   GET  /v1/runs/:id   { runId, status, createdAt, startedAt, endedAt, progress }
 *   GET  /healthz       200
 *
 * Plain JavaScript on purpose, like bench/workflows/worker.js: outside the Node typecheck.
 */
import { DurableObject } from "cloudflare:workers";

const LEASE_MS = 10_000;

export class FloorIndex extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, status TEXT)");
  }

  upsert(id, status) {
    this.ctx.storage.sql.exec(
      "INSERT INTO runs VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET status = excluded.status",
      id,
      status,
    );
  }
}

export class FloorRun extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec(`
      CREATE TABLE IF NOT EXISTS run (k INTEGER PRIMARY KEY, id TEXT, plan TEXT, status TEXT,
        created_at INTEGER, started_at INTEGER, ended_at INTEGER, done INTEGER, total INTEGER);
      CREATE TABLE IF NOT EXISTS steps (i INTEGER PRIMARY KEY, status TEXT, output TEXT)`);
    /** True while this instance runs the steps. */
    this.live = false;
  }

  async start(id, planText) {
    const plan = JSON.parse(planText);
    const sql = this.ctx.storage.sql;
    const now = Date.now();
    sql.exec(
      "INSERT INTO run VALUES (1, ?, ?, 'running', ?, ?, NULL, 0, ?)",
      id,
      planText,
      now,
      now,
      plan.steps.length,
    );
    for (let i = 0; i < plan.steps.length; i++)
      sql.exec("INSERT INTO steps VALUES (?, 'pending', NULL)", i);
    await this.ctx.storage.setAlarm(now + LEASE_MS);
    void this.steps(plan, 0);
    await this.index(id, "running");
  }

  /** The lease ran out: renewed while the steps run here; after a crash, the run goes on from its first step not done. */
  async alarm() {
    const run = this.row();
    if (!run || run.status !== "running") return;
    await this.ctx.storage.setAlarm(Date.now() + LEASE_MS);
    if (this.live) return;
    await this.steps(JSON.parse(run.plan), run.done);
  }

  async steps(plan, from) {
    this.live = true;
    const sql = this.ctx.storage.sql;
    for (let i = from; i < plan.steps.length; i++) {
      sql.exec("UPDATE steps SET status = 'running' WHERE i = ?", i);
      const url = plan.steps[i].params?.url;
      const output = typeof url === "string" ? await (await fetch(url)).text() : "null";
      sql.exec("UPDATE steps SET status = 'succeeded', output = ? WHERE i = ?", output, i);
      sql.exec("UPDATE run SET done = done + 1 WHERE k = 1");
    }
    sql.exec("UPDATE run SET status = 'completed', ended_at = ? WHERE k = 1", Date.now());
    await this.ctx.storage.deleteAlarm();
    this.live = false;
    await this.index(this.row().id, "completed");
  }

  index(id, status) {
    return this.env.INDEX.get(this.env.INDEX.idFromName("owner")).upsert(id, status);
  }

  row() {
    return this.ctx.storage.sql.exec("SELECT * FROM run WHERE k = 1").toArray()[0];
  }

  status() {
    const r = this.row();
    const iso = (t) => (t === null ? null : new Date(t).toISOString());
    return {
      runId: r.id,
      status: r.status,
      createdAt: iso(r.created_at),
      startedAt: iso(r.started_at),
      endedAt: iso(r.ended_at),
      progress: { completedSteps: r.done, totalSteps: r.total },
    };
  }
}

export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    if (request.method === "POST" && pathname === "/v1/runs") {
      const id = env.RUNS.newUniqueId();
      await env.RUNS.get(id).start(id.toString(), await request.text());
      return Response.json({ runId: id.toString(), status: "running" }, { status: 202 });
    }
    const read = /^\/v1\/runs\/([0-9a-f]{64})$/.exec(pathname);
    if (read) return Response.json(await env.RUNS.get(env.RUNS.idFromString(read[1])).status());
    if (pathname === "/healthz") return new Response("ok");
    return new Response("not found", { status: 404 });
  },
};

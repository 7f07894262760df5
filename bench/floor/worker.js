/**
 * The floor of `npm run bench` (BENCH_FLOOR=1): a Durable Object that does only what any
 * durable executor must do for a run under `wrangler dev`, with none of edgestep's engine,
 * to show how much of a figure is the platform's and how much is edgestep's.
 *
 * Per run: a new object with its own SQLite tables, the plan stored, the run's entry in its
 * owner's index before the `202` and again at its end (SPEC 8.2), an alarm a lease ahead (so a
 * crash resumes the run) and cleared at the end, a step's start committed before its call
 * (SPEC 5.5) and its result after it, and a status read of one row. Not done: validation,
 * retries, events, counters, ETags, webhooks, and templates beyond the order they imply: a
 * step runs once its `dependsOn` and the steps its params name (`${step[k]...}`) have, at most
 * `config.maxParallel` at a time, which is enough for the plans of (1)–(5). A step with
 * `params.url` is a GET of it, any other step passes.
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
    void this.steps(plan);
    await this.index(id, "running");
  }

  /** The lease ran out: renewed while the steps run here; after a crash, the run goes on from its first step not done. */
  async alarm() {
    const run = this.row();
    if (!run || run.status !== "running") return;
    await this.ctx.storage.setAlarm(Date.now() + LEASE_MS);
    if (this.live) return;
    await this.steps(JSON.parse(run.plan));
  }

  /**
   * Runs every step not yet done, each once its dependencies are, at most `config.maxParallel`
   * calls at a time. A step without a URL passes at once, in the same turn (a chain of them is
   * one commit, as it was when the floor ran only chains).
   */
  async steps(plan) {
    this.live = true;
    const sql = this.ctx.storage.sql;
    const n = plan.steps.length;
    const deps = dependencies(plan);
    const done = sql
      .exec("SELECT status FROM steps ORDER BY i")
      .toArray()
      .map((r) => r.status === "succeeded");
    const started = [...done];
    const max = plan.config?.maxParallel ?? n;
    let inFlight = 0;
    let left = done.filter((d) => !d).length;
    const finish = (i, output) => {
      sql.exec("UPDATE steps SET status = 'succeeded', output = ? WHERE i = ?", output, i);
      sql.exec("UPDATE run SET done = done + 1 WHERE k = 1");
      done[i] = true;
      left--;
    };
    await new Promise((resolve) => {
      const pump = () => {
        for (let i = 0; i < n && inFlight < max; i++) {
          if (started[i] || !deps[i].every((d) => done[d])) continue;
          started[i] = true;
          sql.exec("UPDATE steps SET status = 'running' WHERE i = ?", i);
          const url = plan.steps[i].params?.url;
          if (typeof url !== "string") {
            finish(i, "null");
            continue;
          }
          inFlight++;
          void fetch(url)
            .then((r) => r.text())
            .then((output) => {
              inFlight--;
              finish(i, output);
              pump();
            });
        }
        if (left === 0) resolve();
      };
      pump();
    });
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

/** Each step's dependencies, by index: its `dependsOn` and the steps its params name (`${step[k]...}`). */
function dependencies(plan) {
  const index = new Map(plan.steps.map((s, i) => [s.id, i]));
  return plan.steps.map((s) => {
    const named = [...JSON.stringify(s.params ?? {}).matchAll(/\$\{step\[(\d+)\]/g)];
    return [...(s.dependsOn ?? []).map((id) => index.get(id)), ...named.map((m) => Number(m[1]))];
  });
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

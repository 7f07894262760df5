/**
 * `npm run bench:engine`'s baselines Worker, run by Miniflare in the same workerd as edgestep:
 * the DAG of HTTP calls of (b) and (c) executed by hand, to show what this machine allows and
 * where edgestep's extra time goes.
 *   POST /dag?via=worker   a plain Worker: fetch() each step once its dependencies are done
 *   POST /dag?via=do       the same inside a SQLite Durable Object that writes the rows
 *                          edgestep writes (step, attempt, event) before and after each call
 *                          (`rows=all`), the same rows with results that arrive together
 *                          written in one transaction (`rows=batched`), or nothing (`rows=none`)
 *   body: { urls: string[], deps: number[][], maxParallel: number } -> { elapsedMs, startedAt }
 *
 * Plain JavaScript on purpose: loaded as-is (no build step), outside the Node typecheck.
 */
import { DurableObject } from "cloudflare:workers";

/** Runs a DAG of GETs as fast as dependencies and `maxParallel` allow. Date.now() advances across I/O. */
async function runDag({ urls, deps, maxParallel }, hooks = {}) {
  const start = Date.now();
  let free = maxParallel;
  const waiting = [];
  const acquire = () =>
    free > 0 ? (free--, Promise.resolve()) : new Promise((r) => waiting.push(r));
  const release = () => (waiting.length > 0 ? waiting.shift()() : free++);
  const done = [];
  for (let i = 0; i < urls.length; i++) {
    done.push(
      Promise.all(deps[i].map((d) => done[d])).then(async () => {
        await acquire();
        try {
          hooks.before?.(i);
          const res = await fetch(urls[i]);
          const text = await res.text();
          await hooks.after?.(i, text);
        } finally {
          release();
        }
      }),
    );
  }
  await Promise.all(done);
  return { elapsedMs: Date.now() - start, startedAt: start };
}

export class DagProbe extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql
      .exec(`CREATE TABLE IF NOT EXISTS steps (idx INTEGER PRIMARY KEY, status TEXT, attempts INTEGER,
      started_at INTEGER, ended_at INTEGER, data TEXT);
    CREATE TABLE IF NOT EXISTS attempts (step_idx INTEGER, attempt INTEGER, started_at INTEGER, ended_at INTEGER,
      PRIMARY KEY (step_idx, attempt));
    CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY AUTOINCREMENT, type TEXT, at INTEGER, step INTEGER);`);
  }

  /**
   * `rows`: "all" writes edgestep's three rows (step, attempt, event) before and after each
   * call, as each event happens; "batched" writes the same rows, but collects the results
   * that arrive together and writes them in one transaction (a timer turn later); "none"
   * writes nothing.
   */
  async run(spec, rows) {
    const sql = this.ctx.storage.sql;
    if (rows === "none") return runDag(spec);
    for (let i = 0; i < spec.urls.length; i++)
      sql.exec("INSERT OR REPLACE INTO steps (idx, status) VALUES (?, 'pending')", i);
    const started = (i) => {
      const now = Date.now();
      sql.exec(
        "UPDATE steps SET status = 'running', attempts = 1, started_at = ? WHERE idx = ?",
        now,
        i,
      );
      sql.exec("INSERT INTO attempts (step_idx, attempt, started_at) VALUES (?, 1, ?)", i, now);
      sql.exec("INSERT INTO events (type, at, step) VALUES ('step_started', ?, ?)", now, i);
    };
    const succeeded = (i, text) => {
      const now = Date.now();
      sql.exec(
        "UPDATE steps SET status = 'succeeded', ended_at = ?, data = ? WHERE idx = ?",
        now,
        text,
        i,
      );
      sql.exec("UPDATE attempts SET ended_at = ? WHERE step_idx = ? AND attempt = 1", now, i);
      sql.exec("INSERT INTO events (type, at, step) VALUES ('step_succeeded', ?, ?)", now, i);
    };
    if (rows !== "batched") return runDag(spec, { before: started, after: succeeded });
    let batch = null;
    return runDag(spec, {
      before: started,
      after: (i, text) => {
        if (!batch) {
          batch = { items: [] };
          batch.done = new Promise((resolve) =>
            setTimeout(() => {
              const { items } = batch;
              batch = null;
              this.ctx.storage.transactionSync(() => items.forEach(([j, t]) => succeeded(j, t)));
              resolve();
            }, 0),
          );
        }
        batch.items.push([i, text]);
        return batch.done;
      },
    });
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/dag" && request.method === "POST") {
      const spec = await request.json();
      if (url.searchParams.get("via") === "do") {
        const stub = env.PROBE.get(env.PROBE.newUniqueId());
        return Response.json(await stub.run(spec, url.searchParams.get("rows") ?? "all"));
      }
      return Response.json(await runDag(spec));
    }
    return new Response("not found", { status: 404 });
  },
};

/**
 * The Cloudflare Workflows side of `npm run bench`, run by its own `wrangler dev`
 * (bench/workflows/wrangler.toml). Each case's work, written as a Workflow the way its docs
 * recommend (one `step.do` per unit of work, so each is checkpointed like an edgestep step):
 *
 *   POST /create  { "kind": "pass", "n": 200 }
 *                   a chain of n steps, each returning the previous step's value (like
 *                   edgestep's `pass` with "${step[i-1].data}")
 *                 { "kind": "dag", "urls": [...], "deps": [[...], ...] }
 *                   one step per URL (a GET, its JSON body as the step's output), started as
 *                   soon as the steps it depends on (by index) have finished
 *                 -> 201 { "id" }
 *   GET  /status?id=<id>   the instance's status() ({ status, output, error })
 *   GET  /healthz          200 once the Worker is up
 *
 * Plain JavaScript on purpose: wrangler bundles it as-is, outside the Node typecheck.
 */
import { WorkflowEntrypoint } from "cloudflare:workers";

export class BenchWorkflow extends WorkflowEntrypoint {
  async run(event, step) {
    const job = event.payload;
    if (job.kind === "pass") {
      let prev = 0;
      for (let i = 0; i < job.n; i++) prev = await step.do(`s${i}`, async () => prev);
      return { steps: job.n, last: prev };
    }
    const done = [];
    for (let i = 0; i < job.urls.length; i++) {
      done.push(
        Promise.all(job.deps[i].map((d) => done[d])).then(() =>
          step.do(`c${i}`, async () => {
            const res = await fetch(job.urls[i]);
            if (!res.ok) throw new Error(`GET ${job.urls[i]} answered ${res.status}`);
            return await res.json();
          }),
        ),
      );
    }
    await Promise.all(done);
    return { steps: job.urls.length };
  }
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/healthz") return Response.json({ ok: true });
    if (url.pathname === "/create" && request.method === "POST") {
      const instance = await env.BENCH.create({ params: await request.json() });
      return Response.json({ id: instance.id }, { status: 201 });
    }
    if (url.pathname === "/status") {
      const instance = await env.BENCH.get(url.searchParams.get("id") ?? "");
      return Response.json(await instance.status());
    }
    return Response.json({ error: "not found" }, { status: 404 });
  },
};

/**
 * The API as other people's tools see it, with those tools: Redocly's linter and
 * openapi-typescript on the OpenAPI document, ajv (strict) on the plan's JSON Schema, Stripe's
 * SDK verifying a real webhook delivery, and the `eventsource` package (a WHATWG EventSource)
 * stopping at the 204 of a drained run.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import Ajv2020 from "ajv/dist/2020.js";
import { EventSource } from "eventsource";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startUpstream, type Upstream } from "../upstream/server.ts";
import { ROOT } from "./cli-harness.ts";
import { bootWorker, type BootedWorker } from "./worker.ts";

const run = promisify(execFile);
const bin = (name: string) => join(ROOT, "node_modules/.bin", name);
const WEBHOOK_SECRET = "whsec_edgestep_e2e";

let upstream: Upstream;
let worker: BootedWorker;

beforeAll(async () => {
  upstream = await startUpstream();
  worker = await bootWorker(upstream.url, { WEBHOOK_SECRET });
});

afterAll(async () => {
  await worker?.stop();
  await upstream?.close();
});

async function finishedRun(extra: Record<string, unknown> = {}): Promise<string> {
  const plan = { steps: [{ id: "a", tool: "pass", params: { value: 1 } }], ...extra };
  const res = await fetch(`${worker.url}/v1/runs`, { method: "POST", body: JSON.stringify(plan) });
  const { runId } = (await res.json()) as { runId: string };
  for (let i = 0; i < 400; i++) {
    const s = (await (await fetch(`${worker.url}/v1/runs/${runId}`)).json()) as { status: string };
    if (s.status === "completed") return runId;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} did not complete`);
}

describe("the OpenAPI document", () => {
  it("is what the Worker serves at /openapi.json, and `redocly lint` reports nothing", async () => {
    const served = (await (await fetch(`${worker.url}/openapi.json`)).json()) as object;
    const file = JSON.parse(await readFile(join(ROOT, "docs/openapi.json"), "utf8"));
    expect({ ...served, servers: file.servers }).toEqual(file);
    const { stdout } = await run(bin("redocly"), ["lint", "docs/openapi.json", "--format=json"], {
      cwd: ROOT,
    });
    const report = JSON.parse(stdout);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(report.problems).toEqual([]);
  });

  it("openapi-typescript types a plan as a user writes it, and a run as the Worker answers it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "edgestep-oats-"));
    try {
      await run(bin("openapi-typescript"), [
        join(ROOT, "docs/openapi.json"),
        "-o",
        join(dir, "edgestep.ts"),
      ]);
      await writeFile(
        join(dir, "user.ts"),
        `import type { components, operations } from "./edgestep";
type Plan = components["schemas"]["Plan"];
export const minimal: Plan = { steps: [{ tool: "http", params: { url: "https://example.com" } }] };
export const configured: Plan = {
  name: "n",
  config: { maxParallel: 2, retry: { maxRetries: 1 } },
  steps: [{ id: "a", tool: "pass" }, { id: "b", tool: "pass", dependsOn: ["a"], trigger: "all_done" }],
};
// @ts-expect-error a step needs a tool
export const noTool: Plan = { steps: [{ id: "x" }] };
// @ts-expect-error maxParallel is a number
export const wrongType: Plan = { config: { maxParallel: "2" }, steps: [{ tool: "pass" }] };
type Run = components["schemas"]["RunStatus"];
export const mode: Run["mode"] = { type: "continuous", maxIterations: 5 };
// @ts-expect-error an answered mode always has its limit
export const partialMode: Run["mode"] = { type: "continuous" };
export type Created = operations["createRun"]["responses"]["202"]["content"]["application/json"];
`,
      );
      const tsc = join(ROOT, "node_modules/typescript/bin/tsc");
      const checked = await run(process.execPath, [
        tsc,
        "--noEmit",
        "--strict",
        "--skipLibCheck",
        "--target",
        "es2022",
        "--module",
        "es2022",
        "--moduleResolution",
        "bundler",
        join(dir, "user.ts"),
      ]).then(
        () => "",
        (err: { stdout: string }) => err.stdout,
      );
      expect(checked).toBe("");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("docs/plan.schema.json", () => {
  it("compiles in ajv's strict mode and accepts the example plans, not a broken one", async () => {
    const schema = JSON.parse(await readFile(join(ROOT, "docs/plan.schema.json"), "utf8"));
    expect(schema.$id).toBe("plan.schema.json");
    const validate = new Ajv2020({ strict: true }).compile(schema);
    for (const name of ["01-simple", "04-three-level-chain", "deploy", "partial-failure"]) {
      const plan = JSON.parse(await readFile(join(ROOT, `examples/${name}.json`), "utf8"));
      expect(validate(plan), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    expect(validate({ steps: [{ tool: "pass", when: 3 }] })).toBe(false);
    expect(validate({ steps: [] })).toBe(false);
  });
});

describe("webhook signatures are Stripe's scheme", () => {
  it("stripe.webhooks.constructEvent verifies a real delivery, and refuses a changed body or another secret", async () => {
    const hook = `/script/stripe-${Date.now()}`;
    const runId = await finishedRun({ webhook: { url: `${upstream.url}${hook}?plan=200` } });
    let delivery = upstream.calls.find((c) => c.path === hook);
    for (let i = 0; delivery === undefined && i < 400; i++) {
      await new Promise((r) => setTimeout(r, 25));
      delivery = upstream.calls.find((c) => c.path === hook);
    }
    const signature = delivery!.headers["x-edgestep-signature"]!;
    const event = Stripe.webhooks.constructEvent(
      delivery!.body,
      signature,
      WEBHOOK_SECRET,
    ) as unknown;
    expect(event).toMatchObject({ type: "run.completed", runId, status: "completed" });
    expect(() =>
      Stripe.webhooks.constructEvent(
        delivery!.body.replace("completed", "failed!!"),
        signature,
        WEBHOOK_SECRET,
      ),
    ).toThrow(/signature/i);
    expect(() => Stripe.webhooks.constructEvent(delivery!.body, signature, "whsec_other")).toThrow(
      /signature/i,
    );
  });
});

describe("an EventSource (the eventsource package) on a finished run", () => {
  /** Opens an EventSource; resolves once it is CLOSED, with the events and requests it saw. */
  function follow(runId: string, lastEventId?: string) {
    const requests: (string | null)[] = [];
    const types: string[] = [];
    const source = new EventSource(`${worker.url}/v1/runs/${runId}/events`, {
      fetch: (url, init) => {
        const headers = new Headers(init?.headers);
        if (lastEventId !== undefined && requests.length === 0)
          headers.set("last-event-id", lastEventId);
        requests.push(headers.get("last-event-id"));
        return fetch(url, { ...init, headers });
      },
    });
    source.addEventListener("run_finished", () => types.push("run_finished"));
    source.addEventListener("step_succeeded", () => types.push("step_succeeded"));
    return new Promise<{ requests: (string | null)[]; types: string[] }>((resolve, reject) => {
      const timer = setTimeout(() => {
        source.close();
        reject(new Error(`still reconnecting after ${requests.length} requests`));
      }, 15_000);
      source.onerror = () => {
        if (source.readyState !== EventSource.CLOSED) return;
        clearTimeout(timer);
        resolve({ requests, types });
      };
    });
  }

  it("stops at the 204 once everything was sent, instead of reconnecting forever", async () => {
    const runId = await finishedRun();
    const { requests, types } = await follow(runId);
    expect(types).toEqual(["step_succeeded", "run_finished"]);
    // The stream, then one reconnection with Last-Event-ID answered 204.
    expect(requests).toHaveLength(2);
    expect(requests[0]).toBeNull();
    expect(Number(requests[1])).toBeGreaterThan(0);
  }, 20_000);

  it("closes at once when it connects to a drained run", async () => {
    const runId = await finishedRun();
    const page = (await (
      await fetch(`${worker.url}/v1/runs/${runId}/events?limit=1000`)
    ).json()) as {
      events: { seq: number }[];
    };
    const { requests, types } = await follow(runId, String(page.events.at(-1)!.seq));
    expect(types).toEqual([]);
    expect(requests).toHaveLength(1);
  });
});

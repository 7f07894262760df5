/**
 * Hostile input (property-based, fast-check): random JSON, mutated valid plans, raw and
 * invalid UTF-8 bytes, wrong or missing content types and empty bodies, thrown at
 * `POST /v1/runs` and `POST /v1/plans/validate`. Every answer must be a 2xx, or a 4xx
 * with the API's JSON error shape (SPEC 6) — never a 500, never a hang — and a rejected
 * submission must store nothing: each request carries its own `Idempotency-Key`, which
 * fixes the run id the Worker would have used, and that id must then answer 404.
 *
 * Accepted runs are cancelled at once; their http steps can only name the loopback
 * upstream (random strings are not http(s) URLs). The seed is fixed, so a failure is
 * reproducible; fast-check prints the seed and the shrunk counterexample.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { idempotentRunId } from "../src/api/ids";
import simple from "../examples/01-simple.json";
import parallel from "../examples/02-parallel.json";
import dependency from "../examples/03-dependency.json";
import chain from "../examples/04-three-level-chain.json";
import mixed from "../examples/05-mixed.json";
import failFast from "../examples/fail-fast.json";
import partialFailure from "../examples/partial-failure.json";
import { api, drive, unique, upstreamUrl } from "./helpers";

/** Auth is off in tests: every caller is this owner (src/api/app.ts). */
const OWNER = "public";
const SEED = 0x5eed_2026;
/** One request (answer and body) slower than this is a hang. */
const HANG_MS = 5_000;
const ROUTES = ["/v1/runs", "/v1/plans/validate"] as const;
type Route = (typeof ROUTES)[number];

const settings = (numRuns: number): fc.Parameters<unknown> => ({ seed: SEED, numRuns });

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

async function within<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`hang: ${what} took more than ${HANG_MS} ms`)),
      HANG_MS,
    );
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

interface Submission {
  route: Route;
  /** undefined: no body at all. */
  body: string | Uint8Array | undefined;
  /** null: no content-type header (a byte body gets none by default). */
  contentType: string | null;
}

/**
 * Sends one submission and checks the answer: 2xx with the route's shape, or 4xx with
 * `{ error: { code, message, issues? } }`. Then checks the run id its Idempotency-Key
 * maps to: a 202 created exactly that run (cancelled at once); anything else left none.
 */
async function expectHandled({ route, body, contentType }: Submission): Promise<void> {
  const key = unique("fuzz");
  const headers = new Headers({ "idempotency-key": key });
  if (contentType !== null) headers.set("content-type", contentType);
  const res = await within(api(route, { method: "POST", headers, body }), `POST ${route}`);
  const text = await within(res.text(), `reading the answer of POST ${route}`);
  const what = `POST ${route} answered ${res.status}: ${text.slice(0, 500)}`;
  expect(
    res.status < 500 && res.status >= 200 && (res.status < 300 || res.status >= 400),
    what,
  ).toBe(true);
  expect(res.headers.get("content-type") ?? "", what).toMatch(/^application\/json/);
  let json: any;
  expect(() => (json = JSON.parse(text)), what).not.toThrow();

  const runId = await idempotentRunId(OWNER, key);
  if (res.status >= 400) {
    expect(typeof json?.error?.code, what).toBe("string");
    expect(typeof json.error.message, what).toBe("string");
    expect(json.error.message.length, what).toBeGreaterThan(0);
    if (res.status === 400) {
      expect(Array.isArray(json.error.issues), what).toBe(true);
      expect(json.error.issues.length, what).toBeGreaterThan(0);
      for (const issue of json.error.issues) {
        expect(typeof issue.path, what).toBe("string");
        expect(typeof issue.message, what).toBe("string");
      }
    }
    if (res.status === 413) expect(json.error.code, what).toBe("payload_too_large");
  } else if (route === "/v1/runs") {
    expect(res.status, what).toBe(202);
    expect(json.runId, what).toBe(runId);
    const cancel = await within(api(`/v1/runs/${runId}/cancel`, { method: "POST" }), "cancel");
    expect([200, 409], `cancel answered ${cancel.status}`).toContain(cancel.status);
    await cancel.body?.cancel();
    return;
  } else {
    expect(res.status, what).toBe(200);
    expect(json.valid, what).toBe(true);
    expect(Array.isArray(json.order), what).toBe(true);
  }
  // Rejected, or only validated: nothing may be stored under the key's run id.
  const after = await within(api(`/v1/runs/${runId}`), "status of the derived run id");
  expect(after.status, `${what}\n...but its run ${runId} exists`).toBe(404);
  await after.body?.cancel();
}

const utf8 = (s: string) => new TextEncoder().encode(s);
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
};

// ---------------------------------------------------------------- arbitraries

const route = fc.constantFrom(...ROUTES);

/** Content types a client might (wrongly) send; null: none at all. */
const contentType = fc.oneof(
  { weight: 3, arbitrary: fc.constant("application/json") },
  fc.constant(null),
  fc.constantFrom(
    "application/json; charset=utf-8",
    "application/json; charset=utf-16",
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=zzz",
    "application/octet-stream",
    "*/*",
    "",
  ),
  fc.string({ unit: "grapheme-ascii", maxLength: 40 }),
);

/** Strings that tend to break things: control characters, RTL, lone surrogates, NUL, prototype names. */
const nastyString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "",
    "\u0000",
    "a\u0000b",
    "\u202eevil.exe",
    "\u200f\u200e",
    "\ud800",
    "\udfff",
    "x\ud83d",
    "\ufeff",
    "\uffff",
    "💥".repeat(50),
    "__proto__",
    "constructor",
    "prototype",
    "toString",
    "hasOwnProperty",
    "http",
    "pass",
    "wait",
    "approval",
    "callback",
    "facilities_list",
    "null",
    "-1",
    "1e309",
  ),
);

// prettier-ignore
const exprToken = fc.constantFrom(
  "steps", "step", "input", "item", "index", "run", "secrets", "data", "length", "id", "a", "0", "1",
  "-1", "99999999999999999999", ".", "..", "[", "]", "(", ")", "?", "@", "*", "'", '"', ":", ",", "$",
  "{", "}", "${", " ", "\\", "=", "==", "<", "!", "&&", "`", "constructor", "__proto__", "\u0000", "\ud800",
);
const exprTokens = fc.array(exprToken, { maxLength: 14 }).map((t) => t.join(""));

/** Template strings: plausible, random, unclosed and nested `${...}`. */
const template = fc.oneof(
  exprTokens.map((e) => `\${${e}}`),
  fc
    .tuple(fc.string({ maxLength: 8 }), exprTokens, fc.string({ maxLength: 8 }))
    .map(([a, e, b]) => `${a}\${${e}}${b}`),
  fc.string({ unit: "binary", maxLength: 30 }).map((s) => `\${${s}}`),
  exprTokens.map((e) => `x=\${${e}`),
  fc.constantFrom(
    "${steps.a.data}",
    "${step[0].data[0].id}",
    "${steps.facilities.data.*.id}",
    "${steps['a'].data}",
    "${input}",
    "${input..x}",
    "${input[?(@.a)]}",
    "${input[?(@.constructor.constructor('return 1')())]}",
    "${input.__proto__}",
    "${run.id}${run.name}",
    "${item}${index}",
    "${${input}}",
    "${step[99999999999999999999].data}",
    "${secrets.UPSTREAM_TOKEN}",
    "${}",
    "${ }",
    "$${input}",
  ),
);

// prettier-ignore
const weirdNumber = fc.constantFrom(
  -1, -0, 0, 0.5, 1e21, 2 ** 31, 2 ** 53 + 2, Number.MAX_VALUE, -Number.MAX_VALUE, 1e-300,
);

/** Deeply nested arrays/objects around a leaf. */
const deep = fc.tuple(fc.integer({ min: 1, max: 300 }), fc.boolean()).map(([depth, objects]) => {
  let v: Json = "leaf";
  for (let i = 0; i < depth; i++) v = objects ? { k: v } : [v];
  return v;
});

/** Strings from 10 KB up to past MAX_PLAN_BYTES (1 MiB: 413). */
const huge = fc.constantFrom(10_000, 300_000, 1_100_000).map((n) => "x".repeat(n));

/** A hostile replacement for any node of a plan. */
const hostile: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> },
  { weight: 3, arbitrary: nastyString },
  { weight: 3, arbitrary: template },
  weirdNumber,
  fc.constantFrom<Json>(null, true, false, [], {}, [null], { "": null }),
  fc.array(fc.oneof(nastyString, fc.integer({ min: -3, max: 10 }), fc.double()), {
    maxLength: 5,
  }) as fc.Arbitrary<Json>,
  fc.dictionary(nastyString, nastyString, { maxKeys: 4 }) as fc.Arbitrary<Json>,
  { weight: 1, arbitrary: deep },
  { weight: 1, arbitrary: huge },
);

/** A random `dependsOn`: ids, indices (some out of range), junk. */
const randomDeps = fc.array(
  fc.oneof(
    fc.constantFrom("a", "b", "c", "0", "1", "facilities", "ghost"),
    fc.integer({ min: -2, max: 8 }),
    nastyString,
    fc.double(),
  ),
  { maxLength: 5 },
);

type Mutation =
  | { op: "delete"; at: number }
  | { op: "replace"; at: number; value: Json }
  | { op: "add"; at: number; key: string; value: Json }
  | { op: "deps"; step: number; key: "dependsOn" | "depends_on"; value: Json }
  | { op: "value"; step: number; value: Json };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant("delete" as const), at: fc.nat() }),
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant("replace" as const), at: fc.nat(), value: hostile }),
  },
  fc.record({ op: fc.constant("add" as const), at: fc.nat(), key: nastyString, value: hostile }),
  fc.record({
    op: fc.constant("deps" as const),
    step: fc.nat(),
    key: fc.constantFrom("dependsOn" as const, "depends_on" as const),
    value: randomDeps as fc.Arbitrary<Json>,
  }),
);

/** Every node of a JSON tree, as a path of keys/indices (the root is []). */
function nodes(
  v: Json,
  at: (string | number)[] = [],
  out: (string | number)[][] = [],
): (string | number)[][] {
  out.push(at);
  if (Array.isArray(v)) v.forEach((c, i) => nodes(c, [...at, i], out));
  else if (v !== null && typeof v === "object")
    for (const [k, c] of Object.entries(v)) nodes(c, [...at, k], out);
  return out;
}

function parentOf(root: Json, path: (string | number)[]): any {
  let cur: any = root;
  for (const k of path.slice(0, -1)) cur = cur[k];
  return cur;
}

/** Applies one mutation in place and returns the (possibly new) root. */
function mutate(root: Json, m: Mutation): Json {
  if (m.op === "deps" || m.op === "value") {
    const steps = (root as any)?.steps;
    if (!Array.isArray(steps) || steps.length === 0) return root;
    const step = steps[m.step % (steps.length + (m.op === "value" ? 1 : 0))];
    // "value": a step's `params.value`, or (one past the last step) the plan's `input`.
    if (step === undefined && m.op === "value") (root as any).input = m.value;
    else if (step === null || typeof step !== "object" || Array.isArray(step)) return root;
    else if (m.op === "deps") step[m.key] = m.value;
    else if (step.params !== null && typeof step.params === "object" && !Array.isArray(step.params))
      step.params.value = m.value;
    return root;
  }
  const all = nodes(root);
  const path = all[m.at % all.length]!;
  if (path.length === 0) {
    if (m.op === "replace") return m.value;
    if (m.op === "delete") return null;
  }
  if (m.op === "add") {
    const target: any = path.length === 0 ? root : parentOf(root, path)[path[path.length - 1]!];
    if (Array.isArray(target)) target.push(m.value);
    else if (target !== null && typeof target === "object")
      Object.defineProperty(target, m.key, {
        value: m.value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return root;
  }
  const parent = parentOf(root, path);
  const key = path[path.length - 1]!;
  if (m.op === "delete") {
    if (Array.isArray(parent)) parent.splice(key as number, 1);
    else delete parent[key];
  } else {
    parent[key] = m.value;
  }
  return root;
}

type StepKind = "pass" | "template" | "http" | "registry";

/** A small valid plan: pass steps (some with templates), http steps to the loopback upstream, registry tools. */
const generatedPlan = (stepKinds: StepKind[]): fc.Arbitrary<Json> =>
  fc.integer({ min: 1, max: 6 }).chain((n) =>
    fc
      .record({
        ids: fc.uniqueArray(fc.stringMatching(/^[A-Za-z0-9_-]{1,8}$/), {
          minLength: n,
          maxLength: n,
        }),
        deps: fc.array(fc.array(fc.nat(), { maxLength: 3 }), { minLength: n, maxLength: n }),
        kinds: fc.array(fc.constantFrom(...stepKinds), { minLength: n, maxLength: n }),
        input: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>,
        config: fc.record(
          {
            maxParallel: fc.integer({ min: 1, max: 100 }),
            stepTimeoutMs: fc.integer({ min: 100, max: 900_000 }),
            failFast: fc.boolean(),
            retry: fc.record(
              {
                maxRetries: fc.integer({ min: 0, max: 20 }),
                jitter: fc.constantFrom("full", "none"),
              },
              { requiredKeys: [] },
            ),
            mode: fc.oneof(
              fc.record({
                type: fc.constant("continuous"),
                maxIterations: fc.integer({ min: 1, max: 1_000_000 }),
              }),
              fc.record({
                type: fc.constant("bounded"),
                iterations: fc.integer({ min: 1, max: 1_000_000 }),
              }),
            ),
          },
          { requiredKeys: [] },
        ),
      })
      .map(({ ids, deps, kinds, input, config }): Json => ({
        name: "fuzz",
        input,
        config: config as Json,
        steps: ids.map((id, i) => {
          const dependsOn = i === 0 ? [] : [...new Set(deps[i]!.map((d) => ids[d % i]!))];
          const prev = i === 0 ? undefined : ids[(deps[i]![0] ?? 0) % i];
          const step: { [k: string]: Json } = {
            id,
            tool: "pass",
            params: { value: id },
            dependsOn,
          };
          const kind = kinds[i]!;
          if (kind === "template" && prev !== undefined)
            step.params = { value: `\${steps.${prev}.data} \${input}` };
          if (kind === "http") {
            step.tool = "http";
            step.params = { url: `${upstreamUrl}/echo`, method: "POST", body: { id } };
          }
          if (kind === "registry") {
            step.tool = "facilities_list";
            step.params = {};
          }
          return step;
        }),
      })),
  );

const examplePlans = [
  simple,
  parallel,
  dependency,
  chain,
  mixed,
  failFast,
  partialFailure,
] as unknown as Json[];
const basePlan = fc.oneof(
  fc.constantFrom(...examplePlans),
  generatedPlan(["pass", "template", "http", "registry"]),
);

// ---------------------------------------------------------------- properties

// Each property sends hundreds of requests and waits on no clock: its time is CPU time, which
// on a 2-core machine shared with other suites varies several-fold. A hang is caught per
// request (HANG_MS); the test's own timeout is only a backstop for that.
describe("hostile input to POST /v1/runs and POST /v1/plans/validate", { timeout: 120_000 }, () => {
  it("control: generated base plans are valid (validate answers 200)", async () => {
    await fc.assert(
      fc.asyncProperty(basePlan, async (plan) => {
        const res = await api("/v1/plans/validate", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(plan),
        });
        expect(res.status, await res.clone().text()).toBe(200);
        await res.body?.cancel();
      }),
      settings(40),
    );
  });

  it("random JSON values", async () => {
    await fc.assert(
      fc.asyncProperty(route, fc.jsonValue(), contentType, async (r, value, type) => {
        await expectHandled({
          route: r,
          body: utf8(JSON.stringify(value) ?? "null"),
          contentType: type,
        });
      }),
      settings(150),
    );
  });

  it("random JSON objects shaped like plans", async () => {
    const planLike = fc.record(
      {
        name: hostile,
        input: hostile,
        config: fc.oneof(
          hostile,
          fc.dictionary(
            fc.constantFrom(
              "maxParallel",
              "stepTimeoutMs",
              "retry",
              "failFast",
              "mode",
              "rollback",
              "x",
            ),
            hostile,
          ),
        ),
        webhook: fc.oneof(hostile, fc.record({ url: hostile }, { requiredKeys: [] })),
        steps: fc.oneof(
          hostile,
          fc.array(
            fc.record(
              {
                id: hostile,
                tool: fc.oneof(fc.constantFrom("pass", "http", "wait"), nastyString),
                params: hostile,
                dependsOn: randomDeps,
                when: hostile,
                forEach: hostile,
              },
              { requiredKeys: [] },
            ),
            { maxLength: 5 },
          ),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(route, planLike, async (r, plan) => {
        await expectHandled({
          route: r,
          body: utf8(JSON.stringify(plan)),
          contentType: "application/json",
        });
      }),
      settings(150),
    );
  });

  it("mutated valid plans (deleted/replaced fields, wrong types, templates, dependsOn, huge, deep, unicode)", async () => {
    await fc.assert(
      fc.asyncProperty(
        route,
        basePlan,
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        async (r, base, mutations) => {
          let plan = structuredClone(base);
          for (const m of mutations) plan = mutate(plan, m);
          await expectHandled({
            route: r,
            body: utf8(JSON.stringify(plan)),
            contentType: "application/json",
          });
        },
      ),
      settings(300),
    );
  });

  it("raw bytes: invalid UTF-8, truncated JSON, wrong or missing content types, empty bodies", async () => {
    const valid = utf8(
      JSON.stringify({ steps: [{ id: "a", tool: "pass", params: { value: "v" } }] }),
    );
    const badUtf8 = fc
      .constantFrom(
        [0xff],
        [0xfe, 0xff],
        [0xc0, 0x80],
        [0xed, 0xa0, 0x80],
        [0xf4, 0x90, 0x80, 0x80],
        [0xe2, 0x82],
        [0x80],
        [0xef, 0xbb, 0xbf],
        [0x00],
      )
      .map((b) => new Uint8Array(b));
    const body = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      // a valid plan with invalid bytes inside its string value, or at the front or back
      fc.tuple(badUtf8, fc.constantFrom("inside", "front", "back")).map(([bad, where]) => {
        const text = new TextDecoder().decode(valid);
        const cut = text.indexOf('"v"') + 2;
        if (where === "inside") return concat(valid.slice(0, cut), bad, valid.slice(cut));
        return where === "front" ? concat(bad, valid) : concat(valid, bad);
      }),
      // a valid plan cut short
      fc.nat().map((n) => valid.slice(0, n % valid.byteLength)),
      fc.constantFrom<Uint8Array | string | undefined>(
        undefined,
        "",
        " ",
        "\n\t ",
        "null",
        "[]",
        "{}",
        '""',
        "0",
        "\u0000",
        '{"steps":[]}',
      ),
    );
    await fc.assert(
      fc.asyncProperty(route, body, contentType, async (r, b, type) => {
        await expectHandled({ route: r, body: b, contentType: type });
      }),
      settings(150),
    );
  });

  it("accepted hostile plans run to a stop; the run's status, steps, results and events still answer", async () => {
    // pass steps only (with templates): whatever the mutations make of them, nothing leaves the Worker.
    const valueMutation: fc.Arbitrary<Mutation> = fc.record({
      op: fc.constant("value" as const),
      step: fc.nat(),
      value: fc.oneof(
        nastyString,
        template,
        fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json>,
        deep,
      ),
    });
    await fc.assert(
      fc.asyncProperty(
        generatedPlan(["pass", "template"]),
        fc.array(fc.oneof({ weight: 3, arbitrary: valueMutation }, mutation), {
          minLength: 1,
          maxLength: 3,
        }),
        async (base, mutations) => {
          let plan = structuredClone(base);
          for (const m of mutations) plan = mutate(plan, m);
          const res = await within(
            api("/v1/runs", {
              method: "POST",
              headers: { "content-type": "application/json" },
              body: JSON.stringify(plan),
            }),
            "POST /v1/runs",
          );
          // Rejections are the other properties' business.
          if (res.status !== 202) return void (await res.body?.cancel());
          const { runId } = (await res.json()) as { runId: string };
          const run = await within(drive(runId, 5), `driving ${runId}`);
          const paths = [
            "",
            "/results",
            "/events",
            ...run.steps.map((s: any) => `/steps/${encodeURIComponent(s.id)}`),
          ];
          for (const sub of paths) {
            const r = await within(api(`/v1/runs/${runId}${sub}`), `GET ${sub}`);
            const text = await r.text();
            expect(
              r.status,
              `GET /v1/runs/${runId}${sub} answered ${r.status}: ${text.slice(0, 300)}`,
            ).toBe(200);
            expect(() => JSON.parse(text)).not.toThrow();
          }
          const cancel = await api(`/v1/runs/${runId}/cancel`, { method: "POST" });
          expect([200, 409]).toContain(cancel.status);
          await cancel.body?.cancel();
        },
      ),
      settings(60),
    );
  });

  it("a body that never ends, without a content-length, is a 413 once it passes MAX_PLAN_BYTES", async () => {
    const chunk = utf8(`{"steps":[{"tool":"pass","params":{"value":"${"x".repeat(64 * 1024)}`);
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const res = await within(
      api("/v1/runs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: endless,
      }),
      "endless body",
    );
    expect(res.status).toBe(413);
    expect(((await res.json()) as any).error.code).toBe("payload_too_large");
    // Read only up to the limit (1 MiB), not held in memory whole.
    expect(pulled).toBeLessThan(4 * 1024 * 1024);
  });
});

/**
 * Hostile input (property-based, fast-check): random JSON, mutated valid plans, raw and
 * invalid UTF-8 bytes, wrong or missing content types and empty bodies, thrown at
 * `POST /v1/runs` and `POST /v1/plans/validate`; keys named after `Object.prototype`
 * members, deep nesting and far-future dates, through submission and whole runs. Every answer must be a 2xx, or a 4xx
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
import { idempotentRunId } from "../src/ids";
import simple from "../examples/01-simple.json";
import parallel from "../examples/02-parallel.json";
import dependency from "../examples/03-dependency.json";
import chain from "../examples/04-three-level-chain.json";
import mixed from "../examples/05-mixed.json";
import failFast from "../examples/fail-fast.json";
import partialFailure from "../examples/partial-failure.json";
import { alarmAt, api, drive, expectReadable, fireAlarm, runStub } from "./helpers";
import { script, unique, upstreamUrl } from "./helpers";

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

// ------------------------------------- prototype keys, deep nesting, far-future dates

const DAY = 86_400_000;
const MAX_WAIT_MS = 365 * DAY;
const MAX_JSON_DEPTH = 64;
const MAX_OUTPUT_DEPTH = 128;
const MAX_OUTPUT_BYTES = 262_144;

const PROTO_NAMES = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "isPrototypeOf",
  "__defineGetter__",
] as const;

/** Strings without `$`: a `${` would be a template. */
const plainString = fc.string({ maxLength: 6 }).filter((v) => !v.includes("$"));

/** JSON whose object keys are often prototype names, as own keys (as JSON.parse makes them). */
const protoArbitraries = fc.letrec<{ value: Json; array: Json; object: Json }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(plainString, fc.integer(), fc.boolean(), fc.constant(null)),
    tie("array"),
    tie("object"),
  ),
  array: fc.array(tie("value"), { maxLength: 3 }),
  object: fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_NAMES), plainString), tie("value")), {
      maxLength: 4,
    })
    .map((entries) => Object.fromEntries(entries) as Json),
}));
const protoJson = protoArbitraries.value;

/** `Object.prototype` and `Array.prototype` own keys, seen in a Durable Object: pollution would add some. */
async function prototypeKeys(objectName: string): Promise<string> {
  return JSON.stringify(await runStub(objectName).prototypeKeys());
}

/** `"[" * depth` around 1 (or `{"k":` for objects), as text: values this deep overflow JSON.stringify. */
const deepText = (depth: number, objects: boolean) =>
  objects
    ? `${'{"k":'.repeat(depth)}1${"}".repeat(depth)}`
    : `${"[".repeat(depth)}1${"]".repeat(depth)}`;

async function submitText(body: string): Promise<{ status: number; json: any }> {
  const res = await within(
    api("/v1/runs", { method: "POST", headers: { "content-type": "application/json" }, body }),
    "POST /v1/runs",
  );
  return { status: res.status, json: await res.json() };
}

describe(
  "hostile data through whole runs (prototype keys, deep nesting, far-future dates)",
  { timeout: 120_000 }, // whole runs, a handful of requests per case
  () => {
    it("prototype-named keys and step ids round-trip byte for byte and pollute nothing", async () => {
      const stepIds = fc.uniqueArray(
        fc.oneof(fc.constantFrom(...PROTO_NAMES), fc.stringMatching(/^[a-z]{1,6}$/)),
        {
          minLength: 1,
          maxLength: 4,
        },
      );
      const baseline = await prototypeKeys(unique("prototypes"));
      await fc.assert(
        fc.asyncProperty(
          stepIds,
          fc.array(protoJson, { minLength: 4, maxLength: 4 }),
          protoArbitraries.object,
          async (ids, values, body) => {
            const steps: Json[] = ids.map((id, k) => ({
              id,
              tool: "pass",
              params: { value: values[k]! },
            }));
            steps.push({
              id: "copy-all",
              tool: "pass",
              params: { value: ids.map((id) => `\${steps.${id}.data}`) },
            });
            steps.push({
              id: "send-echo",
              tool: "http",
              params: { method: "POST", url: `${upstreamUrl}/echo`, body },
            });
            const { status, json } = await submitText(JSON.stringify({ steps }));
            expect(status, JSON.stringify(json)).toBe(202);
            const run = await within(drive(json.runId, 5), "drive");
            expect(run.status).toBe("completed");
            const res = await api(`/v1/runs/${json.runId}/results`);
            const results = JSON.parse(await res.text()) as any[];
            ids.forEach((id, k) =>
              expect(JSON.stringify(results[k].data), id).toBe(JSON.stringify(values[k])),
            );
            expect(JSON.stringify(results[ids.length].data)).toBe(
              JSON.stringify(values.slice(0, ids.length)),
            );
            expect(JSON.stringify(results[ids.length + 1].data.body)).toBe(JSON.stringify(body));
            expect(await prototypeKeys(json.runId)).toBe(baseline);
          },
        ),
        settings(30),
      );
    });

    it("deeply nested plans are a 400 naming the path past MAX_JSON_DEPTH, never a 500", async () => {
      const depth = fc.oneof(
        fc.integer({ min: 1, max: 200 }),
        fc.constantFrom(58, 59, 60, 61, 3_000, 5_000, 100_000),
      );
      const where = fc.constantFrom("input", "params", "forEach");
      await fc.assert(
        fc.asyncProperty(depth, fc.boolean(), where, async (d, objects, at) => {
          const deep = deepText(d, objects);
          // input: root (1), then the value; params.value or forEach: root, steps, step, params or forEach (4)
          const body =
            at === "input"
              ? `{"input":${deep},"steps":[{"tool":"pass"}]}`
              : at === "params"
                ? `{"steps":[{"tool":"pass","params":{"value":${deep}}}]}`
                : `{"steps":[{"tool":"pass","forEach":[${deep}]}]}`;
          const levels = d + (at === "input" ? 1 : 4);
          const { status, json } = await submitText(body);
          if (levels <= MAX_JSON_DEPTH) {
            expect(status, JSON.stringify(json)).toBe(202);
            await api(`/v1/runs/${json.runId}/cancel`, { method: "POST" });
          } else {
            expect(status, JSON.stringify(json).slice(0, 300)).toBe(400);
            expect(json.error.issues[0].message).toMatch(/MAX_JSON_DEPTH/);
            expect(json.error.issues[0].path).toMatch(at === "input" ? /^input/ : /^steps\.0\./);
          }
        }),
        settings(40),
      );
    });

    it("deeply nested upstream answers fail only their step; steps nesting them deeper too; reads answer", async () => {
      const depth = fc.oneof(
        fc.integer({ min: 0, max: 160 }),
        fc.constantFrom(127, 128, 129, 3_000, 5_000, 100_000),
      );
      await fc.assert(
        fc.asyncProperty(
          depth,
          fc.boolean(),
          fc.integer({ min: 0, max: 50 }),
          async (d, objects, wrap) => {
            let wrapped: Json = "${steps.deep.data}";
            for (let k = 0; k < wrap; k++) wrapped = { w: wrapped };
            const url = `${upstreamUrl}/deep?depth=${d}&kind=${objects ? "object" : "array"}`;
            const { status, json } = await submitText(
              JSON.stringify({
                config: { retry: { maxRetries: 2, baseDelayMs: 0 } },
                steps: [
                  { id: "deep", tool: "http", params: { url } },
                  { id: "wrap", tool: "pass", params: { value: wrapped } },
                ],
              }),
            );
            expect(status, JSON.stringify(json)).toBe(202);
            const run = await within(drive(json.runId, 10), "drive");
            const [deep, wrapStep] = run.steps;
            const bytes = objects ? 6 * d + 6 : 2 * d + 6;
            if (bytes > MAX_OUTPUT_BYTES) {
              expect(deep).toMatchObject({
                status: "failed",
                error: { category: "output_too_large" },
              });
            } else if (d > MAX_OUTPUT_DEPTH) {
              expect(deep).toMatchObject({
                status: "failed",
                attempts: 1,
                error: { category: "invalid_data" },
              });
            } else {
              expect(deep.status).toBe("succeeded");
              expect(wrapStep.status).toBe(d + wrap > MAX_OUTPUT_DEPTH ? "failed" : "succeeded");
            }
            await expectReadable(json.runId, ["deep", "wrap"]);
          },
        ),
        settings(30),
      );
    });

    /** ISO times from 1970 to 9999, near now and near the 365-day limit. */
    const isoTime = fc
      .oneof(
        fc.date({ min: new Date(0), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        fc.integer({ min: -2 * DAY, max: 2 * MAX_WAIT_MS }).map((ms) => new Date(Date.now() + ms)),
      )
      .map((d) => d.toISOString());
    const waitParams = fc.oneof(
      isoTime.map((until) => ({ until })),
      fc
        .string({ maxLength: 12 })
        .filter((v) => !v.includes("$"))
        .map((until) => ({ until })),
      fc
        .oneof(
          fc.integer({ min: 0, max: 2 * MAX_WAIT_MS }),
          fc.double(),
          fc.constantFrom(1e20, Number.MAX_VALUE),
        )
        .map((ms) => ({ ms })),
      fc
        .oneof(
          fc.integer({ min: 0, max: 2 * MAX_WAIT_MS }).map(String),
          fc.constantFrom("1e20", "9".repeat(400), "soon", ""),
        )
        .map((ms) => ({ ms })),
    );

    it("wait times at submission: within 365 days accepted, beyond it a 400 naming the field; never a bad alarm", async () => {
      await fc.assert(
        fc.asyncProperty(waitParams, async (params) => {
          const { status, json } = await submitText(
            JSON.stringify({ steps: [{ id: "nap", tool: "wait", params }] }),
          );
          const field = "until" in params ? "until" : "ms";
          const ahead =
            "until" in params ? Date.parse(params.until) - Date.now() : Number(params.ms);
          if (Number.isFinite(ahead) && ahead >= -DAY && ahead < MAX_WAIT_MS - DAY) {
            if (field === "until" || (ahead >= 0 && ahead % 1 === 0))
              expect(status, JSON.stringify(json)).toBe(202);
          }
          if (Number.isFinite(ahead) && ahead > MAX_WAIT_MS + DAY) expect(status).toBe(400);
          if (status === 400) {
            expect(json.error.issues.map((i: any) => i.path)).toContain(`steps.0.params.${field}`);
            return;
          }
          expect(status, JSON.stringify(json)).toBe(202);
          expect(await fireAlarm(json.runId)).toBe(true);
          const alarm = await alarmAt(json.runId);
          if (alarm !== null) expect(alarm).toBeLessThanOrEqual(Date.now() + MAX_WAIT_MS);
          await expectReadable(json.runId, ["nap"]);
          await api(`/v1/runs/${json.runId}/cancel`, { method: "POST" });
        }),
        settings(60),
      );
    });

    it("templated wait times and Retry-After values from far in the future leave a settable alarm", async () => {
      const retryAfter = fc.oneof(
        fc.integer({ min: 0, max: 2 ** 40 }).map(String),
        isoTime.map((t) => new Date(t).toUTCString()),
        fc.constantFrom("9".repeat(400), "-1", "soon", "Fri, 31 Dec 9999 23:59:59 GMT"),
      );
      const templated = fc.oneof(
        fc.record({ kind: fc.constant("until" as const), value: isoTime }),
        fc.record({
          kind: fc.constant("ms" as const),
          value: fc.oneof(fc.integer({ min: 0, max: 2 * MAX_WAIT_MS }), fc.constant(1e20)),
        }),
        fc.record({ kind: fc.constant("retryAfter" as const), value: retryAfter }),
      );
      await fc.assert(
        fc.asyncProperty(templated, async ({ kind, value }) => {
          const q = new URLSearchParams({ plan: "429,200", retryAfter: String(value) });
          const step =
            kind === "retryAfter"
              ? {
                  id: "s",
                  tool: "http",
                  // its own host: the 429 pauses it (SPEC 10), and no other test calls it
                  params: { url: script(unique("far"), `?${q}`) },
                }
              : { id: "s", tool: "wait", params: { [kind]: "${input.t}" } };
          const { status, json } = await submitText(
            JSON.stringify({ input: { t: value }, steps: [step] }),
          );
          expect(status, JSON.stringify(json)).toBe(202);
          expect(await fireAlarm(json.runId)).toBe(true);
          const run = (await (await api(`/v1/runs/${json.runId}`)).json()) as any;
          const alarm = await alarmAt(json.runId);
          if (run.status !== "failed" && run.status !== "completed") expect(alarm).not.toBeNull();
          if (alarm !== null) expect(alarm).toBeLessThanOrEqual(Date.now() + MAX_WAIT_MS);
          if (run.steps[0].status === "failed")
            expect(run.steps[0].error.category).toBe("invalid_data");
          await expectReadable(json.runId, ["s"]);
          await api(`/v1/runs/${json.runId}/cancel`, { method: "POST" });
        }),
        settings(30),
      );
    });
  },
);

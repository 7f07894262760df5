import { describe, expect, it } from "vitest";
import { ToolSet } from "../tools";
import { checkUrl, parseAllowedHosts } from "./egress";
import { planFeatures, type CompiledPlan } from "./plan";
import { DEFAULT_RETRY } from "./retry";
import { compilePlan, type CompileResult, type ValidationContext } from "./validate";

/** The real built-ins (http, pass) plus one registry tool, with a fetcher that is never called. */
function context(opts: { maxSteps?: number; allowedHosts?: string } = {}): ValidationContext {
  const allowedHosts = parseAllowedHosts(opts.allowedHosts);
  const tools = new ToolSet({
    registry: {
      shipments_list: {
        url: "https://api.example.com/shipments",
        path: "/",
        method: "GET",
        headers: {},
        paramsAs: "query",
      },
      ledger_post: { service: "LEDGER", path: "/entries", method: "POST", headers: {} },
    },
    allowedHosts,
    fetcher: () => {
      throw new Error("validation must not call tools");
    },
    service: () => undefined,
    secret: () => undefined,
  });
  return {
    maxSteps: opts.maxSteps ?? 1000,
    tool: (name) => tools.spec(name),
    checkUrl: (url) => checkUrl(url, allowedHosts),
  };
}

const ctx = context();
const compile = (raw: unknown, c: ValidationContext = ctx): CompileResult => compilePlan(raw, c);

function ok(raw: unknown, c?: ValidationContext): CompiledPlan {
  const r = compile(raw, c);
  if (!r.ok) throw new Error(`expected a valid plan, got ${JSON.stringify(r.issues)}`);
  return r.plan;
}

function issues(raw: unknown, c?: ValidationContext) {
  const r = compile(raw, c);
  if (r.ok) throw new Error("expected the plan to be rejected");
  return r;
}

const paths = (raw: unknown, c?: ValidationContext) => issues(raw, c).issues.map((i) => i.path);

const pass = (extra: Record<string, unknown> = {}) => ({
  tool: "pass",
  params: { value: 1 },
  ...extra,
});
/** A registry tool: no params schema, so any param name may carry a template. */
const reg = (params: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  tool: "shipments_list",
  params,
  ...extra,
});

describe("a valid plan", () => {
  it("compiles the SPEC example's shape", () => {
    const plan = ok({
      name: "berlin-contaminants",
      input: { city: "Berlin" },
      steps: [
        {
          id: "facilities",
          tool: "http",
          params: {
            method: "GET",
            url: "https://api.example.com/facilities",
            query: { location: "${input.city}" },
          },
        },
        {
          id: "shipments",
          tool: "shipments_list",
          params: { facility_id: "${steps.facilities.data.*.id}" },
          dependsOn: ["facilities"],
        },
      ],
    });
    expect(plan.name).toBe("berlin-contaminants");
    expect(plan.input).toEqual({ city: "Berlin" });
    expect(plan.steps.map((s) => [s.id, s.deps])).toEqual([
      ["facilities", []],
      ["shipments", [0]],
    ]);
  });

  it("gives a step without id its index as a string", () => {
    const plan = ok({ steps: [pass(), pass({ id: "named" }), pass()] });
    expect(plan.steps.map((s) => s.id)).toEqual(["0", "named", "2"]);
  });

  it("lets a dependency name a default id", () => {
    expect(ok({ steps: [pass(), pass({ dependsOn: ["0"] })] }).steps[1]!.deps).toEqual([0]);
  });

  it("accepts dependencies by plan index", () => {
    expect(ok({ steps: [pass({ id: "a" }), pass({ dependsOn: [0] })] }).steps[1]!.deps).toEqual([
      0,
    ]);
  });

  it("reads index digits written as a string as the index when no step has that id", () => {
    expect(ok({ steps: [pass({ id: "a" }), pass({ dependsOn: ["0"] })] }).steps[1]!.deps).toEqual([
      0,
    ]);
    const idFirst = ok({
      steps: [pass({ id: "a" }), pass({ id: "0" }), pass({ dependsOn: ["0"] })],
    });
    expect(idFirst.steps[2]!.deps).toEqual([1]);
    expect(paths({ steps: [pass({ id: "a" }), pass({ dependsOn: ["7"] })] })).toEqual([
      "steps.1.dependsOn.0",
    ]);
  });

  it("accepts depends_on as an alias of dependsOn", () => {
    expect(ok({ steps: [pass({ id: "a" }), pass({ depends_on: ["a"] })] }).steps[1]!.deps).toEqual([
      0,
    ]);
  });

  it("keeps a plan without name or input as null", () => {
    const plan = ok({ steps: [pass()] });
    expect(plan.name).toBeNull();
    expect(plan.input).toBeNull();
  });

  it("accepts the informational fields", () => {
    expect(compile({ steps: [pass({ title: "t", description: "d", parallel: true })] }).ok).toBe(
      true,
    );
  });
});

describe("implicit dependencies from templates (SPEC 3.3)", () => {
  it("a steps.<id> reference adds a dependency and a ref", () => {
    const plan = ok({
      steps: [pass({ id: "a" }), pass({ id: "b", params: { value: "${steps.a.data}" } })],
    });
    expect(plan.steps[1]!.deps).toEqual([0]);
    expect(plan.steps[1]!.refs).toEqual([0]);
  });

  it("a step[N] reference adds a dependency", () => {
    const plan = ok({
      steps: [pass(), pass(), pass({ params: { value: "x=${step[1].data.*.id}" } })],
    });
    expect(plan.steps[2]!.deps).toEqual([1]);
  });

  it("references deep inside params count", () => {
    const plan = ok({
      steps: [
        pass({ id: "a" }),
        {
          tool: "http",
          params: { url: "https://api.example.com", query: { ids: ["${steps.a.data.*.id}"] } },
        },
      ],
    });
    expect(plan.steps[1]!.deps).toEqual([0]);
  });

  it("a reference in when counts", () => {
    const plan = ok({ steps: [pass({ id: "a" }), pass({ when: "${steps.a.data}" })] });
    expect(plan.steps[1]!.deps).toEqual([0]);
  });

  it("explicit and implicit dependencies are merged without duplicates", () => {
    const plan = ok({
      steps: [
        pass({ id: "a" }),
        pass({ id: "b" }),
        pass({ dependsOn: ["a", 0], params: { value: "${steps.a.data}${step[1].data}" } }),
      ],
    });
    expect([...plan.steps[2]!.deps].sort()).toEqual([0, 1]);
    expect([...plan.steps[2]!.refs].sort()).toEqual([0, 1]);
  });

  it("input and run references add nothing", () => {
    const plan = ok({
      input: { x: 1 },
      steps: [pass(), pass({ params: { value: "${input.x}-${run.id}" } })],
    });
    expect(plan.steps[1]!.deps).toEqual([]);
  });

  it("a dependsOn-only dependency is not a ref", () => {
    const plan = ok({ steps: [pass({ id: "a" }), pass({ dependsOn: ["a"] })] });
    expect(plan.steps[1]!.refs).toEqual([]);
  });
});

describe("defaults and overrides", () => {
  it("applies the config defaults", () => {
    expect(ok({ steps: [pass()] }).config).toMatchObject({
      maxParallel: 5,
      stepTimeoutMs: 30_000,
      failFast: false,
      mode: { type: "continuous", maxIterations: 10_000 },
      autoApproveReadonly: true,
      rollback: false,
    });
  });

  it("a bounded mode defaults to 5 iterations", () => {
    expect(ok({ config: { mode: { type: "bounded" } }, steps: [pass()] }).config.mode).toEqual({
      type: "bounded",
      iterations: 5,
    });
  });

  it("a step's retry merges over config.retry over the defaults", () => {
    const plan = ok({
      config: { retry: { maxRetries: 5, jitter: "none" } },
      steps: [pass({ retry: { baseDelayMs: 10 } }), pass()],
    });
    expect(plan.steps[0]!.retry).toEqual({
      ...DEFAULT_RETRY,
      maxRetries: 5,
      jitter: "none",
      baseDelayMs: 10,
    });
    expect(plan.steps[1]!.retry).toEqual({ ...DEFAULT_RETRY, maxRetries: 5, jitter: "none" });
    // config.retry itself, with the defaults filled in (GET /v1/runs/:id/plan shows it)
    expect(plan.config.retry).toEqual({ ...DEFAULT_RETRY, maxRetries: 5, jitter: "none" });
    expect(ok({ steps: [pass()] }).config.retry).toEqual(DEFAULT_RETRY);
  });

  it("a step's timeoutMs overrides config.stepTimeoutMs", () => {
    const plan = ok({ config: { stepTimeoutMs: 5000 }, steps: [pass({ timeoutMs: 200 }), pass()] });
    expect(plan.steps.map((s) => s.timeoutMs)).toEqual([200, 5000]);
  });

  it("onFailure follows failFast unless the step sets it", () => {
    const plan = ok({
      config: { failFast: true },
      steps: [pass(), pass({ onFailure: "continue" })],
    });
    expect(plan.steps.map((s) => s.onFailure)).toEqual(["fail_run", "continue"]);
    expect(ok({ steps: [pass()] }).steps[0]!.onFailure).toBe("continue");
  });

  it("trigger defaults to all_success", () => {
    const plan = ok({ steps: [pass(), pass({ trigger: "all_done" })] });
    expect(plan.steps.map((s) => s.trigger)).toEqual(["all_success", "all_done"]);
  });
});

describe("rejections (SPEC 2.2) with their paths", () => {
  it("an unknown field at plan level", () => {
    expect(paths({ steps: [pass()], nmae: "x" })).toEqual(["nmae"]);
  });

  it("an unknown field at config level is the field itself", () => {
    const r = issues({ config: { maxParralel: 3 }, steps: [pass()] });
    expect(r.code).toBe("invalid_plan");
    expect(r.issues).toEqual([
      { path: "config.maxParralel", message: expect.stringContaining("maxParralel") },
    ]);
  });

  it("an unknown field in config.retry", () => {
    expect(paths({ config: { retry: { maxRetry: 1 } }, steps: [pass()] })).toEqual([
      "config.retry.maxRetry",
    ]);
  });

  it("a plan without steps", () => {
    expect(paths({ steps: [] })).toEqual(["steps"]);
    expect(paths({})).toEqual(["steps"]);
  });

  it.each([null, [], "plan", 42])("a document that is not an object: %j", (raw) => {
    expect(compile(raw).ok).toBe(false);
  });

  it("a duplicate id", () => {
    const r = issues({ steps: [pass({ id: "a" }), pass({ id: "a" })] });
    expect(r.issues.map((i) => i.path)).toEqual(["steps.1.id"]);
    expect(r.issues[0]!.message).toContain('"a"');
  });

  it("an explicit id that repeats a default one", () => {
    expect(paths({ steps: [pass(), pass({ id: "0" })] })).toEqual(["steps.1.id"]);
  });

  it("an id that breaks the pattern", () => {
    expect(paths({ steps: [pass({ id: "has space" })] })).toEqual(["steps.0.id"]);
    expect(paths({ steps: [pass({ id: "x".repeat(65) })] })).toEqual(["steps.0.id"]);
  });

  it("an unknown dependency", () => {
    const r = issues({ steps: [pass({ id: "a" }), pass({ dependsOn: ["nope"] })] });
    expect(r.issues).toEqual([
      { path: "steps.1.dependsOn.0", message: expect.stringContaining("nope") },
    ]);
  });

  it("an unknown dependency index", () => {
    expect(paths({ steps: [pass(), pass({ dependsOn: [0, 7] })] })).toEqual([
      "steps.1.dependsOn.1",
    ]);
  });

  it("an unknown dependency under the depends_on alias", () => {
    expect(paths({ steps: [pass(), pass({ depends_on: ["0", "ghost"] })] })).toEqual([
      "steps.1.depends_on.1",
    ]);
  });

  it("a self-dependency", () => {
    const r = issues({ steps: [pass({ id: "a", dependsOn: ["a"] })] });
    expect(r.issues).toEqual([
      { path: "steps.0.dependsOn.0", message: expect.stringContaining("itself") },
    ]);
  });

  it("a self-dependency by index", () => {
    expect(paths({ steps: [pass(), pass({ dependsOn: [1] })] })).toEqual(["steps.1.dependsOn.0"]);
  });

  it("a cycle, whose message names its steps", () => {
    const r = issues({
      steps: [
        pass({ id: "a", dependsOn: ["c"] }),
        pass({ id: "b", dependsOn: ["a"] }),
        pass({ id: "c", dependsOn: ["b"] }),
        pass({ id: "d" }),
      ],
    });
    expect(r.code).toBe("invalid_plan");
    expect(r.issues).toHaveLength(1);
    const { path, message } = r.issues[0]!;
    expect(["steps.0.dependsOn.0", "steps.1.dependsOn.0", "steps.2.dependsOn.0"]).toContain(path);
    expect(message).toMatch(/cycle/);
    for (const id of ['"a"', '"b"', '"c"']) expect(message).toContain(id);
    expect(message).not.toContain('"d"');
  });

  it("every independent cycle, each named once, in plan order", () => {
    const r = issues({
      steps: [
        pass({ id: "a", dependsOn: ["b"] }),
        pass({ id: "b", dependsOn: ["a"] }),
        pass({ id: "x", dependsOn: ["a"] }), // downstream of a cycle, in none
        pass({ id: "c", dependsOn: ["d"] }),
        pass({ id: "d", dependsOn: ["c"] }),
      ],
    });
    expect(r.issues.map((i) => i.message.replace(/^dependency cycle: /, ""))).toEqual([
      expect.stringMatching(/^"(a|b)" -> "(a|b)" -> "(a|b)"$/),
      expect.stringMatching(/^"(c|d)" -> "(c|d)" -> "(c|d)"$/),
    ]);
  });

  it("a cycle beside other problems: both reported, every problem at once", () => {
    const r = issues({
      steps: [
        pass({ id: "a", dependsOn: ["b"] }),
        pass({ id: "b", dependsOn: ["a"] }),
        { id: "c", tool: "no_such_tool" },
      ],
    });
    expect(r.issues.map((i) => i.path)).toEqual([
      "steps.2.tool",
      expect.stringMatching(/^steps\.[01]\.dependsOn\.0$/),
    ]);
    expect(r.issues[1]!.message).toMatch(/dependency cycle/);
  });

  it("a cycle created by a template", () => {
    const r = issues({
      steps: [
        pass({ id: "a", params: { value: "${steps.b.data}" } }),
        pass({ id: "b", dependsOn: ["a"] }),
      ],
    });
    expect(r.issues[0]!.message).toMatch(/cycle/);
    expect(["steps.0.params.value", "steps.1.dependsOn.0"]).toContain(r.issues[0]!.path);
  });

  it("an unknown tool", () => {
    const r = issues({ steps: [pass(), { tool: "teleport" }] });
    expect(r.issues).toEqual([
      { path: "steps.1.tool", message: expect.stringContaining("teleport") },
    ]);
  });

  it("a template syntax error, at the string's path", () => {
    const r = issues({ steps: [pass(), reg({ x: "${step[0].data" })] });
    expect(r.issues).toEqual([
      { path: "steps.1.params.x", message: expect.stringMatching(/template/) },
    ]);
  });

  it.each([
    ["an empty expression", "${}"],
    ["an unknown root", "${foo.bar}"],
    ["an invalid JSONPath", "${input.a[]}"],
  ])("a template syntax error: %s", (_name, template) => {
    expect(paths({ steps: [reg({ x: template })] })).toEqual(["steps.0.params.x"]);
  });

  it.each([
    [
      "item outside forEach",
      { x: "${item.id}" },
      "steps.0.params.x",
      /"item" exists only in the params of a step with forEach/,
    ],
    ["index outside forEach", { x: "n=${index}" }, "steps.0.params.x", /"index" exists only/],
    [
      "a selector over steps",
      { x: "${steps.*.data}" },
      "steps.0.params.x",
      /reference error: .* must name one step/,
    ],
    [
      "the parent operator",
      { x: "${input^.steps.zz.data}" },
      "steps.0.params.x",
      /reference error: .*parent operator/,
    ],
  ])("a template reference error: %s", (_name, params, path, message) => {
    expect(issues({ steps: [reg(params)] }).issues).toEqual([
      { path, message: expect.stringMatching(message) },
    ]);
  });

  it("a verify with no template (it would always pass, or always fail)", () => {
    expect(paths({ steps: [pass({ verify: "yes" })] })).toEqual(["steps.0.verify"]);
    expect(paths({ steps: [pass({ verify: "" })] })).toEqual(["steps.0.verify"]);
    expect(compile({ steps: [pass({ verify: "${output}" })] }).ok).toBe(true);
  });

  it("item and index in a forEach step's params, but not in its when or verify", () => {
    const params = { id: "${item.id}", n: "${index}" };
    const each = { forEach: "${input.list}" };
    expect(compile({ input: { list: [] }, steps: [reg(params, each)] }).ok).toBe(true);
    expect(
      paths({ steps: [reg(params, { ...each, when: "${item}", verify: "${index}" })] }),
    ).toEqual(["steps.0.when", "steps.0.verify"]);
  });

  it("a forEach that can only resolve to text: a literal string, or a template with text around it", () => {
    const params = { id: "${item.id}" };
    for (const forEach of ["abc", "x${input.list}", "${input.list} ", "${input.a}${input.b}"])
      expect(issues({ input: { list: [] }, steps: [reg(params, { forEach })] }).issues).toEqual([
        { path: "steps.0.forEach", message: expect.stringContaining("is always text") },
      ]);
    expect(compile({ steps: [reg(params, { forEach: "${input.list}" })] }).ok).toBe(true);
  });

  it("a when or verify with text around its template, which is always text and so always truthy", () => {
    for (const value of ["n=${output.n}", "${output.env} == 'prod'", " ${output.ok}"]) {
      expect(issues({ steps: [pass({ verify: value })] }).issues).toEqual([
        {
          path: "steps.0.verify",
          message: expect.stringMatching(/is always text, so it always passes$/),
        },
      ]);
      const when = value.replaceAll("output", "input");
      expect(issues({ steps: [pass({ when })] }).issues).toEqual([
        {
          path: "steps.0.when",
          message: expect.stringMatching(/is always text, so the step always runs$/),
        },
      ]);
    }
    ok({ steps: [pass({ verify: "${output.items.length}", when: "${input.go}" })] });
    // Templates side by side, nothing around them: "" or "false" can still come out.
    ok({ steps: [pass({ verify: "${output.a}${output.b}", when: "${input.a}${input.b}" })] });
    ok({ steps: [pass({ when: "true" }), pass({ when: false })] });
  });

  it('a step id "." or "..", which a URL cannot name', () => {
    for (const id of [".", ".."])
      expect(issues({ steps: [pass({ id })] }).issues).toEqual([
        { path: "steps.0.id", message: expect.stringContaining('must not be "." or ".."') },
      ]);
    expect(compile({ steps: [pass({ id: "..." }), pass({ id: ".a" })] }).ok).toBe(true);
  });

  it("a template error nested in objects and arrays", () => {
    const step = { tool: "shipments_list", params: { query: { ids: ["ok", "${}"] } } };
    expect(paths({ steps: [step] })).toEqual(["steps.0.params.query.ids.1"]);
  });

  it("a template error in when", () => {
    expect(paths({ steps: [pass({ when: "${input" })] })).toEqual(["steps.0.when"]);
  });

  it("a template that references an unknown step id", () => {
    const r = issues({ steps: [pass(), reg({ x: "${steps.ghost.data}" })] });
    expect(r.issues).toEqual([
      { path: "steps.1.params.x", message: expect.stringContaining("ghost") },
    ]);
  });

  it("a template that references a step index past the plan", () => {
    expect(paths({ steps: [pass(), reg({ x: "${step[2].data}" })] })).toEqual(["steps.1.params.x"]);
  });

  it("a template that references its own step", () => {
    expect(paths({ steps: [reg({ x: "${steps.a.data}" }, { id: "a" })] })).toEqual([
      "steps.0.params.x",
    ]);
  });

  it("more steps than maxSteps", () => {
    const c = context({ maxSteps: 3 });
    expect(compile({ steps: [pass(), pass(), pass()] }, c).ok).toBe(true);
    const r = issues({ steps: [pass(), pass(), pass(), pass()] }, c);
    expect(r.issues.map((i) => i.path)).toEqual(["steps"]);
    expect(r.issues[0]!.message).toContain("3");
  });

  it.each(["ftp://api.example.com/file", "file:///etc/passwd", "javascript:alert(1)"])(
    "a URL that is not http(s): %s",
    (url) => {
      const r = issues({ steps: [{ tool: "http", params: { url } }] });
      expect(r.code).toBe("invalid_plan");
      expect(r.issues.map((i) => i.path)).toEqual(["steps.0.params.url"]);
    },
  );

  it("a URL whose scheme, written before a template, is not http(s)", () => {
    const r = issues({ steps: [{ tool: "http", params: { url: "ftp://${input.host}/file" } }] });
    expect(r.issues).toEqual([
      {
        path: "steps.0.params.url",
        message: 'URL scheme "ftp:" is not allowed: use http or https',
      },
    ]);
    // The scheme itself from a template, or a path built by one, is checked when the step runs.
    ok({ steps: [{ tool: "http", params: { url: "${input.url}" } }] });
    ok({ steps: [{ tool: "http", params: { url: "HTTPS://api.example.com/${input.path}" } }] });
  });

  it("a param a template fills in is not held to its type until the step runs; a literal one is", () => {
    ok({
      steps: [{ tool: "http", params: { url: "https://a.example.com/", method: "${input.m}" } }],
    });
    ok({
      steps: [{ tool: "http", params: { url: "https://a.example.com/", query: "${input.q}" } }],
    });
    const r = issues({
      steps: [{ tool: "http", params: { url: "https://a.example.com/", method: "FETCH" } }],
    });
    expect(r.issues.map((i) => i.path)).toEqual(["steps.0.params.method"]);
    // The tool's own rules hold whatever the value: a header's name, a body with GET.
    const named = issues({
      steps: [
        {
          tool: "http",
          params: { url: "https://a.example.com/", headers: { "bad name": "${input.t}" } },
        },
      ],
    });
    expect(named.issues.map((i) => i.path)).toEqual(["steps.0.params.headers.bad name"]);
    // A field the tool does not take is refused whatever it holds.
    const extra = issues({
      steps: [{ tool: "http", params: { url: "https://a.example.com/", verb: "${input.m}" } }],
    });
    expect(extra.issues).toEqual([
      { path: "steps.0.params.verb", message: 'unknown field "verb"' },
    ]);
  });

  it("a URL that does not parse", () => {
    const r = issues({ steps: [{ tool: "http", params: { url: "not a url" } }] });
    expect(r.code).toBe("invalid_plan");
    expect(r.issues.map((i) => i.path)).toEqual(["steps.0.params.url"]);
  });

  it("a URL the egress allowlist denies gives code egress_denied", () => {
    const c = context({ allowedHosts: "api.example.com" });
    const r = issues(
      { steps: [{ tool: "http", params: { url: "https://evil.example.net/x" } }] },
      c,
    );
    expect(r.code).toBe("egress_denied");
    expect(r.issues).toEqual([
      { path: "steps.0.params.url", message: expect.stringContaining("evil.example.net") },
    ]);
  });

  it("an allowed URL passes the allowlist", () => {
    const c = context({ allowedHosts: "api.example.com" });
    expect(
      compile({ steps: [{ tool: "http", params: { url: "https://api.example.com:8443/x" } }] }, c)
        .ok,
    ).toBe(true);
  });

  it("a denied webhook URL", () => {
    const c = context({ allowedHosts: "api.example.com" });
    const r = issues({ webhook: { url: "https://hooks.other.org/h" }, steps: [pass()] }, c);
    expect(r.code).toBe("egress_denied");
    expect(r.issues.map((i) => i.path)).toEqual(["webhook.url"]);
  });

  it("a webhook URL is checked whole: it is not a template", () => {
    const c = context({ allowedHosts: "api.example.com" });
    const denied = issues({ webhook: { url: "https://evil.test/${input.x}" }, steps: [pass()] }, c);
    expect(denied.code).toBe("egress_denied");
    const allowed = issues(
      { webhook: { url: "https://api.example.com/h?x=${input.x}" }, steps: [pass()] },
      c,
    );
    expect(allowed.code).toBe("invalid_plan");
    expect(allowed.issues).toEqual([
      { path: "webhook.url", message: expect.stringContaining("not templates") },
    ]);
  });

  it("a templated URL is left for run time", () => {
    const c = context({ allowedHosts: "api.example.com" });
    const plan = {
      input: { host: "evil.example.net" },
      steps: [{ tool: "http", params: { url: "https://${input.host}/x" } }],
    };
    expect(compile(plan, c).ok).toBe(true);
  });

  it("http params that break the tool's schema", () => {
    expect(
      paths({
        steps: [{ tool: "http", params: { url: "https://api.example.com", method: "FETCH" } }],
      }),
    ).toEqual(["steps.0.params.method"]);
    expect(
      paths({ steps: [{ tool: "http", params: { uri: "https://api.example.com" } }] }),
    ).toContain("steps.0.params.uri");
  });

  it("an http body with GET or HEAD, which fetch cannot send", () => {
    const http = (params: Record<string, unknown>) => ({
      steps: [{ tool: "http", params: { url: "https://api.example.com", ...params } }],
    });
    expect(paths(http({ body: { a: 1 } }))).toEqual(["steps.0.params.body"]);
    expect(paths(http({ method: "head", body: "x" }))).toEqual(["steps.0.params.body"]);
    expect(issues(http({ body: { a: 1 } })).issues[0]!.message).toMatch(/"query", or use POST/);
    expect(compile(http({ method: "POST", body: { a: 1 } })).ok).toBe(true);
    expect(compile(http({ body: null })).ok).toBe(true);
  });

  it("approval params: only `message`, a string", () => {
    expect(compile({ steps: [{ tool: "approval", params: { message: "ship?" } }] }).ok).toBe(true);
    expect(paths({ steps: [{ tool: "approval", params: { mesage: "ship?" } }] })).toEqual([
      "steps.0.params.mesage",
    ]);
    expect(paths({ steps: [{ tool: "approval", params: { message: 1 } }] })).toEqual([
      "steps.0.params.message",
    ]);
  });

  it("a registry tool whose TOOLS URL leaves the allowlist, at the step's tool", () => {
    const r = issues({ steps: [reg({})] }, context({ allowedHosts: "other.example.com" }));
    expect(r.code).toBe("egress_denied");
    expect(r.issues).toEqual([
      { path: "steps.0.tool", message: expect.stringContaining("api.example.com") },
    ]);
  });

  it("a registry tool whose TOOLS URL is in the allowlist", () => {
    expect(compile({ steps: [reg({})] }, context({ allowedHosts: "api.example.com" })).ok).toBe(
      true,
    );
  });

  it("a service-binding registry tool is exempt from the allowlist", () => {
    const plan = { steps: [{ tool: "ledger_post", params: {} }] };
    expect(compile(plan, context({ allowedHosts: "other.example.com" })).ok).toBe(true);
  });

  it("reports every issue, not just the first", () => {
    const r = issues({ steps: [{ tool: "teleport" }, pass({ dependsOn: ["ghost"] })] });
    expect(r.issues.map((i) => i.path).sort()).toEqual(["steps.0.tool", "steps.1.dependsOn.0"]);
  });
});

describe("a compensate action gets a step's tool checks", () => {
  const undo = (compensate: Record<string, unknown>) => ({ steps: [pass({ compensate })] });

  it("an unknown tool", () => {
    expect(paths(undo({ tool: "teleport" }))).toEqual(["steps.0.compensate.tool"]);
  });

  it("params that break the tool's schema", () => {
    const plan = undo({
      tool: "http",
      params: { url: "https://api.example.com", method: "FETCH" },
    });
    expect(paths(plan)).toEqual(["steps.0.compensate.params.method"]);
  });

  it("a URL that is not http(s) is invalid_plan", () => {
    const r = issues(undo({ tool: "http", params: { url: "ftp://api.example.com/undo" } }));
    expect(r.code).toBe("invalid_plan");
    expect(r.issues.map((i) => i.path)).toEqual(["steps.0.compensate.params.url"]);
  });

  it("a URL outside the allowlist is egress_denied", () => {
    const c = context({ allowedHosts: "api.example.com" });
    const r = issues(undo({ tool: "http", params: { url: "https://evil.example.net/undo" } }), c);
    expect(r.code).toBe("egress_denied");
    expect(r.issues.map((i) => i.path)).toEqual(["steps.0.compensate.params.url"]);
  });

  it("a registry tool outside the allowlist is egress_denied at its tool", () => {
    const r = issues(
      undo({ tool: "shipments_list" }),
      context({ allowedHosts: "other.example.com" }),
    );
    expect(r.code).toBe("egress_denied");
    expect(r.issues.map((i) => i.path)).toEqual(["steps.0.compensate.tool"]);
  });

  it("a templated URL is left for run time", () => {
    const c = context({ allowedHosts: "api.example.com" });
    expect(
      compile(undo({ tool: "http", params: { url: "https://${input.host}/undo" } }), c).ok,
    ).toBe(true);
  });

  it("a suspending tool is refused", () => {
    expect(paths(undo({ tool: "wait", params: { ms: 1 } }))).toEqual(["steps.0.compensate.tool"]);
  });
});

describe("ranges", () => {
  it.each([
    [{ maxParallel: 0 }, "config.maxParallel"],
    [{ maxParallel: 101 }, "config.maxParallel"],
    [{ maxParallel: 1.5 }, "config.maxParallel"],
    [{ stepTimeoutMs: 99 }, "config.stepTimeoutMs"],
    [{ stepTimeoutMs: 900_001 }, "config.stepTimeoutMs"],
    [{ retry: { maxRetries: 21 } }, "config.retry.maxRetries"],
    [{ retry: { maxRetries: -1 } }, "config.retry.maxRetries"],
    [{ retry: { baseDelayMs: 3_600_001 } }, "config.retry.baseDelayMs"],
    [{ retry: { maxDelayMs: -1 } }, "config.retry.maxDelayMs"],
    [{ retry: { jitter: "some" } }, "config.retry.jitter"],
    [{ mode: { type: "bounded", iterations: 0 } }, "config.mode.iterations"],
  ])("config %j is rejected at %s", (config, path) => {
    expect(paths({ config, steps: [pass()] })).toEqual([path]);
  });

  it.each([
    [{ maxParallel: 1 }],
    [{ maxParallel: 100 }],
    [{ stepTimeoutMs: 100 }],
    [{ stepTimeoutMs: 900_000 }],
    [{ retry: { maxRetries: 0, baseDelayMs: 0, maxDelayMs: 3_600_000 } }],
    [{ retry: { maxRetries: 20 } }],
  ])("config %j is accepted", (config) => {
    expect(compile({ config, steps: [pass()] }).ok).toBe(true);
  });

  it.each([
    [{ timeoutMs: 99 }, "steps.0.timeoutMs"],
    [{ timeoutMs: 900_001 }, "steps.0.timeoutMs"],
    [{ retry: { maxRetries: 21 } }, "steps.0.retry.maxRetries"],
    [{ retry: { baseDelayMs: 3_600_001 } }, "steps.0.retry.baseDelayMs"],
    [{ retry: { maxDelayMs: 3_600_001 } }, "steps.0.retry.maxDelayMs"],
    [{ trigger: "any" }, "steps.0.trigger"],
    [{ onFailure: "ignore" }, "steps.0.onFailure"],
  ])("step field %j is rejected at %s", (extra, path) => {
    expect(paths({ steps: [pass(extra)] })).toEqual([path]);
  });

  it("a name longer than 200 characters", () => {
    expect(paths({ name: "n".repeat(201), steps: [pass()] })).toEqual(["name"]);
  });
});

describe("planFeatures", () => {
  it("says whether a plan may wait for an approval or compensate a step, once per plan", () => {
    const plain = ok({ steps: [{ id: "a", tool: "pass", params: {} }] });
    expect(planFeatures(plain)).toEqual({ approvals: false, compensations: false });
    const both = ok({
      steps: [
        { id: "a", tool: "pass", params: {}, compensate: { tool: "pass", params: {} } },
        { id: "gate", tool: "approval", params: {}, dependsOn: ["a"] },
      ],
    });
    expect(planFeatures(both)).toEqual({ approvals: true, compensations: true });
    expect(planFeatures(both)).toBe(planFeatures(both));
  });
});

describe("$schema", () => {
  it("a plan may name its JSON Schema for editors; it is accepted and ignored", () => {
    const plan = ok({
      $schema: "./plan.schema.json",
      steps: [{ id: "a", tool: "pass", params: {} }],
    });
    expect(plan).not.toHaveProperty("$schema");
    expect(issues({ $schema: 1, steps: [{ id: "a", tool: "pass" }] }).issues).toEqual([
      expect.objectContaining({ path: "$schema" }),
    ]);
  });
});

/**
 * Plan validation at submission (SPEC 2.2) and the API's JSON 404s (SPEC 6), through
 * `POST /v1/runs` and `POST /v1/plans/validate`. Every rejection must leave nothing
 * stored: each submission carries an `Idempotency-Key`, which fixes the run id the
 * Worker would have used, and that id must then answer 404.
 */
import { describe, expect, it } from "vitest";
import { idempotentRunId } from "../src/ids";
import { api, runStub, submit, unique, upstreamUrl } from "./helpers";

/** Auth is off in tests: every caller is this owner (src/api/app.ts). */
const OWNER = "public";

const pass = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  tool: "pass",
  params: { value: id },
  ...extra,
});

interface Rejection {
  status: number;
  body: any;
  runId: string;
}

/** Submits `plan` under a fresh Idempotency-Key; returns the answer and the run id that key maps to. */
async function reject(plan: unknown): Promise<Rejection> {
  const key = unique("validation");
  const { res, body } = await submit(plan, { "idempotency-key": key });
  return { status: res.status, body, runId: await idempotentRunId(OWNER, key) };
}

async function expectNoRun(runId: string): Promise<void> {
  const res = await api(`/v1/runs/${runId}`);
  expect(res.status).toBe(404);
  expect(((await res.json()) as any).error.code).toBe("not_found");
}

/** Asserts a 400 invalid_plan with an issue at `path` (and a message matching `message`), and no run. */
async function expectInvalid(plan: unknown, path: string, message?: RegExp): Promise<any> {
  const r = await reject(plan);
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe("invalid_plan");
  expect(typeof r.body.error.message).toBe("string");
  expect(Array.isArray(r.body.error.issues)).toBe(true);
  const issue = r.body.error.issues.find((i: any) => i.path === path);
  expect(issue, `no issue at "${path}" in ${JSON.stringify(r.body.error.issues)}`).toBeDefined();
  if (message) expect(issue.message).toMatch(message);
  await expectNoRun(r.runId);
  return r.body;
}

describe("POST /v1/runs rejects invalid plans and stores nothing (SPEC 2.2)", () => {
  it("control: the same submission path accepts a valid plan and the derived run id exists", async () => {
    const key = unique("validation-ok");
    const { res, body } = await submit({ steps: [pass("a")] }, { "idempotency-key": key });
    expect(res.status).toBe(202);
    expect(body.runId).toBe(await idempotentRunId(OWNER, key));
    expect((await api(`/v1/runs/${body.runId}`)).status).toBe(200);
  });

  it("malformed JSON: issue at the document root", async () => {
    await expectInvalid('{"steps": [', "", /json/i);
  });

  it("bytes that are not UTF-8: issue at the document root", async () => {
    const key = unique("validation-utf8");
    const json = new TextEncoder().encode('{"steps":[{"tool":"pass","params":{"value":"x"}}]}');
    const at = json.indexOf(0x78); // the "x": replace it by a lone continuation byte
    json[at] = 0x80;
    const res = await api("/v1/runs", {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: json,
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as any;
    expect(body.error.issues).toEqual([{ path: "", message: expect.stringMatching(/UTF-8/) }]);
    await expectNoRun(await idempotentRunId(OWNER, key));
  });

  it("an http header name that is not an HTTP token", async () => {
    await expectInvalid(
      {
        steps: [
          {
            id: "a",
            tool: "http",
            params: { url: `${upstreamUrl}/echo`, headers: { "a\nb": "x" } },
          },
        ],
      },
      "steps.0.params.headers.a\nb",
      /header name/,
    );
  });

  it("an unknown field at plan level", async () => {
    await expectInvalid({ steps: [pass("a")], stepz: [] }, "stepz");
  });

  it("an unknown field in config names the field itself", async () => {
    await expectInvalid({ config: { maxParralel: 3 }, steps: [pass("a")] }, "config.maxParralel");
  });

  it("duplicate step ids", async () => {
    await expectInvalid({ steps: [pass("a"), pass("a")] }, "steps.1.id", /duplicate/i);
  });

  it("an unknown dependency", async () => {
    await expectInvalid(
      { steps: [pass("a"), pass("b", { dependsOn: ["a", "ghost"] })] },
      "steps.1.dependsOn.1",
      /ghost/,
    );
  });

  it("an unknown dependency through the depends_on alias", async () => {
    await expectInvalid(
      { steps: [pass("a"), pass("b", { depends_on: ["ghost"] })] },
      "steps.1.depends_on.0",
      /ghost/,
    );
  });

  it("a dependency on a plan index that does not exist", async () => {
    await expectInvalid(
      { steps: [pass("a"), pass("b", { dependsOn: [7] })] },
      "steps.1.dependsOn.0",
    );
  });

  it("a self-dependency", async () => {
    await expectInvalid(
      { steps: [pass("a"), pass("b", { dependsOn: ["b"] })] },
      "steps.1.dependsOn.0",
      /itself/,
    );
  });

  it("a cycle: the message names the cycle's steps and only them", async () => {
    const r = await reject({
      steps: [
        pass("outside"),
        pass("x", { dependsOn: ["z", "outside"] }),
        pass("y", { dependsOn: ["x"] }),
        pass("z", { dependsOn: ["y"] }),
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_plan");
    expect(r.body.error.issues).toHaveLength(1);
    const [issue] = r.body.error.issues;
    expect(issue.path).toMatch(/^steps\.[123]\.dependsOn\.0$/);
    for (const id of ["x", "y", "z"]) expect(issue.message).toContain(`"${id}"`);
    expect(issue.message).not.toContain('"outside"');
    expect(r.body.error.message).toMatch(/cycle/i);
    await expectNoRun(r.runId);
  });

  it("a cycle made by template references (implicit dependencies, SPEC 3.3)", async () => {
    const r = await reject({
      steps: [
        { id: "p", tool: "pass", params: { value: "${steps.q.data}" } },
        { id: "q", tool: "pass", params: { value: "${steps.p.data}" } },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe("invalid_plan");
    const [issue] = r.body.error.issues;
    expect(issue.path).toMatch(/^steps\.[01]\.params\.value$/);
    expect(issue.message).toMatch(/cycle/i);
    expect(issue.message).toContain('"p"');
    expect(issue.message).toContain('"q"');
    await expectNoRun(r.runId);
  });

  it("an unknown tool", async () => {
    await expectInvalid(
      { steps: [pass("a"), { id: "b", tool: "no_such_tool" }] },
      "steps.1.tool",
      /no_such_tool/,
    );
  });

  it("a template syntax error: unclosed ${", async () => {
    await expectInvalid(
      { steps: [pass("a"), { id: "b", tool: "pass", params: { value: "x=${steps.a.data" } }] },
      "steps.1.params.value",
    );
  });

  it("a template syntax error: empty expression", async () => {
    await expectInvalid(
      { steps: [{ id: "a", tool: "pass", params: { value: { deep: ["${}"] } } }] },
      "steps.0.params.value.deep.0",
    );
  });

  it("a template syntax error: not a valid JSONPath", async () => {
    await expectInvalid(
      { steps: [pass("a"), { id: "b", tool: "pass", params: { value: "${steps.a.data[0}" } }] },
      "steps.1.params.value",
    );
  });

  it("a template referencing an unknown step", async () => {
    await expectInvalid(
      { steps: [pass("a"), { id: "b", tool: "pass", params: { value: "${steps.nope.data}" } }] },
      "steps.1.params.value",
      /nope/,
    );
  });

  it("a template referencing a step index past the plan", async () => {
    await expectInvalid(
      { steps: [pass("a"), { id: "b", tool: "pass", params: { value: "${step[5].data}" } }] },
      "steps.1.params.value",
    );
  });

  it("a `when` template referencing an unknown step", async () => {
    await expectInvalid(
      { steps: [pass("a", { when: "${steps.ghost.data}" })] },
      "steps.0.when",
      /ghost/,
    );
  });

  it("more steps than MAX_STEPS_PER_PLAN (default 1000)", async () => {
    const steps = Array.from({ length: 1001 }, (_, i) => ({ tool: "pass", params: { value: i } }));
    await expectInvalid({ steps }, "steps", /1000/);
  });

  it("exactly MAX_STEPS_PER_PLAN steps is accepted by validation", async () => {
    const steps = Array.from({ length: 1000 }, (_, i) => ({ tool: "pass", params: { value: i } }));
    const res = await api("/v1/plans/validate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ steps }),
    });
    expect(res.status).toBe(200);
  });

  it("a body larger than MAX_PLAN_BYTES (default 1 MiB) is a 413 payload_too_large", async () => {
    const filler = "x".repeat(1024 * 1024);
    const r = await reject({ steps: [pass("a", { params: { value: filler } })] });
    expect(r.status).toBe(413);
    expect(r.body.error.code).toBe("payload_too_large");
    expect(typeof r.body.error.message).toBe("string");
    await expectNoRun(r.runId);
  });

  it("a body of exactly MAX_PLAN_BYTES is within the limit", async () => {
    const limit = 1024 * 1024;
    const shell = JSON.stringify({ steps: [{ tool: "pass", params: { value: "" } }] });
    const body = JSON.stringify({
      steps: [{ tool: "pass", params: { value: "x".repeat(limit - shell.length) } }],
    });
    expect(body.length).toBe(limit);
    const res = await api("/v1/plans/validate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    expect(res.status).toBe(200);
    const over = await api("/v1/plans/validate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `${body} `,
    });
    expect(over.status).toBe(413);
  });

  it("an http step URL that is not http(s) is an invalid_plan issue", async () => {
    const body = await expectInvalid(
      { steps: [{ id: "a", tool: "http", params: { url: "ftp://files.example.com/data.csv" } }] },
      "steps.0.params.url",
    );
    expect(body.error.code).toBe("invalid_plan");
  });

  it("a webhook URL that is not http(s)", async () => {
    await expectInvalid(
      { webhook: { url: "mailto:ops@example.com" }, steps: [pass("a")] },
      "webhook.url",
    );
  });

  // Webhook URLs are not templates: "${" does not exempt one from the checks at submission.
  it.each([
    ["ftp://x/${y}", "is not allowed"],
    ["javascript:${z}", "is not allowed"],
    ["${input.hook}", "is not a valid URL"],
    [`${upstreamUrl}/hook?x=\${input.x}`, "webhook URLs are not templates"],
  ])("a templated webhook URL %s is a 400 naming webhook.url", async (url, message) => {
    const body = await expectInvalid({ webhook: { url }, steps: [pass("a")] }, "webhook.url");
    expect(body.error.code).toBe("invalid_plan");
    expect(body.error.issues[0].message).toContain(message);
  });

  const outOfRange: [string, Record<string, unknown>, string][] = [
    ["step timeoutMs below 100", { steps: [pass("a", { timeoutMs: 99 })] }, "steps.0.timeoutMs"],
    [
      "step timeoutMs above 900000",
      { steps: [pass("a", { timeoutMs: 900_001 })] },
      "steps.0.timeoutMs",
    ],
    [
      "config.stepTimeoutMs below 100",
      { config: { stepTimeoutMs: 50 }, steps: [pass("a")] },
      "config.stepTimeoutMs",
    ],
    [
      "config.stepTimeoutMs above 900000",
      { config: { stepTimeoutMs: 900_001 }, steps: [pass("a")] },
      "config.stepTimeoutMs",
    ],
    [
      "step retry.maxRetries above 20",
      { steps: [pass("a", { retry: { maxRetries: 21 } })] },
      "steps.0.retry.maxRetries",
    ],
    [
      "step retry.maxRetries negative",
      { steps: [pass("a", { retry: { maxRetries: -1 } })] },
      "steps.0.retry.maxRetries",
    ],
    [
      "config.retry.baseDelayMs above 3600000",
      { config: { retry: { baseDelayMs: 3_600_001 } }, steps: [pass("a")] },
      "config.retry.baseDelayMs",
    ],
    [
      "config.retry.maxDelayMs negative",
      { config: { retry: { maxDelayMs: -5 } }, steps: [pass("a")] },
      "config.retry.maxDelayMs",
    ],
    [
      "step retry.maxDelayMs above 3600000",
      { steps: [pass("a", { retry: { maxDelayMs: 3_600_001 } })] },
      "steps.0.retry.maxDelayMs",
    ],
    [
      "an unknown field inside retry",
      { steps: [pass("a", { retry: { maxRetry: 2 } })] },
      "steps.0.retry.maxRetry",
    ],
  ];
  it.each(outOfRange)("%s", async (_name, plan, path) => {
    await expectInvalid(plan, path);
  });

  it("reports every problem of a plan, each at its own path", async () => {
    const r = await reject({
      steps: [pass("a", { dependsOn: ["ghost"] }), { id: "a", tool: "no_such_tool" }],
    });
    expect(r.status).toBe(400);
    const paths = r.body.error.issues.map((i: any) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining(["steps.0.dependsOn.0", "steps.1.id", "steps.1.tool"]),
    );
    await expectNoRun(r.runId);
  });
});

describe("POST /v1/plans/validate", () => {
  async function validate(plan: unknown): Promise<{ status: number; body: any }> {
    const res = await api("/v1/plans/validate", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof plan === "string" ? plan : JSON.stringify(plan),
    });
    return { status: res.status, body: await res.json() };
  }

  it("describes a diamond plan: order, levels and critical path", async () => {
    const { status, body } = await validate({
      steps: [
        // Listed out of execution order on purpose: the answer must follow the dependencies.
        pass("join", { dependsOn: ["left", "right"] }),
        pass("left", { dependsOn: ["root"] }),
        pass("root"),
        { id: "right", tool: "http", params: { url: `${upstreamUrl}/echo?x=\${steps.root.data}` } },
      ],
    });
    expect(status).toBe(200);
    expect(body.valid).toBe(true);
    expect([...body.order].sort()).toEqual(["join", "left", "right", "root"]);
    const pos = (id: string) => body.order.indexOf(id);
    expect(pos("root")).toBe(0);
    expect(pos("join")).toBe(3);
    expect(body.levels).toHaveLength(3);
    expect(body.levels[0]).toEqual(["root"]);
    expect([...body.levels[1]].sort()).toEqual(["left", "right"]);
    expect(body.levels[2]).toEqual(["join"]);
    expect(body.criticalPath).toHaveLength(3);
    expect(body.criticalPath[0]).toBe("root");
    expect(["left", "right"]).toContain(body.criticalPath[1]);
    expect(body.criticalPath[2]).toBe("join");
  });

  it("the critical path follows the longest chain", async () => {
    const { status, body } = await validate({
      steps: [
        pass("a"),
        pass("short", { dependsOn: ["a"] }),
        pass("b", { dependsOn: ["a"] }),
        pass("c", { dependsOn: ["b"] }),
        pass("d", { dependsOn: ["c", "short"] }),
      ],
    });
    expect(status).toBe(200);
    expect(body.criticalPath).toEqual(["a", "b", "c", "d"]);
  });

  it("runs nothing and stores nothing", async () => {
    const key = unique("validate-only");
    const res = await api("/v1/plans/validate", {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify({ steps: [pass("a")] }),
    });
    expect(res.status).toBe(200);
    await expectNoRun(await idempotentRunId(OWNER, key));
  });

  it("answers a bad plan with the same 400 as submission", async () => {
    const plan = { steps: [pass("a"), pass("b", { dependsOn: ["a", "ghost"] })] };
    const validated = await validate(plan);
    const submitted = await reject(plan);
    expect(validated.status).toBe(400);
    expect(validated.body).toEqual(submitted.body);
    expect(validated.body.error.code).toBe("invalid_plan");
    expect(validated.body.error.issues).toEqual([
      { path: "steps.1.dependsOn.1", message: expect.stringContaining("ghost") },
    ]);
  });

  it("answers malformed JSON with a 400 at the root", async () => {
    const { status, body } = await validate("[1, 2");
    expect(status).toBe(400);
    expect(body.error.code).toBe("invalid_plan");
    expect(body.error.issues[0].path).toBe("");
  });
});

describe("JSON 404s (SPEC 6)", () => {
  it("an unknown run id", async () => {
    const res = await api(`/v1/runs/run_${"0".repeat(32)}`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    const body = (await res.json()) as any;
    expect(body.error.code).toBe("not_found");
    expect(typeof body.error.message).toBe("string");
  });

  it("looking up an unknown run id writes nothing to its Durable Object", async () => {
    const id = `run_${"e".repeat(32)}`;
    expect((await api(`/v1/runs/${id}`)).status).toBe(404);
    expect(
      (
        await api(`/v1/callbacks/cb_${"e".repeat(32)}_${"0".repeat(64)}`, {
          method: "POST",
          body: '{"output":1}',
        })
      ).status,
    ).toBe(404);
    const tables = Object.keys(await runStub(id).tables());
    expect(tables).toEqual([]);
  });

  it("an unknown run id on the sub-resources", async () => {
    const id = `run_${"f".repeat(32)}`;
    for (const path of [`/v1/runs/${id}/results`, `/v1/runs/${id}/steps/a`]) {
      const res = await api(path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as any).error.code, path).toBe("not_found");
    }
  });

  it("a malformed run id", async () => {
    const res = await api("/v1/runs/not-a-run-id");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/application\/json/);
    expect(((await res.json()) as any).error.code).toBe("not_found");
  });

  it("an unknown step of an existing run", async () => {
    const { body } = await submit({ steps: [pass("a")] });
    const res = await api(`/v1/runs/${body.runId}/steps/nope`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as any).error.code).toBe("not_found");
  });

  it("an unknown route: a 404, or a 405 for a known path with another method", async () => {
    for (const [method, path, status, code] of [
      ["GET", "/v1/nope", 404, "not_found"],
      ["POST", "/v1/runs/run_x/nope", 404, "not_found"],
      ["POST", "/healthz", 405, "method_not_allowed"],
      ["DELETE", "/v1/runs", 405, "method_not_allowed"],
      // A trailing slash names no route (the router is strict): not a 405 allowing GET
      ["GET", "/v1/runs/", 404, "not_found"],
      ["GET", "/v1/runs/run_x/", 404, "not_found"],
      ["GET", "/v1/stats/", 404, "not_found"],
    ] as const) {
      const res = await api(path, { method });
      expect(res.status, `${method} ${path}`).toBe(status);
      expect(res.headers.get("content-type")).toMatch(/application\/json/);
      const body = (await res.json()) as any;
      expect(body.error.code).toBe(code);
      expect(typeof body.error.message).toBe("string");
    }
  });

  // What the console's static assets answer depends on whether it was built (console/dist);
  // test/e2e/console.test.ts (which builds it) checks its page.
  it("any other path is handed to the console's assets, not answered by the API", async () => {
    const res = await api("/nowhere");
    expect(res.headers.get("content-type") ?? "").not.toMatch(/json/);
    expect(await res.text()).not.toContain("not_found");
  });
});

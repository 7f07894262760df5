/**
 * Keys named after `Object.prototype` members are plain data (issue 11, items 1 and 2):
 * `__proto__`, `constructor`, `toString` and `hasOwnProperty` round-trip byte for byte
 * through templates, query strings, bodies, `pass`, `forEach` items and callback outputs,
 * nothing pollutes a prototype, and step ids with those names work in `${steps.<id>...}`.
 *
 * `{ "__proto__": ... }` in a JavaScript literal sets a prototype instead of a key, so the
 * hostile values here are made with JSON.parse, which creates own properties.
 */
import { describe, expect, it } from "vitest";
import { api, byId, drive, runCalls, runStub, started, stepDetail } from "./helpers";
import { callsWithRun, upstreamUrl } from "./helpers";

const PROTO_BODY = '{"__proto__":{"polluted":"yes"},"a":1}';
const PROTO_VALUE =
  '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},"toString":"s","hasOwnProperty":1,"a":[{"__proto__":[1]}]}';
const json = (text: string): unknown => JSON.parse(text);

/** The run's results as the raw JSON the API sent, parsed (JSON.parse keeps `__proto__` keys). */
async function resultsOf(runId: string): Promise<any[]> {
  const res = await api(`/v1/runs/${runId}/results`);
  expect(res.status).toBe(200);
  return JSON.parse(await res.text());
}

/** Nothing in the Worker's isolate (the run's Durable Object included) gained a prototype member. */
async function expectNoPollution(runId: string): Promise<void> {
  expect(await runStub(runId).prototypeKeys()).toEqual([
    Object.getOwnPropertyNames(Object.prototype).sort(),
    Object.getOwnPropertyNames(Array.prototype).sort(),
  ]);
  expect(({} as any).polluted).toBeUndefined();
}

describe("__proto__ and other prototype-named keys are data", () => {
  it("an http body with __proto__ is sent byte for byte, and the echoed data keeps it", async () => {
    const runId = await started({
      steps: [
        {
          id: "send",
          tool: "http",
          params: { method: "POST", url: `${upstreamUrl}/echo`, body: json(PROTO_BODY) },
        },
      ],
    });
    expect((await drive(runId)).status).toBe("completed");
    const [call] = await runCalls(runId, "/echo");
    expect(call.body).toBe(PROTO_BODY);
    const [result] = await resultsOf(runId);
    expect(JSON.stringify(result.data.body)).toBe(PROTO_BODY);
    await expectNoPollution(runId);
  });

  it("query and header names __proto__ and constructor reach the upstream", async () => {
    const runId = await started({
      steps: [
        {
          id: "q",
          tool: "http",
          params: {
            url: `${upstreamUrl}/echo`,
            query: json('{"__proto__":"qp","constructor":"qc","toString":"qt"}'),
            headers: json('{"__proto__":"hv"}'),
          },
        },
      ],
    });
    expect((await drive(runId)).status).toBe("completed");
    const [call] = await runCalls(runId, "/echo");
    const query = new URLSearchParams(call.query);
    expect([query.get("__proto__"), query.get("constructor"), query.get("toString")]).toEqual([
      "qp",
      "qc",
      "qt",
    ]);
    expect(call.headers.__proto__).toBe("hv");
    await expectNoPollution(runId);
  });

  it("a registry tool's params named __proto__ become its query string and its body", async () => {
    const runId = await started({
      steps: [
        { id: "get", tool: "facilities_list", params: json('{"__proto__":"p","location":"B"}') },
        { id: "post", tool: "analytics", params: json(PROTO_BODY) },
      ],
    });
    expect((await drive(runId)).status).toBe("completed");
    const [get] = await runCalls(runId, "/facilities");
    expect(new URLSearchParams(get.query).get("__proto__")).toBe("p");
    const [sent] = await runCalls(runId, "/echo");
    expect(sent.body).toBe(PROTO_BODY);
    await expectNoPollution(runId);
  });

  it("pass, whole-value templates, interpolation and input keep them", async () => {
    const runId = await started({
      input: json(PROTO_VALUE),
      steps: [
        { id: "a", tool: "pass", params: { value: json(PROTO_VALUE) } },
        { id: "whole", tool: "pass", params: { value: "${steps.a.data}" } },
        { id: "nested", tool: "pass", params: { value: { copy: "${steps.a.data}" } } },
        { id: "text", tool: "pass", params: { value: "v=${steps.a.data}" } },
        { id: "input", tool: "pass", params: { value: "${input}" } },
        { id: "member", tool: "pass", params: { value: "${steps.a.data.__proto__.polluted}" } },
      ],
    });
    expect((await drive(runId)).status).toBe("completed");
    const data = Object.fromEntries((await resultsOf(runId)).map((r) => [r.stepId, r.data]));
    expect(JSON.stringify(data.a)).toBe(PROTO_VALUE);
    expect(JSON.stringify(data.whole)).toBe(PROTO_VALUE);
    expect(JSON.stringify(data.nested.copy)).toBe(PROTO_VALUE);
    expect(data.text).toBe(`v=${PROTO_VALUE}`);
    expect(JSON.stringify(data.input)).toBe(PROTO_VALUE);
    expect(data.member).toBe("yes");
    await expectNoPollution(runId);
  });

  it("forEach items and a callback's output keep them", async () => {
    const runId = await started({
      steps: [
        { id: "each", tool: "pass", forEach: [json(PROTO_BODY)], params: { value: "${item}" } },
        {
          id: "cb",
          tool: "callback",
          params: { url: `${upstreamUrl}/echo`, body: json(PROTO_BODY) },
          timeoutMs: 600_000,
        },
      ],
    });
    await drive(runId);
    const [sent] = await callsWithRun("/echo", runId);
    expect(sent.body).toContain(`"input":${PROTO_BODY}`);
    const { token } = JSON.parse(sent.body);
    const answered = await api(`/v1/callbacks/${token}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"output":${PROTO_VALUE}}`,
    });
    expect(answered.status).toBe(200);
    expect((await drive(runId)).status).toBe("completed");
    const data = Object.fromEntries((await resultsOf(runId)).map((r) => [r.stepId, r.data]));
    expect(JSON.stringify(data.each)).toBe(`[${PROTO_BODY}]`);
    expect(JSON.stringify(data.cb)).toBe(PROTO_VALUE);
    await expectNoPollution(runId);
  });
});

describe("step ids named after Object.prototype members", () => {
  const NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"];

  it("resolve in ${steps.<id>...}, by dotted name and in brackets", async () => {
    const runId = await started({
      steps: [
        ...NAMES.map((id) => ({ id, tool: "pass", params: { value: { x: `is ${id}` } } })),
        {
          id: "read",
          tool: "pass",
          params: {
            value: {
              dotted: NAMES.map((id) => `\${steps.${id}.data.x}`),
              bracket: NAMES.map((id) => `\${steps['${id}'].data.x}`),
              text: "${steps.__proto__.data.x}/${steps.constructor.data}",
            },
          },
        },
      ],
    });
    const s = await drive(runId);
    expect(byId(s).read).toMatchObject({ status: "succeeded" });
    const expected = NAMES.map((id) => `is ${id}`);
    expect((await stepDetail(runId, "read")).data).toEqual({
      dotted: expected,
      bracket: expected,
      text: 'is __proto__/{"x":"is constructor"}',
    });
    expect((await stepDetail(runId, "__proto__")).data).toEqual({ x: "is __proto__" });
    await expectNoPollution(runId);
  });

  it("a forEach over a step named __proto__ and a when on one named constructor", async () => {
    const runId = await started({
      steps: [
        { id: "__proto__", tool: "pass", params: { value: [1, 2] } },
        { id: "constructor", tool: "pass", params: { value: true } },
        {
          id: "each",
          tool: "pass",
          forEach: "${steps.__proto__.data}",
          when: "${steps.constructor.data}",
          params: { value: "${item}" },
        },
      ],
    });
    const s = await drive(runId);
    expect(byId(s).each.status).toBe("succeeded");
    expect((await stepDetail(runId, "each")).data).toEqual([1, 2]);
  });
});

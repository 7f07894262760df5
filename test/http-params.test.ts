/**
 * The http tool's params once templates are resolved (SPEC 3.2, 4): a header written as a
 * whole-value template takes the value's type, and is sent as text as a query value is.
 */
import { describe, expect, it } from "vitest";
import { callsWithRun, drive, execute, started, stepDetail, upstreamUrl } from "./helpers";

describe("http params resolved from templates", () => {
  it("sends a header whose template resolves to a number, an array or an object as text; null leaves it out", async () => {
    const s = await execute({
      input: { n: 5, on: true, nothing: null },
      steps: [
        { id: "src", tool: "pass", params: { value: { list: [{ id: "S1" }, { id: "S2" }] } } },
        {
          id: "call",
          tool: "http",
          params: {
            url: `${upstreamUrl}/echo`,
            headers: {
              "x-n": "${input.n}",
              "x-on": "${input.on}",
              "x-ids": "${steps.src.data.list.*.id}",
              "x-first": "${steps.src.data.list[0]}",
              "x-nothing": "${input.nothing}",
            },
          },
        },
      ],
    });
    expect(s.status).toBe("completed");
    const { headers } = (await stepDetail(s.runId, "call")).data;
    expect(headers).toMatchObject({
      "x-n": "5",
      "x-on": "true",
      "x-ids": "S1,S2",
      "x-first": '{"id":"S1"}',
    });
    expect(headers).not.toHaveProperty("x-nothing");
  });

  it("takes its method from a template, checked when the step runs", async () => {
    const s = await execute({
      input: { m: "put", bad: "FETCH" },
      steps: [
        {
          id: "put",
          tool: "http",
          params: { url: `${upstreamUrl}/echo`, method: "${input.m}", body: { a: 1 } },
        },
        {
          id: "bad",
          tool: "http",
          params: { url: `${upstreamUrl}/echo`, method: "${input.bad}" },
          retry: { maxRetries: 0 },
        },
      ],
      config: { failFast: false },
    });
    expect((await stepDetail(s.runId, "put")).data).toMatchObject({ method: "PUT" });
    const bad = await stepDetail(s.runId, "bad");
    expect(bad.error).toMatchObject({ category: "invalid_data" });
    expect(bad.error.message).toMatch(/^invalid http params: method: /);
  });

  it("does the same for the callback tool's outbound POST", async () => {
    const runId = await started({
      input: { n: 5, ids: ["S1", "S2"], nothing: null },
      steps: [
        {
          id: "cb",
          tool: "callback",
          params: {
            url: `${upstreamUrl}/echo`,
            headers: {
              "x-n": "${input.n}",
              "x-ids": "${input.ids}",
              "x-nothing": "${input.nothing}",
            },
          },
        },
      ],
    });
    expect((await drive(runId)).status).toBe("waiting");
    const [call] = await callsWithRun("/echo", runId);
    expect(call.headers).toMatchObject({ "x-n": "5", "x-ids": "S1,S2" });
    expect(call.headers).not.toHaveProperty("x-nothing");
  });

  it("names the path of a callback param that does not fit once resolved", async () => {
    const s = await execute({
      input: { url: 42 },
      steps: [
        { id: "cb", tool: "callback", params: { url: "${input.url}" }, retry: { maxRetries: 0 } },
      ],
    });
    expect(s.status).toBe("failed");
    const cb = await stepDetail(s.runId, "cb");
    expect(cb.error).toMatchObject({ category: "invalid_data" });
    expect(cb.error.message).toMatch(/^invalid callback params: url: /);
  });
});

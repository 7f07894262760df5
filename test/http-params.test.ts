/**
 * The http tool's params once templates are resolved (SPEC 3.2, 4): a header written as a
 * whole-value template takes the value's type, and is sent as text as a query value is.
 */
import { describe, expect, it } from "vitest";
import { execute, stepDetail, upstreamUrl } from "./helpers";

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
});

/** Reading request bodies: size limit (413) and JSON parsing (400 naming the problem). */
import type { Context } from "hono";
import { InvalidPlanError, PayloadTooLargeError } from "../errors";

export async function readJson(c: Context<any>, maxBytes: number, what = "plan", maxDepth = 64): Promise<unknown> {
  const declared = Number(c.req.header("content-length"));
  if (declared > maxBytes) throw tooLarge(what, maxBytes);
  const bytes = await c.req.arrayBuffer();
  if (bytes.byteLength > maxBytes) throw tooLarge(what, maxBytes);
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "") throw new InvalidPlanError([{ path: "", message: `request body is empty: send the ${what} as JSON` }]);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new InvalidPlanError([{ path: "", message: `malformed JSON: ${(err as Error).message}` }]);
  }
  const deep = tooDeep(value, maxDepth);
  if (deep !== null) {
    throw new InvalidPlanError([{ path: deep, message: `nested deeper than ${maxDepth} levels (MAX_JSON_DEPTH)` }]);
  }
  return value;
}

/** The path of the first value nested deeper than `max`, or null. Iterative: no recursion to overflow. */
function tooDeep(root: unknown, max: number): string | null {
  const stack: [unknown, number, string][] = [[root, 0, ""]];
  while (stack.length > 0) {
    const [value, depth, path] = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth >= max) return path;
    for (const [k, v] of Object.entries(value)) stack.push([v, depth + 1, path === "" ? k : `${path}.${k}`]);
  }
  return null;
}

function tooLarge(what: string, maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`the ${what} is larger than ${maxBytes} bytes (MAX_PLAN_BYTES)`);
}

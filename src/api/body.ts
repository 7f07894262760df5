/** Reading request bodies: size limit (413) and JSON parsing (400 naming the problem). */
import type { Context } from "hono";
import { InvalidPlanError, PayloadTooLargeError } from "../errors";

export async function readJson(c: Context<any>, maxBytes: number, what = "plan"): Promise<unknown> {
  const declared = Number(c.req.header("content-length"));
  if (declared > maxBytes) throw tooLarge(what, maxBytes);
  const bytes = await c.req.arrayBuffer();
  if (bytes.byteLength > maxBytes) throw tooLarge(what, maxBytes);
  const text = new TextDecoder().decode(bytes);
  if (text.trim() === "") throw new InvalidPlanError([{ path: "", message: `request body is empty: send the ${what} as JSON` }]);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new InvalidPlanError([{ path: "", message: `malformed JSON: ${(err as Error).message}` }]);
  }
}

function tooLarge(what: string, maxBytes: number): PayloadTooLargeError {
  return new PayloadTooLargeError(`the ${what} is larger than ${maxBytes} bytes (MAX_PLAN_BYTES)`);
}

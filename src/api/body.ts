/** Reading request bodies: size limit (413) and JSON parsing (400 naming the problem). */
import type { Context } from "hono";
import { pathDeeperThan } from "../engine/json-depth";
import { joinPath } from "../engine/validate";
import { InvalidPlanError, PayloadTooLargeError } from "../errors";

/** How a JSON body is read: its size limit, how deep it may nest, and where its 400s point. */
export interface JsonBody {
  maxBytes: number;
  /** What the body is, in messages: "plan", "repair", "request body". */
  what: string;
  maxDepth?: number;
  /** What the 413 names as the limit passed (a plan's is MAX_PLAN_BYTES). */
  limitName?: string;
  /** Where the body sits in issue paths: "" for a plan (`steps.0.id`), "body" for a control body (`body.x`). */
  at?: string;
  code?: InvalidPlanError["code"];
  /** What a body of nothing but whitespace reads as; without it, such a body is a 400. */
  whenEmpty?: unknown;
}

export async function readJson(c: Context<any>, body: JsonBody): Promise<unknown> {
  const { maxBytes, what, maxDepth = 64, limitName = "MAX_PLAN_BYTES", at = "" } = body;
  const invalid = (path: string, message: string) =>
    new InvalidPlanError([{ path: joinPath(at, path), message }], body.code);
  const declared = Number(c.req.header("content-length"));
  if (declared > maxBytes) throw tooLarge(what, maxBytes, limitName);
  const bytes = await readBytes(c.req.raw.body, maxBytes, () =>
    tooLarge(what, maxBytes, limitName),
  );
  let text: string;
  try {
    // Fatal: a plan whose bytes are not UTF-8 is rejected, not silently altered with U+FFFD.
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw invalid("", `the ${what} is not valid UTF-8: send it as UTF-8 JSON`);
  }
  if (text.trim() === "") {
    if (body.whenEmpty !== undefined) return body.whenEmpty;
    throw invalid("", `request body is empty: send the ${what} as JSON`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid("", `malformed JSON: ${(err as Error).message}`);
  }
  const deep = pathDeeperThan(value, maxDepth);
  if (deep !== null) throw invalid(deep, `nested deeper than ${maxDepth} levels (MAX_JSON_DEPTH)`);
  return value;
}

/**
 * The body's bytes, read chunk by chunk: a body without a content-length (chunked) that
 * passes `maxBytes` is a 413 as soon as it does, not after it was all held in memory.
 */
async function readBytes(
  body: ReadableStream<Uint8Array> | null,
  maxBytes: number,
  tooBig: () => Error,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array(0);
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooBig();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

function tooLarge(what: string, maxBytes: number, limitName: string): PayloadTooLargeError {
  return new PayloadTooLargeError(`the ${what} is larger than ${maxBytes} bytes (${limitName})`);
}

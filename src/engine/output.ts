/**
 * The limits on what a step stores as its output (SPEC 7 `MAX_OUTPUT_BYTES`, and
 * `MAX_OUTPUT_DEPTH`): bytes, because an output is one SQLite value, and nesting, because
 * every read of it crosses a Durable Object RPC (structured clone) and JSON.stringify, which
 * overflow the stack on a few thousand levels. An output is checked once, when it is stored,
 * so every read path (results, step detail, templates, forEach assembly) stays safe. Pure.
 */
import { MAX_SAFE_DEPTH, jsonTextTooDeep } from "./json-depth";
import type { StepError } from "./records";

export interface OutputLimits {
  maxOutputBytes: number;
  maxOutputDepth: number;
}

export const DEFAULT_MAX_OUTPUT_DEPTH = 128;

const utf8 = new TextEncoder();

export type StoredOutput = { ok: true; json: string } | { ok: false; error: StepError };

/**
 * The JSON to store for an output, or the error that fails the step instead: too many
 * bytes is `output_too_large`, too deep is `invalid_data` (neither is retried). A forEach
 * item (`item`) may nest one level less: the step's data holds it inside an array.
 */
export function storedOutput(output: unknown, limits: OutputLimits, item = false): StoredOutput {
  const what = item ? "item output" : "output";
  const maxDepth = limits.maxOutputDepth - (item ? 1 : 0);
  const limit = item
    ? `MAX_OUTPUT_DEPTH ${limits.maxOutputDepth}, less one for the step's array`
    : "MAX_OUTPUT_DEPTH";
  const tooDeep = (): StoredOutput => ({
    ok: false,
    error: {
      category: "invalid_data",
      message: `${what} is nested deeper than ${maxDepth} levels (${limit})`,
    },
  });
  let json: string;
  try {
    json = JSON.stringify(output ?? null);
  } catch (err) {
    if (err instanceof RangeError) return tooDeep(); // so deep that stringify overflowed
    throw err;
  }
  // A UTF-16 code unit is at most 3 bytes of UTF-8: most outputs need no encoding to know.
  const bytes =
    json.length * 3 <= limits.maxOutputBytes ? json.length : utf8.encode(json).byteLength;
  if (bytes > limits.maxOutputBytes) {
    return {
      ok: false,
      error: {
        category: "output_too_large",
        message: `${what} is ${bytes} bytes, more than MAX_OUTPUT_BYTES (${limits.maxOutputBytes})`,
      },
    };
  }
  return jsonTextTooDeep(json, maxDepth) ? tooDeep() : { ok: true, json };
}

/** What a stored output too deep to read safely (stored before the depth limit existed) reads as. */
export const UNREADABLE_OUTPUT = `[not shown: nested deeper than ${MAX_SAFE_DEPTH} levels]`;

/** A stored output, parsed; one nested deeper than any limit allows reads as UNREADABLE_OUTPUT. */
export function readStoredOutput(json: string): unknown {
  return jsonTextTooDeep(json, MAX_SAFE_DEPTH) ? UNREADABLE_OUTPUT : JSON.parse(json);
}

/** A stored output as JSON text to send on: itself, or UNREADABLE_OUTPUT like `readStoredOutput`. */
export function storedOutputText(json: string): string {
  return jsonTextTooDeep(json, MAX_SAFE_DEPTH) ? JSON.stringify(UNREADABLE_OUTPUT) : json;
}

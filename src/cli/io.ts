/** Reading what the user points the CLI at: plan files (or stdin) and JSON arguments. */
import { readFile } from "node:fs/promises";
import { UsageError } from "./context.ts";

async function readBytes(path: string): Promise<Buffer> {
  if (path !== "-") return readFile(path);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * JSON is UTF-8 text: bytes that are not would be sent with U+FFFD in their place, so they are
 * refused; a byte order mark (which some editors write) is dropped.
 */
function parse(bytes: Buffer, what: string): unknown {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${what} is not UTF-8 text`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${what} is not JSON: ${(err as Error).message}`);
  }
}

/** A JSON file, or standard input for `-`. */
export async function readJsonFile(path: string): Promise<unknown> {
  const what = path === "-" ? "standard input" : path;
  let bytes: Buffer;
  try {
    bytes = await readBytes(path);
  } catch (err) {
    throw new UsageError(`cannot read ${what}: ${(err as Error).message}`);
  }
  return parse(bytes, what);
}

/** A plan file: JSON holding an object. */
export async function readPlan(path: string): Promise<Record<string, unknown>> {
  const plan = await readJsonFile(path);
  if (plan === null || typeof plan !== "object" || Array.isArray(plan)) {
    throw new UsageError(
      `${path === "-" ? "standard input" : path} does not hold a plan (a JSON object)`,
    );
  }
  return plan as Record<string, unknown>;
}

/** `--input` and the like: a JSON file's path, or JSON itself (`'{"city":"Berlin"}'`). */
export async function readJsonArgument(value: string, option: string): Promise<unknown> {
  try {
    return JSON.parse(value) as unknown;
  } catch {
    try {
      return parse(await readFile(value), value);
    } catch (err) {
      if (err instanceof UsageError) throw err;
      throw new UsageError(`${option}: "${value}" is neither JSON nor a readable file`);
    }
  }
}

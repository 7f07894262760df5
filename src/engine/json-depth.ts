/**
 * How deeply JSON nests. Structured clone (every Durable Object RPC value) and
 * JSON.stringify recurse, and overflow the stack from a few thousand levels; these checks
 * are iterative, so they never do, however deep their input.
 *
 * Depth counts containers: `1` and `"a"` have depth 0, `{}` and `[1]` depth 1, `[[1]]` depth 2.
 */

/**
 * The most any depth setting (MAX_JSON_DEPTH, MAX_OUTPUT_DEPTH) may be: structured clone
 * overflows some thousands of levels down, and what is read adds a few levels around it.
 */
export const MAX_SAFE_DEPTH = 1000;

/**
 * Whether JSON text nests objects and arrays more than `max` levels deep. One pass over the
 * characters, no allocation: strings are skipped whole, so brackets inside them do not count.
 * Text that is not valid JSON is scanned the same way (its parse fails later, if at all).
 */
export function jsonTextTooDeep(text: string, max: number): boolean {
  if (text.length <= max) return false; // each level takes at least one character
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      i = closingQuote(text, i);
      if (i < 0) return false;
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (++depth > max) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}

/** Index of the `"` that closes the string opened at `open` (one not escaped), or -1. */
function closingQuote(text: string, open: number): number {
  for (let at = open; ;) {
    at = text.indexOf('"', at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c /* \ */) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/**
 * The dotted path of the first value nested more than `max` levels deep, or null: where a
 * submitted document is too deep, for its 400. Walks the value with an explicit stack.
 */
export function pathDeeperThan(root: unknown, max: number): string | null {
  const stack: [unknown, number, string][] = [[root, 0, ""]];
  while (stack.length > 0) {
    const [value, depth, path] = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth >= max) return path;
    for (const [k, v] of Object.entries(value))
      stack.push([v, depth + 1, path === "" ? k : `${path}.${k}`]);
  }
  return null;
}

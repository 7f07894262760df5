/** A Worker variable holding JSON (SPEC 7: TOOLS, DESTINATIONS): an object, or a string holding one. */

/** The variable's value as parsed JSON (unset or blank: `{}`); throws naming `name` when it is not JSON. */
export function jsonVariable(value: unknown, name: string): unknown {
  if (typeof value !== "string") return value ?? {};
  try {
    return value.trim() === "" ? {} : JSON.parse(value);
  } catch (err) {
    throw new Error(`${name} is not valid JSON: ${(err as Error).message}`);
  }
}

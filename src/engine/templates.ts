/**
 * Templates (SPEC 3): `${EXPR}` inside strings of `params`, `when` and `forEach`.
 * EXPR is a JSONPath without its leading `$`, evaluated with jsonpath-plus against
 * `{ step, steps, input, item, index, run }`.
 *
 * Parsing is done once at validation (syntax errors, step references, implicit
 * dependencies); resolution happens when a step is dispatched.
 */
import { JSONPath } from "jsonpath-plus";
import type { StepError } from "./records";
import {
  FOR_EACH_ROOTS,
  TemplateReferenceError,
  TemplateSyntaxError,
  checkExpression,
  findClosingBrace,
} from "./template-syntax";

export {
  FOR_EACH_ROOTS,
  STEP_ROOTS,
  TEMPLATE_ROOTS,
  TemplateReferenceError,
  TemplateSyntaxError,
  VERIFY_ROOTS,
} from "./template-syntax";

export type TemplatePart = { kind: "text"; text: string } | { kind: "expr"; expr: string };

/** A reference from a template to another step, by plan index or by id. */
export type StepRef = { by: "index"; index: number } | { by: "id"; id: string };

/** Thrown while resolving: the path matched nothing (SPEC 3.2). */
export class TemplateUnresolvedError extends Error {
  constructor(readonly expr: string) {
    super(`template \${${expr}} matched nothing`);
  }
}

export function containsTemplate(value: string): boolean {
  return value.includes("${");
}

/** Splits a string into literal text and `${...}` expressions; `roots` are the names they may start with. */
export function parseTemplate(
  value: string,
  roots: ReadonlySet<string> = FOR_EACH_ROOTS,
): TemplatePart[] {
  return splitTemplate(value, (expr) => checkExpression(expr, roots));
}

/** Splits `value` into parts, handing each expression to `check` (which throws what it rejects). */
function splitTemplate(value: string, check: ((expr: string) => void) | null): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let text = "";
  let i = 0;
  while (i < value.length) {
    const start = value.indexOf("${", i);
    if (start < 0) {
      text += value.slice(i);
      break;
    }
    text += value.slice(i, start);
    const end = findClosingBrace(value, start + 2);
    if (end < 0) throw new TemplateSyntaxError(unclosedMessage(value, start));
    const expr = value.slice(start + 2, end).trim();
    check?.(expr);
    if (text) parts.push({ kind: "text", text });
    text = "";
    parts.push({ kind: "expr", expr });
    i = end + 1;
  }
  if (text || parts.length === 0) parts.push({ kind: "text", text });
  return parts;
}

/** Why the `${` at `start` has no end: none at all, or a bracket or quote inside it that is never closed. */
function unclosedMessage(value: string, start: number): string {
  const unclosed = `unclosed "\${" at offset ${start}`;
  if (!value.includes("}", start)) return unclosed;
  return `${unclosed}: a "[", "(" or quote inside it is never closed, so its "}" does not end it`;
}

/** The step an expression reads from, if it starts with `step[N]` or `steps.<id>`. */
export function stepReference(expr: string): StepRef | null {
  if (expr.startsWith("steps")) {
    const rest = expr.slice(5);
    if (rest === "") throw new TemplateSyntaxError('"steps" must name a step: steps.<id>');
    const m = /^\.([A-Za-z0-9_-]+)/.exec(rest) ?? /^\[\s*(['"])([A-Za-z0-9_.-]+)\1\s*\]/.exec(rest);
    const id = m?.[2] ?? m?.[1];
    if (!id)
      throw new TemplateReferenceError(
        `"${expr}" must name one step: steps.<id> or steps['<id>'] (wildcards and filters may follow it)`,
      );
    return { by: "id", id };
  }
  if (expr.startsWith("step")) {
    const m = /^step(?:\[\s*(\d+)\s*\]|\.(\d+))/.exec(expr);
    const n = m?.[1] ?? m?.[2];
    if (n === undefined)
      throw new TemplateReferenceError(
        `"${expr}" must name one step by index: step[N] (wildcards and filters may follow it)`,
      );
    return { by: "index", index: Number(n) };
  }
  return null;
}

/** Whether an expression can match several values (wildcard, recursion, filter, union, slice). */
export function isMultiValued(expr: string): boolean {
  let quote: string | null = null;
  let bracket = 0;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "*") return true;
    else if (c === "." && expr[i + 1] === ".") return true;
    else if (c === "?" && expr[i + 1] === "(") return true;
    else if (c === "[") bracket++;
    else if (c === "]") bracket--;
    else if (bracket > 0 && (c === "," || c === ":")) return true;
  }
  return false;
}

/** Calls `visit` for every string inside a JSON value, with its dotted path suffix. */
export function forEachString(
  value: unknown,
  path: string,
  visit: (s: string, path: string) => void,
): void {
  if (typeof value === "string") visit(value, path);
  else if (Array.isArray(value)) value.forEach((v, i) => forEachString(v, `${path}.${i}`, visit));
  else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) forEachString(v, `${path}.${k}`, visit);
  }
}

/** The evaluation context of SPEC 3.1. `step` may be sparse: only referenced results need be present. */
export interface TemplateContext {
  step: Record<number, unknown>;
  steps: Record<string, unknown>;
  input: unknown;
  run: { id: string; name: string | null };
  item?: unknown;
  index?: number;
  /** In a `verify` template: the step's output. */
  output?: unknown;
}

/**
 * A context without step results yet (add them with `addStepResult`). Its `step` and
 * `steps` maps have no prototype, so a step id such as `__proto__`, `constructor` or
 * `toString` is an ordinary own key there, which jsonpath-plus (it follows own properties
 * only) finds like any other id.
 */
export function newTemplateContext(input: unknown, run: TemplateContext["run"]): TemplateContext {
  return { step: Object.create(null), steps: Object.create(null), input, run };
}

/** Makes a step's result readable as `step[index]` and `steps.<id>`. */
export function addStepResult(
  ctx: TemplateContext,
  index: number,
  id: string,
  result: unknown,
): void {
  ctx.step[index] = result;
  // Defined, not assigned: even on a map with a prototype, `__proto__` stays a key.
  Object.defineProperty(ctx.steps, id, {
    value: result,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}

export function evaluate(expr: string, ctx: TemplateContext): unknown {
  const matches = JSONPath({
    path: `$.${expr}`,
    json: ctx as object,
    wrap: true,
    eval: "safe",
  }) as unknown[];
  if (isMultiValued(expr)) return matches;
  if (matches.length === 0 || matches[0] === undefined) throw new TemplateUnresolvedError(expr);
  return matches[0];
}

/**
 * Resolves every template inside a JSON value (SPEC 3.2). The plan's templates were checked
 * when it was compiled (`parseTemplate`): here they are only split and evaluated.
 */
export function resolveTemplates(value: unknown, ctx: TemplateContext): unknown {
  if (typeof value === "string") return resolveString(value, ctx);
  if (Array.isArray(value)) return value.map((v) => resolveTemplates(v, ctx));
  if (value !== null && typeof value === "object") {
    // fromEntries defines keys: `out[k] = v` would set the prototype for a key named `__proto__`.
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveTemplates(v, ctx)]));
  }
  return value;
}

/** `value`'s parts, or null when it does not parse (left to its own syntax check). */
function partsOrNull(value: string): TemplatePart[] | null {
  try {
    return splitTemplate(value, null);
  } catch {
    return null;
  }
}

/**
 * Whether `value` can only resolve to text: it is not one whole template (`${...}` and nothing
 * around it), the one form that keeps a value's type.
 */
export function resolvesToText(value: string): boolean {
  const parts = partsOrNull(value);
  return parts !== null && (parts.length !== 1 || parts[0]!.kind !== "expr");
}

/**
 * Whether `value` has text of its own around or between its templates (spaces too): resolved,
 * it is that text with the values in it, never a value of another type, never empty.
 */
export function hasTextAround(value: string): boolean {
  const parts = partsOrNull(value) ?? [];
  return (
    parts.some((p) => p.kind === "expr") && parts.some((p) => p.kind === "text" && p.text !== "")
  );
}

function resolveString(value: string, ctx: TemplateContext): unknown {
  if (!containsTemplate(value)) return value;
  const parts = splitTemplate(value, null);
  const only = parts.length === 1 ? parts[0] : undefined;
  if (only?.kind === "expr") return evaluate(only.expr, ctx);
  return parts.map((p) => (p.kind === "text" ? p.text : toText(evaluate(p.expr, ctx)))).join("");
}

/** How a value reads inside a longer string: arrays joined with ",", objects as JSON. */
export function toText(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(toText).join(",");
  if (value !== null && typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Truthiness of a resolved template (SPEC 9.1): `false`, 0, "", null, [] and {} are false. */
export function isTruthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (value !== null && typeof value === "object") return Object.keys(value).length > 0;
  return Boolean(value);
}

/**
 * Truthiness of a resolved `when`: the text "false" is false too, since a condition built by
 * interpolation (`"${input.a}${input.b}"`) or read from text data is text, and "false" there
 * means false. `verify` keeps SPEC 9.1's list, where "false" is a non-empty string.
 */
export function conditionTruthy(value: unknown): boolean {
  return value !== "false" && isTruthy(value);
}

/** A template that failed at run time, as a step error: unresolved paths and bad data are not retried. */
export function templateError(err: unknown): StepError & {
  category: "template_unresolved" | "invalid_data";
} {
  const category = err instanceof TemplateUnresolvedError ? "template_unresolved" : "invalid_data";
  return { category, message: (err as Error).message };
}

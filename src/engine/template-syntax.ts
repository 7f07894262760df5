/**
 * What a template may say (SPEC 2.2, 3.1): where an expression ends, its roots, and the
 * JSONPath shapes jsonpath-plus would silently misread. Checked once, at validation. Pure.
 */
import { JSONPath, type EvalClass } from "jsonpath-plus";

export const TEMPLATE_ROOTS = ["step", "steps", "input", "item", "index", "run"] as const;
/** The roots of a forEach step's params: every root. */
export const FOR_EACH_ROOTS: ReadonlySet<string> = new Set(TEMPLATE_ROOTS);
/** Only a forEach step's params have an item. */
const ITEM_ROOTS: ReadonlySet<string> = new Set(["item", "index"]);
/** The roots outside a forEach step's params (its `when`, `forEach`, compensation, any other step). */
export const STEP_ROOTS: ReadonlySet<string> = new Set(
  TEMPLATE_ROOTS.filter((r) => !ITEM_ROOTS.has(r)),
);
/** A step's `verify` also reads `output`, the data it is checking (SPEC 9.1). */
export const VERIFY_ROOTS: ReadonlySet<string> = new Set([...STEP_ROOTS, "output"]);

export class TemplateSyntaxError extends Error {}

/** Well-formed, but not what a template may read: a step it does not name, an item outside forEach. */
export class TemplateReferenceError extends TemplateSyntaxError {}

/** Index of the `}` closing an expression that starts at `from`, skipping quoted text and nested brackets. */
export function findClosingBrace(s: string, from: number): number {
  let depth = 0;
  let quote: string | null = null;
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "[" || c === "(" || c === "{") depth++;
    else if (c === "]" || c === ")") depth--;
    else if (c === "}") {
      // Below 0 a bracket closed that never opened: the expression ends here, and its check says so.
      if (depth <= 0) return i;
      depth--;
    }
  }
  return -1;
}

/** Throws what a template may not say: a syntax error, or a root it may not read there. */
export function checkExpression(expr: string, roots: ReadonlySet<string>): void {
  if (expr === "") throw new TemplateSyntaxError("empty template expression");
  const root = /^[A-Za-z_][A-Za-z0-9_]*/.exec(expr)?.[0];
  if (!root) throw new TemplateSyntaxError(`template "\${${expr}}" must start with a name`);
  if (ITEM_ROOTS.has(root) && !roots.has(root))
    throw new TemplateReferenceError(`"${root}" exists only in the params of a step with forEach`);
  if (!roots.has(root)) {
    throw new TemplateSyntaxError(
      `unknown template root "${root}" (expected one of ${[...roots].join(", ")})`,
    );
  }
  checkJsonPathShape(expr);
  try {
    const segments = JSONPath.toPathArray(`$.${expr}`);
    JSONPath({ path: `$.${expr}`, json: {}, wrap: true, eval: "safe" });
    for (const script of segments.filter((s) => /^\??\(/.test(s))) checkScript(script);
  } catch (err) {
    throw new TemplateSyntaxError(`invalid JSONPath "${expr}": ${(err as Error).message}`);
  }
}

/** jsonpath-plus's safe evaluator: parses an expression (jsep) when constructed. */
type ScriptClass = new (code: string) => {
  ast: unknown;
  runInNewContext(context: object): unknown;
};
const SafeScript = (JSONPath.prototype as unknown as { safeVm: { Script: ScriptClass } }).safeVm
  .Script;

/** The safe evaluator, refusing what parses but cannot be meant: `=` assigns, it compares nothing. */
class CheckedScript extends SafeScript {
  constructor(code: string) {
    super(code);
    if (assigns(this.ast)) throw new Error(`"=" assigns: compare with "==" or "==="`);
  }

  // jsonpath-plus takes a class as `eval` only when the method is its prototype's own.
  override runInNewContext(context: object): unknown {
    return super.runInNewContext(context);
  }
}

function assigns(node: unknown): boolean {
  if (typeof node !== "object" || node === null) return false;
  if ((node as { type?: unknown }).type === "AssignmentExpression") return true;
  return Object.values(node).some((v) => (Array.isArray(v) ? v.some(assigns) : assigns(v)));
}

/**
 * A filter (`?(...)`) or script (`(...)`) segment is parsed only when it meets a value, so a
 * broken one would pass validation on an empty document: it is run once on a one-element array,
 * which parses it (its evaluation errors on that stand-in value are ignored).
 */
function checkScript(script: string): void {
  JSONPath({
    path: `$[${script}]`,
    json: [0],
    wrap: true,
    eval: CheckedScript as EvalClass,
    ignoreEvalErrors: true,
  });
}

/** jsonpath-plus is lenient; reject what it would silently misread. */
function checkJsonPathShape(expr: string): void {
  const stack: string[] = [];
  let quote: string | null = null;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "[" && stack.length === 0 && /^\[\s*-\d+\s*\]/.test(expr.slice(i))) {
      // jsonpath-plus reads `[-1]` as a key named "-1": it would match nothing, silently.
      throw new TemplateSyntaxError(
        `invalid JSONPath "${expr}": a negative index matches nothing; a slice counts from the end ("[-1:]", a one-element list)`,
      );
    } else if (c === "[" || c === "(") stack.push(c);
    else if (c === "]" || c === ")") {
      const open = stack.pop();
      if ((c === "]" && open !== "[") || (c === ")" && open !== "(")) {
        throw new TemplateSyntaxError(`invalid JSONPath "${expr}": unbalanced "${c}"`);
      }
      if (c === "]" && expr[i - 1] === "[") {
        throw new TemplateSyntaxError(`invalid JSONPath "${expr}": empty brackets`);
      }
    } else if (c === "^" && stack.length === 0) {
      // jsonpath-plus's parent operator climbs out of the step a template names.
      throw new TemplateReferenceError(
        `"${expr}": the parent operator "^" is not supported (a template reads the step it names)`,
      );
    } else if (/\s/.test(c) && stack.length === 0) {
      throw new TemplateSyntaxError(`invalid JSONPath "${expr}": unexpected space`);
    }
  }
  if (quote) throw new TemplateSyntaxError(`invalid JSONPath "${expr}": unclosed quote`);
  if (stack.length > 0)
    throw new TemplateSyntaxError(`invalid JSONPath "${expr}": unclosed "${stack.pop()}"`);
  if (expr.endsWith(".") && !expr.endsWith("..")) {
    throw new TemplateSyntaxError(`invalid JSONPath "${expr}": ends with "."`);
  }
  if (expr.endsWith(".."))
    throw new TemplateSyntaxError(`invalid JSONPath "${expr}": ends with ".."`);
}

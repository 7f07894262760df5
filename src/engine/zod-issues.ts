/**
 * A zod error as the API's issues: one `{ path, message }` per problem, the path dotted into
 * the submitted document, and one issue per unknown field so each can be found. Shared by plan
 * validation (shape and tool params), the planner's answers and request bodies. Pure.
 */
import type { z } from "zod";
import type { Issue } from "../errors";

export function zodIssues(error: Pick<z.ZodError, "issues">): Issue[] {
  const issues: Issue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        issues.push({ path: [...path, key].join("."), message: `unknown field "${key}"` });
      }
    } else if (issue.code === "invalid_union" && issue.errors.length > 0) {
      issues.push({ path: path.join("."), message: unionMessage(issue.errors) });
    } else {
      issues.push({ path: path.join("."), message: issue.message });
    }
  }
  return issues;
}

/** A value that fits none of a union's shapes: what each shape found wrong, not "Invalid input". */
function unionMessage(options: readonly (readonly z.core.$ZodIssue[])[]): string {
  const said = options.map((problems, k) => {
    const each = problems.map((p) => {
      const where = p.path.length > 0 ? `${p.path.map(String).join(".")}: ` : "";
      const what =
        p.code === "unrecognized_keys"
          ? `unknown field${p.keys.length > 1 ? "s" : ""} ${p.keys.map((key) => `"${key}"`).join(", ")}`
          : p.message;
      return `${where}${what}`;
    });
    return `(${k + 1}) ${each.join(", ")}`;
  });
  return `fits none of the ${options.length} allowed shapes: ${said.join("; ")}`;
}

/** An issue's dotted path under `base` (`body` + `x.0` → `body.x.0`); either may be "" (the root). */
export function joinPath(base: string, rest: string): string {
  return base === "" ? rest : rest === "" ? base : `${base}.${rest}`;
}

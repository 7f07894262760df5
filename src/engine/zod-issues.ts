/**
 * A zod error as the API's issues: one `{ path, message }` per problem, the path dotted into
 * the submitted document, and one issue per unknown field so each can be found. Shared by plan
 * validation (shape and tool params), the planner's answers and request bodies. Pure.
 */
import type { z } from "zod";
import type { Issue } from "../errors";

export function zodIssues(error: z.ZodError): Issue[] {
  const issues: Issue[] = [];
  for (const issue of error.issues) {
    const path = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        issues.push({ path: [...path, key].join("."), message: `unknown field "${key}"` });
      }
    } else {
      issues.push({ path: path.join("."), message: issue.message });
    }
  }
  return issues;
}

/** An issue's dotted path under `base` (`body` + `x.0` → `body.x.0`); either may be "" (the root). */
export function joinPath(base: string, rest: string): string {
  return base === "" ? rest : rest === "" ? base : `${base}.${rest}`;
}

/**
 * What submission can and cannot check of fields that templates fill in (SPEC 2.2, 3). Pure.
 * - `when`, `verify` and `forEach` keep the type their one template gives; text of its own
 *   around a template (`"n=${output.n}"`, `"${input.env} == 'prod'"`, spaces too) makes a
 *   string, always truthy and never a list.
 * - A built-in tool's param that a template fills in is held to its type when the step runs,
 *   once resolved (`"method": "${input.m}"`): its value is unknown until then.
 */
import type { z } from "zod";
import type { Issue } from "../errors";
import type { ParsedStep } from "./plan-schema";
import { containsTemplate, hasTextAround, resolvesToText } from "./templates";

const ALWAYS = { verify: "it always passes", when: "the step always runs" } as const;

export function wholeTemplateIssues(step: ParsedStep, at: string): Issue[] {
  const issues: Issue[] = [];
  for (const field of ["verify", "when"] as const) {
    const value = step[field];
    if (typeof value === "string" && hasTextAround(value))
      issues.push({
        path: `${at}.${field}`,
        message: `${field} is one template with nothing around it (such as "\${steps.check.data.ok}"): ${JSON.stringify(value)} is always text, so ${ALWAYS[field]}`,
      });
  }
  if (typeof step.forEach === "string" && resolvesToText(step.forEach))
    issues.push({
      path: `${at}.forEach`,
      message: `forEach is a list, or one template for a list with nothing around it (such as "\${steps.a.data.items}"): ${JSON.stringify(step.forEach)} is always text`,
    });
  return issues;
}

/**
 * Whether a tool's params issue is about a value a template fills in: a string on the issue's
 * path (the value there, or one holding it) with a template. An issue marked
 * `whateverTheValue` (a header's name) holds whatever the value.
 */
export function decidedWhenRun(params: unknown, issue: z.core.$ZodIssue): boolean {
  if (issue.code === "custom" && issue.params?.["whateverTheValue"] === true) return false;
  let at = params;
  for (const key of [undefined, ...issue.path]) {
    if (key !== undefined) {
      if (typeof at !== "object" || at === null) return false;
      at = (at as Record<PropertyKey, unknown>)[key];
    }
    if (typeof at === "string") return containsTemplate(at);
  }
  return false;
}

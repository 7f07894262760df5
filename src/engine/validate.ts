/**
 * Plan validation (SPEC 2.2): zod for shape, then the cross-field rules zod cannot
 * express (ids, tools, templates, dependencies, cycles, URLs; see plan-compiler.ts). Every
 * issue carries a dotted path into the submitted document. Pure: no I/O. The entry point:
 * callers import `compilePlan`, `zodIssues`, `joinPath` and the validation types from here.
 */
import type { z } from "zod";
import type { Issue } from "../errors";
import type { CompiledPlan } from "./plan";
import { PlanCompiler } from "./plan-compiler";
import { planSchema } from "./plan-schema";
import { checkStepFields } from "./step-fields";
import { joinPath, zodIssues } from "./zod-issues";

export { joinPath, zodIssues };

/** What validation needs to know about a tool. */
export interface ToolSpec {
  /** Schema of the tool's params; templates may stand for any value, so keep it loose. */
  params?: z.ZodType;
  /** Param names holding a URL the tool will call (checked for http(s) and egress). */
  urlParams?: readonly string[];
  /** A URL the tool always calls, fixed by configuration (a `TOOLS` entry): checked for egress. */
  fixedUrl?: string;
}

export interface ValidationContext {
  maxSteps: number;
  /** Longest `${...}` expression accepted (default 1024 characters). */
  maxTemplateLength?: number;
  /** MAX_PLAN_BYTES, for a plan merged with a repair (a submission's body is held to it first). */
  maxPlanBytes?: number;
  tool(name: string): ToolSpec | undefined;
  /** A reason to reject a literal URL, or null when it is fine. */
  checkUrl(url: string): UrlProblem | null;
}

export interface UrlProblem {
  code: "invalid_plan" | "egress_denied";
  message: string;
}

export type CompileFailure = { ok: false; code: "invalid_plan" | "egress_denied"; issues: Issue[] };

export type CompileResult = { ok: true; plan: CompiledPlan; warnings: Issue[] } | CompileFailure;

/** `warnings`: unknown step fields that were ignored; one that looks like a typo is an issue. */
export function compilePlan(raw: unknown, ctx: ValidationContext): CompileResult {
  const { typos, warnings } = checkStepFields(raw);
  const parsed = planSchema(ctx.maxSteps).safeParse(raw);
  if (!parsed.success)
    return { ok: false, code: "invalid_plan", issues: [...typos, ...zodIssues(parsed.error)] };
  const result = new PlanCompiler(parsed.data, ctx).compile();
  if (!result.ok) return { ...result, issues: [...typos, ...result.issues] };
  if (typos.length > 0) return { ok: false, code: "invalid_plan", issues: typos };
  return { ...result, warnings };
}

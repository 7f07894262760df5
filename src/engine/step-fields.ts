/**
 * Unknown step fields (SPEC 2.1 accepts extra fields on steps: agents leave notes there).
 * A silent typo is worse than a rejected plan, though: `{"id":"b","dependOn":["a"]}` would run
 * `b` in parallel with `a`. So an unknown field close to a known one is an issue (`did you
 * mean "dependsOn"`), and every other unknown field is a warning the API returns. Pure.
 */
import { distance } from "fastest-levenshtein";
import type { Issue } from "../errors";
import { stepSchema } from "./plan-schema";

const KNOWN_FIELDS = Object.keys(stepSchema.shape);

/** Case, `_` and `-` do not make a different field: `depends-on`, `DependsOn`, `for_each`. */
const normalize = (field: string) => field.toLowerCase().replace(/[_-]/g, "");

/** Edits allowed between a typo and the field it misspells: none for `id`, then 1, then 2. */
function tolerance(known: string): number {
  if (known.length <= 2) return 0;
  return known.length <= 5 ? 1 : 2;
}

/**
 * Other executors' names for a step's fields (nikcli's `dependencies` and `riskLevel`, GitHub
 * Actions' `needs`, `if`...), by their normalized form. Ignored, each would quietly change
 * what runs: a step starting before its dependencies, a high-risk step without its approval,
 * a conditional step running always. So they are issues, like typos.
 */
const SYNONYMS: Record<string, string> = {
  dependencies: "dependsOn",
  deps: "dependsOn",
  needs: "dependsOn",
  requires: "dependsOn",
  risklevel: "risk",
  toolname: "tool",
  toolargs: "params",
  args: "params",
  arguments: "params",
  parameters: "params",
  condition: "when",
  if: "when",
  compensation: "compensate",
};

/** The known field `field` most likely misspells, or undefined when it is too far from every one. */
export function closestStepField(field: string): string | undefined {
  const typed = normalize(field);
  if (Object.hasOwn(SYNONYMS, typed)) return SYNONYMS[typed];
  let best: { known: string; edits: number } | undefined;
  for (const known of KNOWN_FIELDS) {
    const edits = distance(typed, normalize(known));
    if (edits <= tolerance(known) && (best === undefined || edits < best.edits)) {
      best = { known, edits };
    }
  }
  return best?.known;
}

export interface StepFieldFindings {
  /** Unknown fields within a few edits of a known one: the plan is rejected. */
  typos: Issue[];
  /** Other unknown fields: accepted, ignored, and reported. */
  warnings: Issue[];
}

/** Warnings listed one by one; past this many, one more says how many were left out. */
const MAX_WARNINGS = 100;

/** Known fields a tool does not use, and why: accepted, and reported, so that none is a surprise. */
const UNUSED_BY_TOOL: Record<string, Record<string, string>> = {
  approval: { timeoutMs: "an approval waits until someone answers it" },
  wait: { timeoutMs: "a wait lasts as its params say" },
};

function unusedFieldWarning(step: object, field: string): string | undefined {
  // A compensation's call takes its step's timeoutMs: then the field does bound something.
  if ("compensate" in step) return undefined;
  const tool = (step as { tool?: unknown }).tool;
  const why = typeof tool === "string" ? UNUSED_BY_TOOL[tool]?.[field] : undefined;
  return why && `${field} has no effect on a step of tool "${tool as string}": ${why}`;
}

/** Looks at the raw plan's steps (whatever their shape: zod reports what is malformed). */
export function checkStepFields(raw: unknown): StepFieldFindings {
  const findings: StepFieldFindings = { typos: [], warnings: [] };
  const steps = (raw as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(steps)) return findings;
  let ignored = 0;
  steps.forEach((step: unknown, i) => {
    if (step === null || typeof step !== "object" || Array.isArray(step)) return;
    for (const field of Object.keys(step)) {
      const path = `steps.${i}.${field}`;
      const unused = unusedFieldWarning(step, field);
      if (unused && findings.warnings.length < MAX_WARNINGS)
        findings.warnings.push({ path, message: unused });
      if (KNOWN_FIELDS.includes(field)) continue;
      const known = closestStepField(field);
      if (known !== undefined) {
        findings.typos.push({
          path,
          message: `unknown step field "${field.slice(0, 64)}": did you mean "${known}"?`,
        });
      } else {
        ignored++;
        if (findings.warnings.length < MAX_WARNINGS)
          findings.warnings.push({
            path,
            message: `unknown step field "${field.slice(0, 64)}" was ignored`,
          });
      }
    }
  });
  if (ignored > MAX_WARNINGS) {
    findings.warnings.push({
      path: "steps",
      message: `${ignored - MAX_WARNINGS} more unknown step fields were ignored`,
    });
  }
  return findings;
}

/** The plan a run executes, as a plan document (GET /v1/runs/:id/plan). Pure. */
import type { CompiledPlan } from "./plan";

/** Header values a plan sets by hand (a token in an `http` step's headers) never leave the run. */
function withoutHeaderValues(params: Record<string, unknown>): Record<string, unknown> {
  const headers = params.headers;
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) return params;
  return {
    ...params,
    headers: Object.fromEntries(Object.keys(headers).map((name) => [name, "[redacted]"])),
  };
}

/**
 * `GET /v1/runs/:id/plan`: the plan the run executes, as a plan document with every default
 * filled in and every dependency (explicit and from templates) in `dependsOn`, by id. Its
 * `revision` counts the repairs applied to it (SPEC 9.2; 0 until replanning exists). The
 * webhook's secret and header values are left out: the console draws the DAG from this.
 */
export function planView(plan: CompiledPlan) {
  const ids = plan.steps.map((s) => s.id);
  return {
    revision: 0,
    plan: {
      ...(plan.name !== null && { name: plan.name }),
      ...(plan.input !== null && plan.input !== undefined && { input: plan.input }),
      config: plan.config,
      ...(plan.webhook && { webhook: { url: plan.webhook.url } }),
      steps: plan.steps.map((s) => ({
        id: s.id,
        tool: s.tool,
        params: withoutHeaderValues(s.params),
        dependsOn: s.deps.map((d) => ids[d]!),
        ...(s.when !== undefined && { when: s.when }),
        trigger: s.trigger,
        retry: s.retry,
        timeoutMs: s.timeoutMs,
        onFailure: s.onFailure,
        ...(s.risk !== undefined && { risk: s.risk }),
        ...(s.readonly !== undefined && { readonly: s.readonly }),
        ...(s.forEach !== undefined && { forEach: s.forEach }),
        ...(s.maxConcurrency !== undefined && { maxConcurrency: s.maxConcurrency }),
        ...(s.compensate && {
          compensate: { tool: s.compensate.tool, params: withoutHeaderValues(s.compensate.params) },
        }),
      })),
    },
  };
}

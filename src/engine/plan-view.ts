/** The plan a run executes, as a plan document (GET /v1/runs/:id/plan, and repairs). Pure. */
import type { CompiledPlan } from "./plan";

/** Header values a plan sets by hand (a token in an `http` step's headers) never leave the run. */
export function withoutHeaderValues(params: Record<string, unknown>): Record<string, unknown> {
  const headers = params.headers;
  if (typeof headers !== "object" || headers === null || Array.isArray(headers)) return params;
  return {
    ...params,
    headers: Object.fromEntries(Object.keys(headers).map((name) => [name, "[redacted]"])),
  };
}

/**
 * The compiled plan as a plan document that validates as a plan again: every default filled
 * in and every dependency (explicit and from templates) in `dependsOn`, by id. With `redact`
 * (what leaves the run) the webhook's secret and header values are left out; without it (a
 * repair merges into it, SPEC 9.2) the document is the plan whole.
 */
export function planDocument(plan: CompiledPlan, { redact }: { redact: boolean }) {
  const ids = plan.steps.map((s) => s.id);
  const params = redact ? withoutHeaderValues : (p: Record<string, unknown>) => p;
  return {
    ...(plan.name !== null && { name: plan.name }),
    ...(plan.input !== null && plan.input !== undefined && { input: plan.input }),
    ...(plan.tags && Object.keys(plan.tags).length > 0 && { tags: plan.tags }),
    config: plan.config,
    ...(plan.webhook && { webhook: redact ? { url: plan.webhook.url } : plan.webhook }),
    ...(plan.replan && { replan: plan.replan }),
    steps: plan.steps.map((s) => ({
      id: s.id,
      tool: s.tool,
      params: params(s.params),
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
      ...(s.verify !== undefined && { verify: s.verify }),
      ...(s.compensate && {
        compensate: { tool: s.compensate.tool, params: params(s.compensate.params) },
      }),
    })),
  };
}

/**
 * `GET /v1/runs/:id/plan`: the plan the run executes (with every repair merged in) and its
 * `revision`, the number of repairs applied to it (SPEC 9.2). The console draws the DAG from it.
 */
export function planView(plan: CompiledPlan) {
  return { revision: plan.revision ?? 0, plan: planDocument(plan, { redact: true }) };
}

/** The plan a run executes, as a plan document (GET /v1/runs/:id/plan, and repairs). Pure. */
import type { CompiledPlan } from "./plan";

/** What a header value that never leaves the run reads as outside it. */
export const REDACTED = "[redacted]";

type Headers = Record<string, unknown>;

function headersOf(params: unknown): Headers | null {
  const headers = (params as { headers?: unknown } | null)?.headers;
  return typeof headers === "object" && headers !== null && !Array.isArray(headers)
    ? (headers as Headers)
    : null;
}

/** Header values a plan sets by hand (a token in an `http` step's headers) never leave the run. */
export function withoutHeaderValues(params: Record<string, unknown>): Record<string, unknown> {
  const headers = headersOf(params);
  if (headers === null) return params;
  return {
    ...params,
    headers: Object.fromEntries(Object.keys(headers).map((name) => [name, REDACTED])),
  };
}

/**
 * The inverse for a repair (SPEC 9.2): a planner sees a step's header values as `[redacted]`,
 * so a redefinition that sends a header back as it saw it keeps the value the step had
 * (params and compensation alike); any other value is the repair's.
 */
export function withHeaderValuesOf(
  step: { params: Record<string, unknown>; compensate?: { params: Record<string, unknown> } },
  redefinition: unknown,
): unknown {
  if (typeof redefinition !== "object" || redefinition === null) return redefinition;
  const restore = (params: unknown, original: Record<string, unknown> | undefined) => {
    const headers = headersOf(params);
    const before = original === undefined ? null : headersOf(original);
    if (headers === null || before === null) return params;
    // Header names are case-insensitive: `Authorization` sent back keeps `authorization`'s value.
    const sent = new Map(Object.entries(before).map(([k, v]) => [k.toLowerCase(), v]));
    const kept = (name: string, value: unknown) => {
      const key = name.toLowerCase();
      return value === REDACTED && sent.has(key) ? sent.get(key) : value;
    };
    const entries = Object.entries(headers).map(([name, v]) => [name, kept(name, v)]);
    return { ...(params as object), headers: Object.fromEntries(entries) };
  };
  const r = redefinition as { params?: unknown; compensate?: { params?: unknown } };
  return {
    ...r,
    ...(r.params !== undefined && { params: restore(r.params, step.params) }),
    ...(typeof r.compensate === "object" &&
      r.compensate !== null && {
        compensate: {
          ...r.compensate,
          params: restore(r.compensate.params, step.compensate?.params),
        },
      }),
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

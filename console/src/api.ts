/** The console's client of the public HTTP API (same origin): JSON in, JSON out, typed. */
import { apiKey, keyNeeded } from "./auth";
import type {
  ApiErrorBody,
  Issue,
  RunCreated,
  RunList,
  RunPlan,
  RunStats,
  RunStatus,
  StepDetail,
  ValidateResult,
} from "./types";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Issue[] = [],
  ) {
    super(message);
  }

  /** The Worker has no such route (as opposed to no such run): a feature this server lacks. */
  get noRoute(): boolean {
    return this.status === 404 && this.message.startsWith("no route for");
  }
}

export function authHeaders(): Record<string, string> {
  const key = apiKey();
  return key ? { authorization: `Bearer ${key}` } : {};
}

async function request(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  const key = apiKey();
  if (key) headers.set("authorization", `Bearer ${key}`);
  const res = await fetch(path, { ...init, headers, cache: "no-cache" });
  if (res.ok) return res;
  let body: ApiErrorBody | undefined;
  try {
    body = ((await res.json()) as { error?: ApiErrorBody }).error;
  } catch {
    // not JSON: the status says it all
  }
  if (res.status === 401) keyNeeded(key);
  throw new ApiError(
    res.status,
    body?.code ?? "http_error",
    body?.message ?? `${res.status} ${res.statusText}`,
    body?.issues ?? [],
  );
}

async function json<T>(path: string, init?: RequestInit): Promise<T> {
  return (await (await request(path, init)).json()) as T;
}

const post = <T>(path: string, body?: unknown, raw = false) =>
  json<T>(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    ...(body !== undefined && { body: raw ? String(body) : JSON.stringify(body) }),
  });

const run = (runId: string) => `/v1/runs/${encodeURIComponent(runId)}`;

export interface ListQuery {
  status?: string;
  name?: string;
  tags?: string[];
  cursor?: string | null;
  limit?: number;
}

export const api = {
  status: (runId: string) => json<RunStatus>(run(runId)),
  plan: (runId: string) => json<RunPlan>(`${run(runId)}/plan`),
  step: (runId: string, stepId: string) =>
    json<StepDetail>(`${run(runId)}/steps/${encodeURIComponent(stepId)}`),
  list(q: ListQuery): Promise<RunList> {
    const p = new URLSearchParams();
    if (q.status) p.set("status", q.status);
    if (q.name) p.set("name", q.name);
    for (const t of q.tags ?? []) p.append("tag", t);
    if (q.cursor) p.set("cursor", q.cursor);
    p.set("limit", String(q.limit ?? 50));
    return json<RunList>(`/v1/runs?${p}`);
  },
  stats: () => json<RunStats>("/v1/stats"),
  validate: (planText: string) => post<ValidateResult>("/v1/plans/validate", planText, true),
  submit: (planText: string) => post<RunCreated>("/v1/runs", planText, true),
  cancel: (runId: string) => post<{ status: string }>(`${run(runId)}/cancel`),
  resume: (runId: string, iterations?: number) =>
    post<{ status: string }>(`${run(runId)}/resume`, iterations ? { iterations } : {}),
  retry: (runId: string) => post<{ status: string }>(`${run(runId)}/retry`),
  approve: (
    runId: string,
    body: { approved: boolean; stepId?: string; skipSteps?: string[]; comment?: string },
  ) => post<{ status: string }>(`${run(runId)}/approve`, body),
  async remove(runId: string): Promise<void> {
    await request(run(runId), { method: "DELETE" });
  },
};

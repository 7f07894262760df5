/**
 * Helpers of the listing, retention and deletion tests (SPEC 8): list runs, page through a
 * listing, plans that stay put or end a given way, the API as one API key, the owner's index.
 *
 * The workers tests run without API_KEYS, so every run has the owner "public" and one index:
 * each test tags its runs with a tag of its own and lists by it, so other tests' runs (in
 * this file or another) never show up in what it checks.
 */
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { createApp } from "../src/api/app";
import { ownerOf } from "../src/api/auth";
import type { TestRunIndex } from "./support/test-run-index";
import { api, unique, upstreamUrl } from "./helpers";

/** How a test calls the API: `api` (auth off, owner "public"), or as an API key (keyApi). */
export type Api = (path: string, init?: RequestInit) => Promise<Response>;

/**
 * The API as the API key `key` sees it: the test Worker's app with `API_KEYS` set to that
 * key alone, every request carrying it. Its runs have an owner (and an index) of their own.
 */
export function keyApi(key: string): Api {
  const app = createApp();
  const keyed = { ...env, API_KEYS: key };
  return async (path, init = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${key}`);
    return app.fetch(new Request(`http://edgestep.test${path}`, { ...init, headers }), keyed);
  };
}

/** The RunIndex of the API key `key`. */
export async function keyIndex(key: string) {
  return indexStub(await ownerOf(key));
}

export type Query = Record<string, string | number | readonly string[]>;

export function queryString(query: Query): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

/** `GET /v1/runs` with `query`: the page (asserting a 200). */
export async function list(
  query: Query = {},
  via: Api = api,
): Promise<{ runs: any[]; next: string | null }> {
  const res = await via(`/v1/runs${queryString(query)}`);
  const body = (await res.json()) as any;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

/** Pages through a listing (`limit` per page); every run of every page, in order. */
export async function listAll(query: Query, via: Api = api, limit = 200): Promise<any[]> {
  const runs: any[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await list({ ...query, limit, ...(cursor !== null && { cursor }) }, via);
    runs.push(...page.runs);
    if (page.next === null) return runs;
    cursor = page.next;
  }
  throw new Error("more than 1000 pages");
}

/** The run ids of a listing filtered by `query`, in order. */
export async function listedIds(query: Query, via: Api = api): Promise<string[]> {
  return (await listAll(query, via)).map((r) => r.runId);
}

/** `GET /v1/stats` (asserting a 200). */
export async function stats(via: Api = api): Promise<any> {
  const res = await via("/v1/stats");
  expect(res.status).toBe(200);
  return res.json();
}

/** A tag of this test's own: `{ test: "<unique>" }`, and the listing filter for it. */
export function testTag(label = "t"): { tags: { test: string }; tag: string } {
  const value = unique(label);
  return { tags: { test: value }, tag: `test:${value}` };
}

/** A plan held at the risk gate: created `waiting`, it stays so until approved or cancelled. */
export function gatedPlan(extra: Record<string, unknown> = {}) {
  return {
    config: { requireApprovalForRisk: "high" },
    steps: [{ id: "risky", tool: "pass", risk: "high", params: { value: 1 } }],
    ...extra,
  };
}

/** A plan of one `pass` step: `completed` once driven. */
export function passPlan(extra: Record<string, unknown> = {}) {
  return { steps: [{ id: "p", tool: "pass", params: { value: 1 } }], ...extra };
}

/** A plan whose one step gets a 404: `failed` once driven. */
export function failingPlan(extra: Record<string, unknown> = {}) {
  const url = `${upstreamUrl}/script/${unique("fail")}?plan=404`;
  return { steps: [{ id: "f", tool: "http", params: { url } }], ...extra };
}

/** `POST /v1/runs`: the answer's status and body. */
export async function submitVia(via: Api, plan: unknown, headers: Record<string, string> = {}) {
  const res = await via("/v1/runs", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof plan === "string" ? plan : JSON.stringify(plan),
  });
  return { res, body: (await res.json()) as any };
}

/** Submits a plan (asserting a 202); its run id. */
export async function created(
  plan: unknown,
  headers: Record<string, string> = {},
  via: Api = api,
): Promise<string> {
  const { res, body } = await submitVia(via, plan, headers);
  expect(res.status, JSON.stringify(body)).toBe(202);
  return body.runId as string;
}

/** The test Worker's indexes are TestRunIndexes (test/support/worker.ts). */
const indexes = env.INDEX as unknown as DurableObjectNamespace<TestRunIndex>;

/** The RunIndex of `owner` ("public": the workers tests' runs). */
export function indexStub(owner = "public") {
  return indexes.get(indexes.idFromName(owner));
}

/** `DELETE /v1/runs/:id`: the status and the body's error code (null for a 204). */
export async function del(
  runId: string,
  via: Api = api,
): Promise<{ status: number; code: string | null }> {
  const res = await via(`/v1/runs/${runId}`, { method: "DELETE" });
  const text = await res.text();
  return { status: res.status, code: text === "" ? null : (JSON.parse(text) as any).error.code };
}

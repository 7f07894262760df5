/**
 * Planners for replanning (SPEC 9.2) on the loopback upstream:
 *   POST /planner/answer/<key>?plan=500,200&body=<JSON>&delay=<ms>
 *                         the n-th call for <key> answers the n-th status of `plan` (the last
 *                         repeats; default 200); a 200 answers `body` (the test writes the repair:
 *                         valid, invalid, a cycle, an unknown tool, `{ giveUp }`); `delay` holds each answer
 *   POST /planner         the demo planner of examples/self-repairing.json: after a
 *                         `verification_failed`, a param of the failed step that is a misspelt city
 *                         of the fake API ("Berln") is corrected; anything else, it gives up
 * A planner that never answers is `/hang`.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { closest, distance } from "fastest-levenshtein";
import { facilities } from "./data.ts";

type Json = (res: ServerResponse, status: number, body: unknown) => void;

const CITIES = [...new Set(facilities.map((f) => f.location.city))];

export function handlePlanners(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  body: string,
  json: Json,
  counters: Map<string, number>,
): boolean {
  if (req.method !== "POST") return false;
  if (url.pathname === "/planner") {
    json(res, 200, demoRepair(body));
    return true;
  }
  const scripted = /^\/planner\/answer\/([^/]+)$/.exec(url.pathname);
  if (!scripted) return false;
  const key = `planner:${scripted[1]!}`;
  const n = counters.get(key) ?? 0;
  counters.set(key, n + 1);
  const plan = (url.searchParams.get("plan") ?? "200").split(",").map(Number);
  const status = plan[Math.min(n, plan.length - 1)]!;
  const answer = () =>
    status === 200
      ? json(res, 200, JSON.parse(url.searchParams.get("body") ?? "{}"))
      : json(res, status, { error: `scripted ${status}` });
  const ms = Number(url.searchParams.get("delay") ?? 0);
  if (ms > 0) setTimeout(answer, ms);
  else answer();
  return true;
}

interface PlannerRequest {
  error?: { category?: string };
  step?: { id: string; params?: Record<string, unknown> };
  /** The step's params as they were sent (templates resolved). */
  params?: Record<string, unknown>;
}

/** Corrects a misspelt city in the params the failed step sent (one level down, e.g. `query.location`). */
function demoRepair(raw: string): unknown {
  let request: PlannerRequest;
  try {
    request = JSON.parse(raw) as PlannerRequest;
  } catch {
    return { giveUp: true, reason: "the request is not JSON" };
  }
  const step = request.step;
  if (!step || request.error?.category !== "verification_failed")
    return { giveUp: true, reason: "this planner only repairs steps that failed verification" };
  const params = structuredClone(request.params ?? step.params ?? {});
  const fixed = correctCities(params) || Object.values(params).some((v) => correctCities(v));
  if (!fixed) return { giveUp: true, reason: "no misspelt city in the step's params" };
  return { steps: [{ ...step, params }] };
}

/** Replaces, in place, string values of `value` (an object) that are 1 or 2 edits from a city. */
function correctCities(value: unknown): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const record = value as Record<string, unknown>;
  let fixed = false;
  for (const [k, v] of Object.entries(record)) {
    if (typeof v !== "string" || v.includes("${") || CITIES.includes(v)) continue;
    const city = closest(v, CITIES);
    if (distance(v, city) <= 2) {
      record[k] = city;
      fixed = true;
    }
  }
  return fixed;
}

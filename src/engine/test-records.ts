/** A run record for the engine's unit tests: running since `createdAt`, no steps counted. */
import type { RunRecord } from "./records";
import { countSteps } from "./status";

export function runRecord(overrides: Partial<RunRecord> = {}): RunRecord {
  const createdAt = overrides.createdAt ?? Date.parse("2026-01-01T00:00:00Z");
  return {
    id: "run_x",
    owner: "o",
    status: "running",
    createdAt,
    startedAt: createdAt,
    endedAt: null,
    iterations: 1,
    iterationBudget: null,
    riskGate: null,
    baseUrl: null,
    eventsDropped: 0,
    error: null,
    deleteRequestedAt: null,
    version: 1,
    counts: countSteps([]),
    ...overrides,
  };
}

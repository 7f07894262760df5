/**
 * The attempt logs of a run's forEach steps, for the waterfall (the event log has no item
 * attempts). A step's log is read again whenever its status entry changes; a read that fails
 * leaves the waterfall to the events.
 */
import { useEffect, useRef, useState } from "preact/hooks";
import { api } from "../api";
import type { StepStatus } from "../types";
import type { AttemptLog } from "./item-timeline";

/** A step's status entry as a key that changes whenever its detail (its attempt log) may have. */
export const stepVersion = (s: StepStatus) =>
  `${s.status}|${s.attempts}|${s.endedAt}|${s.items?.succeeded}|${s.items?.failed}|${s.items?.running}`;

export function useItemAttempts(
  runId: string,
  steps: readonly StepStatus[] | undefined,
): ReadonlyMap<string, AttemptLog> {
  const [logs, setLogs] = useState<ReadonlyMap<string, AttemptLog>>(() => new Map());
  const asked = useRef(new Map<string, string>());
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );
  const forEach = (steps ?? []).filter((s) => s.items !== undefined && s.attempts > 0);
  const key = forEach.map((s) => `${s.id}|${stepVersion(s)}`).join("\n");
  useEffect(() => {
    for (const s of forEach) {
      const v = stepVersion(s);
      if (asked.current.get(s.id) === v) continue;
      asked.current.set(s.id, v);
      api.step(runId, s.id).then(
        (d) => mounted.current && setLogs((prev) => new Map(prev).set(s.id, d.attemptLog)),
        () => {},
      );
    }
  }, [runId, key]);
  return logs;
}

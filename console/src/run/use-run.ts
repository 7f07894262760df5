/**
 * A run's live data for the run page: its status, its plan, and its event log, kept current
 * over SSE. Every burst of events triggers one status read (at most one in flight), so node
 * colours follow the run without reloading; the event log feeds the waterfall.
 */
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { ApiError, api } from "../api";
import type { RunEvent, RunPlan, RunStatus } from "../types";
import { followEvents, type Connection } from "./live";
import { settled, webhookPending } from "./run-state";

export { settled };

/** A settled run's webhook is still retrying: the header reads its deliveries this often. */
const WEBHOOK_POLL_MS = 5000;

export interface RunData {
  status: RunStatus | null;
  /** When `status` was read (this page's clock). */
  readAt: number;
  plan: RunPlan | null;
  events: RunEvent[];
  connection: Connection;
  error: ApiError | Error | null;
  /** Reads the status now (after a control); follows the events again if their stream had ended. */
  refresh(): Promise<void>;
}

/**
 * The run's status, read at most once at a time: a read asked for while one is in flight
 * waits for it and is made again after it (its answer may predate what prompted the ask).
 */
function useStatusReader(runId: string) {
  const [status, setStatus] = useState<RunStatus | null>(null);
  const [readAt, setReadAt] = useState(0);
  const [error, setError] = useState<ApiError | Error | null>(null);
  const reading = useRef<Promise<RunStatus | null> | null>(null);
  const again = useRef(false);
  const latest = useRef<RunStatus | null>(null);

  const readStatus = useCallback(async (): Promise<RunStatus | null> => {
    if (reading.current) {
      again.current = true;
      return reading.current;
    }
    reading.current = (async () => {
      try {
        const s = await api.status(runId);
        latest.current = s;
        setStatus(s);
        setReadAt(Date.now());
        setError(null);
        return s;
      } catch (err) {
        setError(err as Error);
        return null;
      } finally {
        reading.current = null;
        if (again.current) {
          again.current = false;
          void readStatus();
        }
      }
    })();
    return reading.current;
  }, [runId]);
  return { status, setStatus, readAt, error, setError, readStatus, reading, latest };
}

export function useRun(runId: string): RunData {
  const { status, setStatus, readAt, error, setError, readStatus, reading, latest } =
    useStatusReader(runId);
  const [plan, setPlan] = useState<RunPlan | null>(null);
  const [events, setEvents] = useState<RunEvent[]>([]);
  const [connection, setConnection] = useState<Connection>("connecting");
  /** Bumped to follow the events again (a redriven or resumed run). */
  const [follow, setFollow] = useState(0);
  const ended = useRef(false);

  useEffect(() => {
    setStatus(null);
    setPlan(null);
    setEvents([]);
    setError(null);
    void readStatus();
    api.plan(runId).then(setPlan, (err: Error) => setError(err));
  }, [runId, readStatus]);

  useEffect(() => {
    ended.current = false;
    setEvents([]); // the stream replays the log from the start
    return followEvents({
      runId,
      onConnection: (c) => {
        if (c === "ended") ended.current = true;
        setConnection(c);
      },
      onEvents: (batch) => {
        setEvents((prev) => prev.concat(batch));
        if (batch.some((e) => e.type === "replan_applied")) void api.plan(runId).then(setPlan);
        // A settled run's replayed log changes nothing in its status: no need to read it again.
        if (!latest.current || !settled(latest.current)) void readStatus();
      },
      isFinal: async () => {
        // A read in flight may have left before the run ended: wait for it, then ask again
        // (else a stale "running" keeps the page following, or, after a 204, stuck).
        if (reading.current) await reading.current;
        const s = await readStatus();
        return s !== null && settled(s);
      },
    });
  }, [runId, follow, readStatus]);

  // The webhook's deliveries go on after the stream closed: read them now and then, not
  // twice a second, until the last one is made.
  const pollWebhook = status !== null && webhookPending(status);
  useEffect(() => {
    if (!pollWebhook) return;
    const t = setInterval(() => void readStatus(), WEBHOOK_POLL_MS);
    return () => clearInterval(t);
  }, [pollWebhook, readStatus]);

  const refresh = useCallback(async () => {
    const s = await readStatus();
    // A control changed a run whose stream had ended (a redrive): follow its log again, even
    // when the redrive has ended too by now (its events are in the log all the same).
    if (s && ended.current) setFollow((n) => n + 1);
  }, [readStatus]);

  return { status, readAt, plan, events, connection, error, refresh };
}

export function isNotFound(err: unknown): boolean {
  return err instanceof ApiError && err.status === 404 && !err.noRoute;
}

/** After the quiet period: poll every run until it finishes, for at most `finalWaitMs`. */
import { FINAL, type Api, type RunView } from "./api.ts";
import { mapLimit, secs, sleep } from "./util.ts";

export interface Drained {
  /** The last view read of each run that answered. */
  views: Map<string, RunView>;
  /** Runs that answered 404. */
  vanished: Set<string>;
  /** Runs still unfinished at the deadline. */
  unfinished: Set<string>;
}

export async function drain(
  api: Api,
  runIds: string[],
  finalWaitMs: number,
  log: (line: string) => void,
): Promise<Drained> {
  const views = new Map<string, RunView>();
  const vanished = new Set<string>();
  const pending = new Set(runIds);
  const deadline = Date.now() + finalWaitMs;
  let lastLog = Date.now();
  while (pending.size > 0 && Date.now() < deadline) {
    await mapLimit([...pending], 8, async (runId) => {
      const { status, body } = await api.get<RunView>(`/v1/runs/${runId}`);
      if (status === 404) {
        vanished.add(runId);
        pending.delete(runId);
        return;
      }
      if (status !== 200) return;
      views.set(runId, body);
      if (FINAL.has(body.status)) pending.delete(runId);
    });
    if (pending.size === 0) break;
    if (Date.now() - lastLog > 5_000) {
      lastLog = Date.now();
      log(
        `chaos: waiting for ${pending.size} unfinished runs (${secs(deadline - Date.now())} left)`,
      );
    }
    await sleep(500);
  }
  return { views, vanished, unfinished: pending };
}

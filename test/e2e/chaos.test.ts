/**
 * The short version of `npm run chaos` (scripts/chaos.ts): `wrangler dev` serving the Worker on a
 * temporary persist folder is SIGKILLed (the whole process group: wrangler and workerd) twice while
 * runs are in flight, and restarted on the same state. Every run must still complete with the
 * upstream's answers, no step may run again after its success was recorded (a second call is
 * allowed only for an attempt in flight at a kill), and the interrupted runs must be resumed by
 * their alarms alone (nothing polls them during the lease). The listing must show every run once,
 * with its final status. CHAOS_SEED picks another seed.
 */
import { describe, expect, it } from "vitest";
import { runChaos } from "../../scripts/chaos/run-chaos.ts";

describe("chaos: kill -9 of wrangler dev while runs are in flight", () => {
  it(
    "loses no run, keeps every answer, and repeats only calls in flight at a kill",
    { timeout: 120_000 },
    async () => {
      const lines: string[] = [];
      const report = await runChaos({
        runs: 5,
        kills: 2,
        seed: Number(process.env.CHAOS_SEED ?? 7),
        minSteps: 10,
        maxSteps: 16,
        minKillAfterMs: 300,
        maxKillAfterMs: 2_500,
        finalWaitMs: 30_000,
        log: (line) => lines.push(line),
      });
      const story = [...lines, ...report.summary].join("\n");
      console.log(story);
      expect(report.kills, story).toHaveLength(2);
      expect(report.lost, story).toEqual([]);
      expect(report.stuckUntilPolled, story).toEqual([]);
      expect(report.notCompleted, story).toEqual([]);
      expect(report.wrongData, story).toEqual([]);
      expect(report.unexplained, story).toEqual([]);
      expect(report.listing, story).toEqual([]);
      expect(report.succeededSteps, story).toBe(report.steps);
      expect(report.ok, story).toBe(true);
    },
  );
});

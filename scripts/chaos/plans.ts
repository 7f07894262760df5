/**
 * The plans the chaos run submits: seeded random DAGs and chains of `http` steps calling the
 * upstream's `/work`, each with what the verification expects every call of a step to carry.
 */
import { workValue } from "../../test/upstream/server.ts";
import type { ChaosOptions } from "./options.ts";
import { between } from "./util.ts";

export interface ChaosStep {
  id: string;
  /** The query every call of this step must carry (templates resolved), given the run id. */
  query(runId: string): URLSearchParams;
}

export interface ChaosPlan {
  steps: ChaosStep[];
  /** The plan as submitted to POST /v1/runs. */
  document: unknown;
}

export function makePlan(
  rand: () => number,
  index: number,
  upstreamUrl: string,
  o: ChaosOptions,
): ChaosPlan {
  const n = between(rand, o.minSteps, o.maxSteps);
  const shape = rand() < 0.3 ? "chain" : "dag";
  const steps: ChaosStep[] = [];
  const docSteps: unknown[] = [];
  // The upstream derives each call's duration from these, so a seed replays the same timings.
  const timing = { minMs: String(o.minCallMs), maxMs: String(o.maxCallMs), seed: String(o.seed) };
  for (let i = 0; i < n; i++) {
    let deps: number[] = [];
    if (shape === "chain") deps = i > 0 ? [i - 1] : [];
    else if (i > 0) {
      const k = between(rand, 0, Math.min(3, i));
      const pool = Array.from({ length: i }, (_, j) => j);
      for (let d = 0; d < k; d++) deps.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
      deps.sort((a, b) => a - b);
    }
    // The first dependency's value goes into the query through a template: it checks that results
    // read back after a restart are the recorded ones.
    const first = deps[0];
    const query: Record<string, string> = {
      ...timing,
      ...(first !== undefined && { dep: `\${steps.s${first}.data.value}` }),
    };
    docSteps.push({
      id: `s${i}`,
      tool: "http",
      params: { url: `${upstreamUrl}/work`, query },
      ...(deps.length > 0 && { dependsOn: deps.map((d) => `s${d}`) }),
    });
    steps.push({
      id: `s${i}`,
      query: (runId) =>
        new URLSearchParams({
          ...timing,
          ...(first !== undefined && { dep: workValue(`${runId}:s${first}`) }),
        }),
    });
  }
  const document = {
    name: `chaos-${o.seed}-${index}`,
    config: {
      maxParallel: between(rand, o.minParallel, o.maxParallel),
      // Interrupted attempts count as attempts: leave room for a step caught by several kills.
      retry: { maxRetries: 12, baseDelayMs: 100, maxDelayMs: 2_000 },
    },
    steps: docSteps,
  };
  return { steps, document };
}

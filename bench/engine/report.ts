/**
 * `npm run bench:engine`'s report: the markdown table, its header and notes on stdout, and
 * everything measured in bench/engine/results.json.
 */
import { writeFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { format, resolveConfig } from "prettier";
import type { BigPlanFigures } from "./big-plan-case.ts";
import type { Baseline, DagSummary } from "./dag-case.ts";
import { ENGINE_DIR } from "./harness.ts";
import { BIG, REF, REPEATS, SEED, STORAGE } from "./options.ts";
import { gitCommit } from "../source-tree.ts";

/** What the cases measured: (b) the fan-out, (c) the random DAG, (d) the 10,000-step plan. */
export interface Figures {
  b: DagSummary;
  c: DagSummary & { seed: number };
  d: BigPlanFigures;
}

interface Row {
  metric: string;
  value: string;
  goal: string;
  met: boolean | null;
}

type Breakdown = DagSummary["breakdownMeanPerStepMs"];

const fmt = (x: number, d = 1) => `${x.toFixed(d)} ms`;

/** Prints the report and writes bench/engine/results.json. */
export async function report(
  { b, c, d }: Figures,
  began: number,
  loadBefore: number,
): Promise<void> {
  const rows = tableRows({ b, c, d });
  const table = markdown(rows);
  const loadAfter = loadavg()[0]!;
  const header =
    `edgestep engine bench (Miniflare, direct sockets: not what users see): median of ${REPEATS} rounds after a warm-up; ${cpus().length} CPUs, load average ${loadBefore.toFixed(1)} → ${loadAfter.toFixed(1)}; ` +
    `Node ${process.version}; local workerd (Miniflare), Durable Object storage on ${STORAGE}; ${REF ? `revision ${REF}` : "working tree"}`;
  const notes = breakdownNotes({ b, c, d });
  const results = {
    generatedAt: new Date().toISOString(),
    environment: environment(loadBefore, loadAfter),
    b,
    c,
    d,
    table: rows,
    markdown: table,
    notes,
    benchSeconds: Math.round((performance.now() - began) / 100) / 10,
  };
  const file = join(ENGINE_DIR, "results.json");
  // Formatted as the repository's Prettier config would, so `prettier --check` stays quiet.
  const style = (await resolveConfig(file)) ?? {};
  writeFileSync(file, await format(JSON.stringify(results), { ...style, parser: "json" }));
  console.log(
    `\n${header}\n\n${table}\n\n${notes.join("\n")}\n\nwrote bench/engine/results.json (${results.benchSeconds} s)`,
  );
}

function markdown(rows: Row[]): string {
  const lines = ["| metric | value | goal | met? |", "| --- | --- | --- | --- |"];
  for (const r of rows)
    lines.push(
      `| ${r.metric} | ${r.value} | ${r.goal} | ${r.met === null ? "—" : r.met ? "✅ yes" : "❌ no"} |`,
    );
  return lines.join("\n");
}

function tableRows({ b, c, d }: Figures): Row[] {
  const us = (shape: "chain" | "wide") =>
    `${d.scheduler
      .filter((f) => f.shape === shape)
      .map((f) => f.usPerStep.toFixed(2))
      .join(" / ")} µs`;
  return [
    {
      metric: "(b) 50 × 100 ms calls, maxParallel 50: makespan ÷ 100 ms",
      value: `${b.ratio.toFixed(3)} (${fmt(b.makespanMs, 0)})`,
      goal: "— (goals: `npm run bench`)",
      met: null,
    },
    {
      metric: `(c) random 200-step DAG (seed ${SEED}): makespan ÷ critical path`,
      value: `${c.ratio.toFixed(3)} (${fmt(c.makespanMs, 0)} ÷ ${fmt(c.criticalPathMs, 0)})`,
      goal: "— (goals: `npm run bench`)",
      met: null,
    },
    {
      metric: `(d) ${BIG.toLocaleString("en")}-step plan: POST /v1/runs → 202`,
      value: fmt(d.acceptedMs, 0),
      goal: "—",
      met: null,
    },
    {
      metric: `(d) ${BIG.toLocaleString("en")}-step plan: POST → first step started`,
      value: fmt(d.firstStepStartedMs, 0),
      goal: "—",
      met: null,
    },
    {
      metric: "(d) scheduler per completed step, chain, 100 / 1k / 10k steps",
      value: us("chain"),
      goal: "flat (max ≤ 2 × min)",
      met: d.schedulerFlatness.chain <= 2,
    },
    {
      metric: "(d) scheduler per completed step, wide DAG, 100 / 1k / 10k steps",
      value: us("wide"),
      goal: "flat (max ≤ 2 × min)",
      met: d.schedulerFlatness.wide <= 2,
    },
  ];
}

const bd = (x: Breakdown, dp = 0) =>
  `dispatch lag ${fmt(x.dispatchLag, dp)}, outbound ${fmt(x.outbound, dp)}, inbound ${fmt(x.inbound, dp)}`;

const same = (x: Record<Baseline, { ratio: number }>) =>
  `a plain Worker: ${x.plainWorker.ratio.toFixed(3)}; a Durable Object writing edgestep's rows (step, attempt, event) at each start and end: ` +
  `${x.durableObject.ratio.toFixed(3)}; the same with ends that arrive together written in one transaction: ${x.durableObjectBatched.ratio.toFixed(3)}`;

/** The lines under the table: baselines, breakdowns, hop gaps, the rest of (d). */
function breakdownNotes({ b, c, d }: Figures): string[] {
  return [
    `(b) the same 50 calls from ${same(b.baselines)}.`,
    `    First call ${fmt(b.firstCallAfterStartMs, 0)} after run start (Durable Object baseline: ${fmt(b.baselines.durableObject.firstCallAfterStartMs, 0)}); ` +
      `the upstream answered all 50 within ${fmt(b.answersSpreadMs, 0)}, edgestep recorded their ends over ${fmt(b.endsSpreadMs, 0)} ` +
      `(${fmt(b.endsSpreadMs / 49, 2)} per completion); run ended ${fmt(b.finishAfterLastStepMs, 0)} after its last step; mean per step: ${bd(b.breakdownMeanPerStepMs, 1)}.`,
    `(c) the same DAG from ${same(c.baselines)}.`,
    `    Along the ${c.criticalPathSteps}-step critical path: ${bd(c.breakdownAlongCriticalPathMs)}; mean per step: ${bd(c.breakdownMeanPerStepMs, 1)}.`,
    `    Mean hop gap (upstream clock: a dependency answered -> its dependent's call arrived): edgestep ${fmt(c.hopGapMs.edgestep.meanMs, 2)}, ` +
      `plain Worker ${fmt(c.hopGapMs.plainWorker.meanMs, 2)}, Durable Object ${fmt(c.hopGapMs.durableObject.meanMs, 2)}, ` +
      `batched ${fmt(c.hopGapMs.durableObjectBatched.meanMs, 2)}.`,
    `(d) POST /v1/plans/validate alone ${fmt(d.validateEndpointMs, 0)}; compilePlan in Node ${fmt(d.compilePlanInNodeMs, 0)}; ` +
      `alarm lag ${fmt(d.serverAlarmLagMs, 0)}; execution ${fmt(d.execMsPerStepAt10k, 3)} per step at 10k steps.`,
    `    Scheduler per-step time grows as n^${d.schedulerScalingExponent.chain.toFixed(2)} (chain) and n^${d.schedulerScalingExponent.wide.toFixed(2)} (wide) ` +
      `from 100 to 10,000 steps (0 = flat, 1 = a cost per step proportional to the plan).`,
  ];
}

function environment(loadBefore: number, loadAfter: number) {
  return {
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? null,
    loadAverage: { before: loadBefore, after: loadAfter },
    repeats: REPEATS,
    doStorage: STORAGE,
    source: REF
      ? { ref: REF, commit: gitCommit(REF) }
      : { ref: "working tree", commit: gitCommit("HEAD") },
  };
}

/** The report of `npm run bench`: a markdown table, breakdown notes, and bench/results.json. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { format, resolveConfig } from "prettier";
import type { Row } from "./context.ts";
import { BENCH_DIR } from "./source-tree.ts";

export function markdown(rows: Row[]): string {
  const lines = [
    "| metric | edgestep | Workflows | ratio | goal | met? |",
    "| --- | --- | --- | --- | --- | --- |",
  ];
  for (const r of rows) {
    const met = r.met === null ? "—" : r.met ? "✅ yes" : "❌ no";
    lines.push(
      `| ${r.metric} | ${r.edgestep} | ${r.workflows} | ${r.ratio} | ${r.goal} | ${met} |`,
    );
  }
  return lines.join("\n");
}

/** Writes bench/<name> (results.json, or results-floor.json for BENCH_FLOOR), formatted as the repository's Prettier config would. */
export async function writeResults(name: string, results: unknown): Promise<string> {
  const file = join(BENCH_DIR, name);
  const style = (await resolveConfig(file)) ?? {};
  writeFileSync(file, await format(JSON.stringify(results), { ...style, parser: "json" }));
  return file;
}

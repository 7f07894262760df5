/**
 * For runs that never finished: the alarm each one has, read from the persisted SQLite (read
 * only), to tell "no alarm was stored" from "an alarm was stored but never fired".
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Finding } from "./report.ts";

/**
 * Replaces each lost run's `detail` with { steps: the old detail, storedStatus, objectAlarm,
 * schedulerAlarm }: the Durable Object's own `_cf_METADATA` alarm and workerd's alarm scheduler's
 * (`_cf_ALARM`). Leaves a finding as it is when its state cannot be read.
 */
export async function describeStuck(stateDir: string, lost: Finding[]): Promise<void> {
  const doDir = join(stateDir, "v3/do/edgestep-RunObject");
  if (!existsSync(doDir)) return;
  // Both tables hold times as integer nanoseconds since the epoch.
  const iso = (ns: unknown) =>
    typeof ns === "bigint" || typeof ns === "number"
      ? new Date(Number(BigInt(ns) / 1_000_000n)).toISOString()
      : null;
  try {
    const { DatabaseSync } = await import("node:sqlite");
    const scheduled = new Map<string, unknown>();
    try {
      const meta = new DatabaseSync(join(doDir, "metadata.sqlite"), { readOnly: true });
      const query = meta.prepare("SELECT actor_id, scheduled_time FROM _cf_ALARM");
      query.setReadBigInts(true);
      for (const row of query.all()) scheduled.set(String(row.actor_id), row.scheduled_time);
      meta.close();
    } catch {
      // no scheduler table
    }
    const wanted = new Map(lost.map((f) => [f.runId, f]));
    for (const file of readdirSync(doDir)) {
      if (!file.endsWith(".sqlite") || file === "metadata.sqlite") continue;
      try {
        const db = new DatabaseSync(join(doDir, file), { readOnly: true });
        const run = db.prepare("SELECT id, status FROM run").get() as
          { id: string; status: string } | undefined;
        const finding = run && wanted.get(run.id);
        if (finding) {
          const query = db.prepare("SELECT value FROM _cf_METADATA WHERE key = 1");
          query.setReadBigInts(true);
          const actor = file.replace(/\.sqlite$/, "");
          finding.detail = {
            steps: finding.detail,
            storedStatus: run.status,
            // The alarm the Durable Object itself stored, and the one workerd's alarm scheduler will fire.
            objectAlarm: iso(query.get()?.value),
            schedulerAlarm: iso(scheduled.get(actor)),
          };
        }
        db.close();
      } catch {
        // unreadable: leave the finding as it is
      }
    }
  } catch {
    // node:sqlite unavailable
  }
}

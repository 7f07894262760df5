/**
 * The process table, read from /proc (Linux): the kill must reach wrangler's node and every workerd
 * it started, and the chaos run must check they are really gone before restarting on the same state.
 */
import { readdirSync, readFileSync } from "node:fs";

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgrp: number;
  state: string;
  cmd: string;
}

/** Every process on the machine. */
export function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // pid (comm) state ppid pgrp ...; comm may contain spaces and parentheses.
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      let cmd = "";
      try {
        cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      } catch {
        // gone meanwhile
      }
      out.push({
        pid: Number(name),
        state: rest[0]!,
        ppid: Number(rest[1]),
        pgrp: Number(rest[2]),
        cmd,
      });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

/**
 * The live (non-zombie) processes of a group, plus every live descendant of its leader: a child
 * that moved to a group of its own would otherwise survive the group kill.
 */
export function family(leader: number): ProcInfo[] {
  const all = processes().filter((p) => p.state !== "Z");
  const members = new Map(all.filter((p) => p.pgrp === leader).map((p) => [p.pid, p]));
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of all) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const stack = [leader];
  while (stack.length > 0) {
    for (const child of byParent.get(stack.pop()!) ?? []) {
      if (!members.has(child.pid)) members.set(child.pid, child);
      stack.push(child.pid);
    }
  }
  return [...members.values()];
}

/** A process's name for the kill log ("workerd", "wrangler", ...). */
export function shortCmd(cmd: string): string {
  if (cmd.includes("workerd")) return "workerd";
  if (cmd.includes("esbuild")) return "esbuild";
  if (cmd.includes("wrangler")) return "wrangler";
  return cmd.split(" ")[0]?.split("/").pop() ?? "?";
}

/**
 * `wrangler dev` in a process group of its own, so a kill takes wrangler and its workerd children
 * down at once, as a crash of the machine would, and this process survives to restart it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { family, processes, shortCmd } from "./processes.ts";
import { freePort, sleep } from "./util.ts";
import { WRANGLER_BIN, wranglerEnv } from "./wrangler.ts";

/** Process groups started here and not yet stopped: SIGKILLed if this process exits without stopping them. */
const liveGroups = new Set<number>();
process.on("exit", () => {
  for (const leader of liveGroups) {
    try {
      process.kill(-leader, "SIGKILL");
    } catch {
      // gone
    }
  }
});

export interface Killed {
  /** Date.now() just before SIGKILL. */
  at: number;
  /** When every killed process was seen gone. */
  goneAt: number;
  /** "pid name" of every process killed. */
  processes: string[];
  /** From SIGKILL until the processes were gone and the port refused connections. */
  downMs: number;
}

export class DevServer {
  readonly url: string;
  private readonly dir: string;
  private readonly port: number;
  private readonly args: string[];
  private child: ChildProcess | undefined;
  private starts = 0;
  private readonly live = new Set<number>();

  private readonly inspectorPort: number | undefined;

  /** `dir` receives one log per start; `args` come from devServerArgs(); the inspector's port is a free one unless given. */
  constructor(dir: string, port: number, args: string[], inspectorPort?: number) {
    this.dir = dir;
    this.port = port;
    this.args = args;
    this.inspectorPort = inspectorPort;
    this.url = `http://127.0.0.1:${port}`;
  }

  /** Starts `wrangler dev` in a new process group; resolves once /healthz answers. Returns how long that took. */
  async start(timeoutMs = 120_000): Promise<number> {
    const t0 = Date.now();
    const n = this.starts++;
    const logFile = join(this.dir, `wrangler-${n}.log`);
    const fd = openSync(logFile, "a");
    // wrangler's default inspector port (9229) may be taken, e.g. by another chaos run.
    const inspectorPort = this.inspectorPort ?? (await freePort());
    const child = spawn(
      process.execPath,
      [
        WRANGLER_BIN,
        "dev",
        ...this.args,
        "--ip",
        "127.0.0.1",
        "--port",
        String(this.port),
        "--inspector-port",
        String(inspectorPort),
      ],
      {
        cwd: this.dir,
        detached: true,
        stdio: ["ignore", fd, fd],
        env: { ...wranglerEnv(this.dir), WRANGLER_REGISTRY_PATH: join(this.dir, "registry") },
      },
    );
    closeSync(fd);
    this.child = child;
    const pid = child.pid!;
    this.live.add(pid);
    liveGroups.add(pid);
    let exit: string | null = null;
    child.once("exit", (code, signal) => {
      exit = `code ${code} signal ${signal}`;
    });
    const deadline = t0 + timeoutMs;
    for (;;) {
      if (exit !== null) {
        this.live.delete(pid);
        liveGroups.delete(pid);
        throw new Error(
          `wrangler dev exited (${exit}) before /healthz answered; log: ${logFile}\n${tail(logFile)}`,
        );
      }
      if (await answers(`${this.url}/healthz`)) return Date.now() - t0;
      if (Date.now() > deadline)
        throw new Error(
          `wrangler dev did not answer /healthz within ${timeoutMs} ms; log: ${logFile}\n${tail(logFile)}`,
        );
      await sleep(100);
    }
  }

  /**
   * SIGKILLs the process group (and any descendant that left it), then waits until every one of
   * those processes is gone and the port refuses connections, so the restart cannot overlap the
   * killed server on the same state.
   */
  async kill(): Promise<Killed> {
    const child = this.child;
    if (!child?.pid) throw new Error("wrangler dev is not running");
    const leader = child.pid;
    const victims = family(leader);
    const at = Date.now();
    try {
      process.kill(-leader, "SIGKILL");
    } catch {
      // the group is already gone
    }
    for (const p of victims) {
      if (p.pgrp === leader) continue;
      try {
        process.kill(p.pid, "SIGKILL");
      } catch {
        // gone
      }
    }
    const pids = new Set(victims.map((p) => p.pid));
    for (const deadline = Date.now() + 15_000; ;) {
      const left = processes().filter((p) => pids.has(p.pid) && p.state !== "Z");
      if (left.length === 0) break;
      if (Date.now() > deadline)
        throw new Error(
          `processes survived SIGKILL: ${left.map((p) => `${p.pid} ${p.cmd}`).join("; ")}`,
        );
      await sleep(5);
    }
    const goneAt = Date.now();
    for (const deadline = Date.now() + 15_000; !(await refuses(`${this.url}/healthz`));) {
      if (Date.now() > deadline)
        throw new Error(`port ${this.port} still accepts connections after the kill`);
      await sleep(20);
    }
    this.live.delete(leader);
    liveGroups.delete(leader);
    this.child = undefined;
    // Without workerd in the group the kill proved nothing about the runtime's crash recovery.
    if (!victims.some((p) => p.cmd.includes("workerd"))) {
      throw new Error(
        `no workerd process was found in wrangler's process group (${victims.map((p) => p.cmd).join("; ")})`,
      );
    }
    return {
      at,
      goneAt,
      processes: victims.map((p) => `${p.pid} ${shortCmd(p.cmd)}`),
      downMs: Date.now() - at,
    };
  }

  /** Stops whatever this object started: SIGTERM to the group, SIGKILL if it lingers. */
  async stop(): Promise<void> {
    for (const leader of this.live) {
      const victims = family(leader);
      try {
        process.kill(-leader, "SIGTERM");
      } catch {
        // gone
      }
      for (const deadline = Date.now() + 5_000; Date.now() < deadline; await sleep(50)) {
        if (!processes().some((p) => p.pgrp === leader && p.state !== "Z")) break;
      }
      // Whatever survived: the same pid still running the same command (never a reused pid).
      const before = new Map(victims.map((p) => [p.pid, p.cmd]));
      for (const p of processes()) {
        if (p.state === "Z" || before.get(p.pid) !== p.cmd) continue;
        try {
          process.kill(p.pid, "SIGKILL");
        } catch {
          // gone
        }
      }
    }
    for (const leader of this.live) liveGroups.delete(leader);
    this.live.clear();
    this.child = undefined;
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Refuses connections (as opposed to answering, or accepting and hanging). */
async function refuses(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
    await res.arrayBuffer();
    return false;
  } catch (err) {
    const code = (err as { cause?: { code?: string } }).cause?.code;
    return code === "ECONNREFUSED" || code === "ECONNRESET";
  }
}

/** The end of a wrangler log, for the error when a start fails. */
function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-30).join("\n");
  } catch {
    return "";
  }
}

/**
 * The bench's child processes: `wrangler dev` instances and the loopback upstream. Each runs
 * in a process group of its own (wrangler starts workerd and esbuild under it), so stopping
 * one kills everything it started; whatever is still alive when the bench exits, normally or
 * not, is killed too.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { sleep } from "./client.ts";
import { BENCH_DIR, ROOT } from "./source-tree.ts";

export interface Service {
  name: string;
  /** Base URL, no trailing slash. */
  url: string;
  /** Seconds from spawn to the first healthy answer. */
  startupSeconds: number;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
const exitHooks: (() => void)[] = [];

/** Runs `hook` (synchronous) when the bench exits, however it exits: e.g. removing a temp dir. */
export function atExit(hook: () => void): void {
  exitHooks.push(hook);
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: the whole group is gone already.
  }
}

process.on("exit", () => {
  for (const child of live) killGroup(child, "SIGKILL");
  for (const hook of exitHooks) hook();
});
for (const [signal, code] of [
  ["SIGINT", 130],
  ["SIGTERM", 143],
] as const) {
  process.on(signal, () => {
    process.stderr.write(`\n${signal}: stopping the bench's child processes\n`);
    process.exit(code);
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (!live.has(child)) return;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once("exit", () => resolve());
  });
  killGroup(child, "SIGTERM");
  await Promise.race([exited, sleep(5_000)]);
  // The group leader may be gone while workerd lingers: make sure of the whole group.
  killGroup(child, "SIGKILL");
  live.delete(child);
}

/** Fails when something listens on `port` already (a bench or `wrangler dev` left running). */
async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const probe = createServer();
    probe.once("error", () =>
      reject(new Error(`port ${port} is in use; stop what listens there or set BENCH_PORT`)),
    );
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
  });
}

interface SpawnSpec {
  name: string;
  args: string[];
  /** The working directory (default: this process's). */
  cwd?: string;
  env?: Record<string, string>;
  /** Answers 200 once the service is up. */
  healthUrl: string;
  ports: number[];
  verbose: boolean;
  timeoutMs?: number;
}

/** Starts `node <args>` in its own process group and waits until `healthUrl` answers 200. */
async function start(spec: SpawnSpec, url: string): Promise<Service> {
  for (const port of spec.ports) await assertPortFree(port);
  const began = performance.now();
  const child = spawn(process.execPath, spec.args, {
    detached: true,
    cwd: spec.cwd,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...spec.env },
  });
  live.add(child);
  const tail: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString("utf8").split("\n")) {
      if (line.trim() === "") continue;
      tail.push(line);
      if (tail.length > 60) tail.shift();
      if (spec.verbose) process.stderr.write(`[${spec.name}] ${line}\n`);
    }
  };
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const deadline = began + (spec.timeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      live.delete(child);
      throw new Error(`${spec.name} exited before it was ready:\n${tail.join("\n")}`);
    }
    try {
      const res = await fetch(spec.healthUrl, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.ok) break;
    } catch {
      // Not listening yet.
    }
    if (performance.now() > deadline) {
      await stopChild(child);
      throw new Error(
        `${spec.name} was not ready after ${spec.timeoutMs ?? 60_000} ms:\n${tail.join("\n")}`,
      );
    }
    await sleep(100);
  }
  return {
    name: spec.name,
    url,
    startupSeconds: (performance.now() - began) / 1000,
    stop: () => stopChild(child),
  };
}

export interface WranglerDevSpec {
  name: string;
  /** The wrangler.toml to run. */
  config: string;
  port: number;
  inspectorPort: number;
  persistTo: string;
  /** Each becomes `--var NAME:VALUE`. */
  vars: Record<string, string>;
  /** A private dev registry, so other developers' `wrangler dev` sessions stay out of ours. */
  registry: string;
  verbose: boolean;
}

/** `wrangler dev` as `npm start` runs it (local, default log level), on our ports and state. */
export function wranglerDev(spec: WranglerDevSpec): Promise<Service> {
  const url = `http://127.0.0.1:${spec.port}`;
  const args = [
    join(ROOT, "node_modules", "wrangler", "bin", "wrangler.js"),
    "dev",
    "--config",
    spec.config,
    "--ip",
    "127.0.0.1",
    "--port",
    String(spec.port),
    "--inspector-port",
    String(spec.inspectorPort),
    "--persist-to",
    spec.persistTo,
    "--show-interactive-dev-session=false",
    ...Object.entries(spec.vars).flatMap(([k, v]) => ["--var", `${k}:${v}`]),
  ];
  return start(
    {
      name: spec.name,
      args,
      // wrangler runs a config's `[build] command` here: the tree's own, for BENCH_REF.
      cwd: dirname(spec.config),
      env: {
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_REGISTRY_PATH: spec.registry,
        FORCE_COLOR: "0",
      },
      healthUrl: `${url}/healthz`,
      ports: [spec.port, spec.inspectorPort],
      verbose: spec.verbose,
      // The first start bundles the Worker and boots workerd: seconds on a busy machine.
      timeoutMs: 120_000,
    },
    url,
  );
}

/** bench/upstream.ts in its own Node process: test/upstream/server.ts plus a control port. */
export async function upstreamProcess(
  port: number,
  controlPort: number,
  verbose: boolean,
): Promise<Service & { control: string }> {
  const control = `http://127.0.0.1:${controlPort}`;
  const service = await start(
    {
      name: "upstream",
      args: [join(BENCH_DIR, "upstream.ts"), String(port), String(controlPort)],
      healthUrl: `${control}/healthz`,
      ports: [port, controlPort],
      verbose,
    },
    `http://127.0.0.1:${port}`,
  );
  return { ...service, control };
}

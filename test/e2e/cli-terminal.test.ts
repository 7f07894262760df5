/**
 * The CLI on a terminal, and the client as users import it:
 *  - `get --watch` in a pseudo-terminal (node-pty), its output replayed into a headless
 *    terminal emulator (@xterm/headless) to read the screen as a person would see it;
 *  - `npx edgestep` in the repository; `import "edgestep/client"` from Node; the README's
 *    example (examples/client.ts) against the Worker.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import xterm from "@xterm/headless";
import pty from "node-pty";
import { describe, expect, it } from "vitest";
import { BIN, ROOT } from "./cli-harness.ts";
import { bootForFile } from "./worker.ts";

const run = promisify(execFile);
const COLS = 110;

const e2e = bootForFile();

/** A terminal running the CLI: the screen's lines as shown now, the raw bytes, the exit code. */
function terminal(args: string[]) {
  const screen = new xterm.Terminal({ cols: COLS, rows: 40, allowProposedApi: true });
  let raw = "";
  let pending = Promise.resolve();
  const child = pty.spawn(process.execPath, [BIN, ...args], {
    cols: COLS,
    rows: 40,
    cwd: ROOT,
    env: { ...process.env, EDGESTEP_URL: e2e.worker.url, TERM: "xterm-256color" },
  });
  child.onData((data) => {
    raw += data;
    pending = pending.then(() => new Promise<void>((resolve) => screen.write(data, resolve)));
  });
  const exited = new Promise<number>((resolve) =>
    child.onExit(({ exitCode }) => resolve(exitCode)),
  );
  const lines = async () => {
    await pending;
    const buffer = screen.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < buffer.length; i++) out.push(buffer.getLine(i)!.translateToString(true));
    return out.filter((l) => l !== "");
  };
  return { exited, lines, raw: () => raw, kill: (signal: string) => child.kill(signal) };
}

/** Submits `plan` to the Worker; its run id. */
async function submitRun(plan: unknown): Promise<string> {
  const created = await fetch(`${e2e.worker.url}/v1/runs`, {
    method: "POST",
    body: JSON.stringify(plan),
  });
  return ((await created.json()) as { runId: string }).runId;
}

async function until<T>(
  read: () => Promise<T>,
  ok: (value: T) => boolean,
  what: string,
): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await read();
    if (ok(value)) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the terminal never showed ${what}: ${JSON.stringify(await read())}`);
}

describe("edgestep get --watch on a terminal", () => {
  it("redraws a live frame in place (progress bar, running steps, the retry), then leaves the summary", async () => {
    const plan = {
      name: "terminal",
      steps: [
        { id: "slow", tool: "http", params: { url: `${e2e.upstream.url}/delay/4000` } },
        {
          id: "flaky",
          tool: "http",
          params: { url: `${e2e.upstream.url}/script/tty-${Date.now()}?plan=503,200` },
          retry: { maxRetries: 2, baseDelayMs: 3000, jitter: "none" },
        },
        { id: "last", tool: "pass", dependsOn: ["slow", "flaky"] },
      ],
    };
    const runId = await submitRun(plan);
    const tty = terminal(["get", runId, "--watch"]);

    const live = await until(
      tty.lines,
      (l) =>
        l.some((x) => x.startsWith("retrying flaky")) &&
        l.some((x) => x.includes("running (1): slow")),
      "the running step and the retry",
    );
    const bar = live.find((l) => /^\[[█░]{30}\] \d\/3 \d+%/.test(l));
    expect(bar, live.join("\n")).toBeDefined();
    expect(live.find((l) => l.startsWith("retrying flaky"))).toMatch(
      /^retrying flaky: attempt 2 at \d\d:\d\d:\d\d \(in .+\) after server_error \(HTTP 503\)/,
    );
    expect(live.filter((l) => l.startsWith(runId))).toEqual([
      expect.stringMatching(/terminal {2}running/),
    ]);

    expect(await tty.exited).toBe(0);
    const final = await tty.lines();
    // The frame is gone; what stays is the retry (kept above the frame) and the summary.
    expect(final.some((l) => /^\[[█░]+\]/.test(l))).toBe(false);
    expect(final.some((l) => l.startsWith("running ("))).toBe(false);
    expect(final.filter((l) => /step flaky attempt 1 failed/.test(l))).toHaveLength(1);
    expect(final.at(-2)).toMatch(/^run completed in .+: 3 steps, 3 succeeded, 0 failed/);
    // Drawn in place (cursor up, erase down), and the cursor shown again at the end.
    expect(tty.raw()).toMatch(/\x1b\[\d+F\x1b\[J/);
    expect(tty.raw().lastIndexOf("\x1b[?25h")).toBeGreaterThan(tty.raw().lastIndexOf("\x1b[?25l"));
  }, 30_000);

  it("shows a run's escapes as text, and a SIGTERM leaves the cursor shown (exit 143)", async () => {
    const plan = {
      name: "evil\u001b]0;pwned\u0007\u001b[2J",
      steps: [{ id: "slow", tool: "http", params: { url: `${e2e.upstream.url}/delay/10000` } }],
    };
    const runId = await submitRun(plan);
    const tty = terminal(["get", runId, "--watch"]);
    const live = await until(
      tty.lines,
      (l) => l.some((x) => x.includes("running (1): slow")),
      "the running step",
    );
    expect(live.find((l) => l.startsWith(runId))).toContain("evil\ufffd]0;pwned\ufffd\ufffd[2J");
    tty.kill("SIGTERM");
    expect(await tty.exited).toBe(143);
    expect(tty.raw()).not.toContain("\x1b]0;");
    expect(tty.raw()).not.toContain("\x1b[2J");
    expect(tty.raw().lastIndexOf("\x1b[?25h")).toBeGreaterThan(tty.raw().lastIndexOf("\x1b[?25l"));
  }, 30_000);
});

describe("the client and CLI as users reach them", () => {
  it("npx edgestep runs the repository's CLI", async () => {
    const { stdout } = await run("npx", ["edgestep", "--version"], { cwd: ROOT });
    expect(stdout.trim()).toBe("0.1.0");
  });

  it('import "edgestep/client" resolves to the typed client under Node', async () => {
    const script =
      'const m = await import("edgestep/client"); console.log(typeof m.EdgestepClient, new m.EdgestepClient().url);';
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: ROOT,
    });
    expect(stdout.trim()).toBe("function http://127.0.0.1:8787/");
  });

  it("the README's example (examples/client.ts) runs a plan and follows its events", async () => {
    const { stdout } = await run(process.execPath, ["examples/client.ts"], {
      cwd: ROOT,
      env: { ...process.env, EDGESTEP_URL: e2e.worker.url },
    });
    const lines = stdout.trim().split("\n");
    expect(lines[0]).toBe("1 run_started ");
    expect(lines.at(-2)).toMatch(/ run_finished $/);
    expect(lines.at(-1)).toBe('completed ["hello Berlin","!"]');
  });
});

/**
 * The `edgestep` CLI end to end: its own Node process, over real HTTP, against the built Worker
 * in Miniflare (real alarms) with API_KEYS set, and the loopback upstream. Checks the output
 * line by line off a terminal, `--json`, and the exit codes, `ls`, `stats` and `delete`
 * (SPEC 8's routes) included.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import partialFailure from "../../examples/partial-failure.json";
import retryDemo from "../../examples/retry.json";
import { startUpstream, type Upstream } from "../upstream/server.ts";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { BIN, cli, normalize, startCli } from "./cli-harness.ts";
import { bootWorker, type BootedWorker } from "./worker.ts";

const DEMO_UPSTREAM = "http://127.0.0.1:8788";
const KEY = "cli-e2e-key";

let upstream: Upstream;
let worker: BootedWorker;
let env: Record<string, string>;

beforeAll(async () => {
  upstream = await startUpstream();
  // A destination no test calls, for `edgestep destinations` to list.
  const destinations = { "api.example.com": { concurrency: 2, ratePerSecond: 5 } };
  worker = await bootWorker(upstream.url, {
    API_KEYS: KEY,
    DESTINATIONS: JSON.stringify(destinations),
  });
  env = { EDGESTEP_URL: worker.url, EDGESTEP_API_KEY: KEY };
});

afterAll(async () => {
  await worker?.stop();
  await upstream?.close();
});

const edgestep = (args: string[], stdin?: string) =>
  cli(args, { env, ...(stdin !== undefined && { stdin }) });
let n = 0;
const script = (plan: string) => `${upstream.url}/script/cli-${Date.now()}-${n++}?plan=${plan}`;

/** Submits `plan` from standard input; answers its run id. */
async function submitted(plan: unknown): Promise<string> {
  const result = await edgestep(["run", "-", "--json"], JSON.stringify(plan));
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout).runId;
}

/** The run's status, read over HTTP until `done` holds (real alarms drive it). */
async function statusWhen(runId: string, done: (s: any) => boolean): Promise<any> {
  for (let i = 0; i < 600; i++) {
    const res = await fetch(`${worker.url}/v1/runs/${runId}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const s = await res.json();
    if (done(s)) return s;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} never reached the awaited state`);
}

describe("edgestep run --watch", () => {
  it("prints one line per event off a terminal, then the summary, and exits 0 for a completed run", async () => {
    // examples/retry.json (the README's retry demo), on this test's upstream, with shorter backoffs.
    const plan = JSON.stringify(retryDemo)
      .replaceAll(DEMO_UPSTREAM, upstream.url)
      .replace('"baseDelayMs":1000', '"baseDelayMs":100');
    const result = await edgestep(["run", "-", "--watch"], plan);
    expect(result.code, result.stderr).toBe(0);
    const retried = (n: number) =>
      expect.stringMatching(
        new RegExp(
          `^HH:MM:SS step flaky attempt ${n} failed: server_error \\(HTTP 503\\): .*; retry at HH:MM:SS$`,
        ),
      );
    expect(result.lines.map(normalize)).toEqual([
      "<run> submitted",
      "HH:MM:SS run started",
      "HH:MM:SS step facilities started (attempt 1)",
      "HH:MM:SS step facilities succeeded (<t>)",
      "HH:MM:SS step flaky started (attempt 1)",
      retried(1),
      "HH:MM:SS step flaky started (attempt 2)",
      retried(2),
      "HH:MM:SS step flaky started (attempt 3)",
      "HH:MM:SS step flaky succeeded (<t>)",
      "HH:MM:SS step report started (attempt 1)",
      "HH:MM:SS step report succeeded (<t>)",
      "HH:MM:SS run finished: completed",
      "run completed in <t>: 3 steps, 3 succeeded, 0 failed, 0 skipped, 0 cancelled",
      "ended HH:MM:SS",
    ]);
    const runId = JSON.parse((await edgestep(["run", "-", "--json"], plan)).stdout).runId;
    await statusWhen(runId, (s) => s.status === "completed");
    const results = JSON.parse((await edgestep(["results", runId])).stdout);
    expect(results[2].data).toEqual({ facilities: ["F1", "F3"], calls: 3 });
  });

  it("prints the events of a run that was over before its first read", async () => {
    const plan = { steps: [{ id: "a", tool: "pass", params: { value: 1 } }] };
    const result = await edgestep(["run", "-", "--watch"], JSON.stringify(plan));
    expect(result.code, result.stderr).toBe(0);
    expect(result.lines.map(normalize)).toEqual([
      "<run> submitted",
      "HH:MM:SS run started",
      "HH:MM:SS step a started (attempt 1)",
      "HH:MM:SS step a succeeded (<t>)",
      "HH:MM:SS run finished: completed",
      "run completed in <t>: 1 steps, 1 succeeded, 0 failed, 0 skipped, 0 cancelled",
      "ended HH:MM:SS",
    ]);
  });

  it("exits 1 for a partial run and names what failed", async () => {
    const plan = JSON.parse(
      JSON.stringify(partialFailure).replaceAll("http://127.0.0.1:8788", upstream.url),
    );
    const result = await edgestep(["run", "-", "--watch"], JSON.stringify(plan));
    expect(result.code).toBe(1);
    const summary = result.lines.slice(-3).map(normalize);
    expect(summary[0]).toMatch(/^run partial in <t>: \d+ steps, \d+ succeeded, 1 failed/);
    expect(summary[1]).toMatch(/^failed \S+: client_error \(HTTP 404\)/);
  });

  it("--json prints the final status document, with the exit code of its status", async () => {
    const plan = { steps: [{ id: "a", tool: "pass", params: { value: 1 } }] };
    const result = await edgestep(["run", "-", "--watch", "--json"], JSON.stringify(plan));
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({
      status: "completed",
      steps: [{ id: "a", status: "succeeded" }],
    });
  });
});

describe("edgestep run, validate, get, results, logs", () => {
  const cityPlan = {
    steps: [{ id: "echo", tool: "pass", params: { value: "${input.city}" } }],
    input: { city: "Paris" },
  };

  it("run takes --input as JSON or as a file, and answers the run id (with --json, the 202)", async () => {
    const bad = await edgestep(["run", "examples/01-simple.json", "--input", "no-such-input.json"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--input: .* is neither JSON nor a readable file/);

    const asJson = await edgestep(
      ["run", "-", "--input", '{"city":"Berlin"}'],
      JSON.stringify(cityPlan),
    );
    expect(asJson.code, asJson.stderr).toBe(0);
    expect(asJson.lines[0]).toMatch(/^run_[0-9a-f]{32} pending$/);
    expect(asJson.lines[1]).toMatch(/^follow it: edgestep get run_[0-9a-f]{32} --watch$/);
    const runId = asJson.lines[0]!.split(" ")[0]!;
    await statusWhen(runId, (s) => s.status === "completed");
    const results = JSON.parse((await edgestep(["results", runId])).stdout);
    expect(results[0].data).toBe("Berlin");

    const inputFile = join(await mkdtemp(join(tmpdir(), "edgestep-cli-")), "input.json");
    await writeFile(inputFile, '{"city":"Lyon"}');
    const fromFile = await edgestep(
      ["run", "-", "--input", inputFile, "--json"],
      JSON.stringify(cityPlan),
    );
    const created = JSON.parse(fromFile.stdout);
    expect(created).toMatchObject({ status: "pending", created: true });
    await statusWhen(created.runId, (s) => s.status === "completed");
    expect(JSON.parse((await edgestep(["results", created.runId])).stdout)[0].data).toBe("Lyon");
  });

  it("validate: a typo exits 3 with its issue; warnings go to stderr; --json prints the answer", async () => {
    const typo = {
      steps: [
        { id: "a", tool: "pass" },
        { id: "b", tool: "pass", dependOn: ["a"] },
      ],
    };
    const refused = await edgestep(["validate", "-"], JSON.stringify(typo));
    expect(refused.code).toBe(3);
    expect(refused.stderr.split("\n").slice(0, 2)).toEqual([
      "error: invalid_plan",
      '  steps.1.dependOn: unknown step field "dependOn": did you mean "dependsOn"?',
    ]);
    const noted = { steps: [{ id: "a", tool: "pass", notes: "mine" }] };
    const valid = await edgestep(["validate", "-"], JSON.stringify(noted));
    expect(valid.code).toBe(0);
    expect(valid.lines).toEqual(["valid: 1 steps in 1 levels", "  level 0: a", "critical path: a"]);
    expect(valid.stderr).toContain(
      'warning: steps.0.notes: unknown step field "notes" was ignored',
    );
    const json = await edgestep(["validate", "-", "--json"], JSON.stringify(noted));
    expect(JSON.parse(json.stdout)).toMatchObject({
      valid: true,
      warnings: [{ path: "steps.0.notes" }],
    });
  });

  it("get shows the run and its steps; --json the status document", async () => {
    const runId = await submitted(cityPlan);
    await statusWhen(runId, (s) => s.status === "completed");
    const shown = await edgestep(["get", runId]);
    expect(shown.code).toBe(0);
    expect(shown.lines[0]).toBe(`${runId}  completed`);
    expect(shown.lines).toContain("STEP  TOOL  STATUS     ATTEMPTS  DURATION  DETAIL");
    const step = JSON.parse((await edgestep(["step", runId, "echo"])).stdout);
    expect(step).toMatchObject({ id: "echo", data: "Paris", attemptLog: [{ attempt: 1 }] });
  });

  it("logs prints the event log; logs --follow --json streams it as NDJSON until the end", async () => {
    const runId = await submitted(cityPlan);
    const followed = await edgestep(["logs", runId, "--follow", "--json"]);
    expect(followed.code).toBe(0);
    const events = followed.lines.map((l) => JSON.parse(l));
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1).type).toBe("run_finished");
    const logged = await edgestep(["logs", runId]);
    expect(logged.lines).toHaveLength(events.length);
    expect(normalize(logged.lines[0]!)).toBe("HH:MM:SS  #1  run_started");
    const after = await edgestep(["logs", runId, "--after", String(events.length - 1), "--json"]);
    expect(after.lines.map((l) => JSON.parse(l).type)).toEqual(["run_finished"]);
  });
});

describe("controls through the CLI", () => {
  it("get --watch follows a run through its approval; approve and deny answer approval steps", async () => {
    const runId = await submitted({
      steps: [
        { id: "release", tool: "approval" },
        { id: "ship", tool: "approval" },
      ],
    });
    const watching = startCli(["get", runId, "--watch"], { env });
    await statusWhen(runId, (s) => s.pendingApproval?.[0]?.stepIds.length === 2);
    const approved = await edgestep(["approve", runId, "--step", "release", "--comment", "ok"]);
    expect(approved.code).toBe(0);
    expect(approved.lines).toEqual([
      expect.stringMatching(new RegExp(`^${runId} approved: the run is \\w+$`)),
    ]);
    expect((await edgestep(["deny", runId, "--step", "ship"])).code).toBe(0);
    const watched = await watching.done;
    expect(watched.code).toBe(1);
    const lines = watched.lines.map(normalize);
    expect(lines).toContain("HH:MM:SS approval requested: edgestep approve <run> --step release");
    expect(lines).toContain("HH:MM:SS approval granted for release: ok");
    expect(lines).toContain("HH:MM:SS step ship failed: approval_denied: approval denied");
    expect(lines.at(-2)).toBe("failed ship: approval_denied: approval denied");
  });

  it("cancel, and a conflict (exit 3) for a run that ended", async () => {
    const runId = await submitted({ steps: [{ id: "gate", tool: "approval" }] });
    const cancelled = await edgestep(["cancel", runId]);
    expect(cancelled.lines).toEqual([`${runId} cancelled: the run is cancelled`]);
    const again = await edgestep(["retry", runId]);
    expect(again.code).toBe(3);
    expect(again.stderr).toMatch(/^error: conflict: /);
  });

  it("resume continues a paused run; retry redrives a failed one", async () => {
    const bounded = {
      config: { mode: { type: "bounded", iterations: 1 } },
      steps: [
        { id: "a", tool: "pass" },
        { id: "b", tool: "pass", dependsOn: ["a"] },
      ],
    };
    const paused = await submitted(bounded);
    await statusWhen(paused, (s) => s.status === "paused");
    expect((await edgestep(["resume", paused, "--iterations", "5"])).code).toBe(0);
    expect((await edgestep(["get", paused, "--watch"])).code).toBe(0);

    const failing = await submitted({
      steps: [{ id: "x", tool: "http", params: { url: script("404,200") } }],
    });
    expect((await edgestep(["get", failing, "--watch"])).code).toBe(1);
    expect((await edgestep(["retry", failing])).code).toBe(0);
    const redriven = await edgestep(["get", failing, "--watch"]);
    expect(redriven.code).toBe(0);
    expect(redriven.lines.map(normalize)).toContain(
      "run completed in <t>: 1 steps, 1 succeeded, 0 failed, 0 skipped, 0 cancelled",
    );
  });

  it("callback completes a callback step with --output, or fails it with --error", async () => {
    const plan = {
      steps: [
        { id: "cb", tool: "callback", params: { url: `${upstream.url}/echo` }, timeoutMs: 600_000 },
      ],
    };
    const tokenOf = async (runId: string) => {
      await statusWhen(runId, (s) => s.steps[0].status === "waiting");
      const call = upstream.calls.find((c) => c.path === "/echo" && c.body.includes(runId))!;
      return JSON.parse(call.body).token as string;
    };
    const ok = await submitted(plan);
    expect(
      (await edgestep(["callback", await tokenOf(ok), "--output", '{"done":true}'])).lines,
    ).toEqual(["callback applied"]);
    expect((await edgestep(["get", ok, "--watch"])).code).toBe(0);
    const failed = await submitted(plan);
    expect(
      (await edgestep(["callback", await tokenOf(failed), "--error", "job crashed"])).code,
    ).toBe(0);
    expect((await edgestep(["get", failed, "--watch"])).code).toBe(1);
    expect((await edgestep(["callback", "tok"])).code).toBe(2);
  });
});

describe("edgestep replan: a person's repair (replan mode human)", () => {
  // `find` passes 0, which its verify finds falsy: the run waits for a person's repair.
  const find = (value: number) => ({
    id: "find",
    tool: "pass",
    params: { value },
    verify: "${output}",
  });
  const plan = {
    replan: { mode: "human" },
    steps: [find(0), { id: "after", tool: "pass", params: { value: "${steps.find.data}" } }],
  };
  const waitingRun = async () => {
    const runId = await submitted(plan);
    await statusWhen(runId, (s) => s.pendingReplan?.length === 1);
    return runId;
  };

  it("--steps (JSON or a file, a list or { steps }) repairs; a repair that does not validate exits 3 and the run still waits", async () => {
    const runId = await waitingRun();
    const bad = await edgestep(["replan", runId, "--steps", '[{"id":"find","tool":"nope"}]']);
    expect([bad.code, bad.stderr]).toEqual([3, expect.stringContaining('unknown tool "nope"')]);
    expect((await statusWhen(runId, () => true)).pendingReplan).toHaveLength(1);

    const file = join(await mkdtemp(join(tmpdir(), "edgestep-replan-")), "repair.json");
    await writeFile(file, JSON.stringify({ steps: [find(7)] }));
    const repaired = await edgestep(["replan", runId, "--steps", file, "--step", "find"]);
    expect(repaired.lines).toEqual([expect.stringMatching(`^${runId} repaired: the run is \\w+$`)]);
    expect((await edgestep(["get", runId, "--watch"])).code).toBe(0);
    const done = await statusWhen(runId, (s) => s.status === "completed");
    expect(done.replans).toEqual([expect.objectContaining({ answer: "repaired" })]);
  });

  it("--give-up declines (the step fails replan_declined); exactly one of --steps and --give-up", async () => {
    const runId = await waitingRun();
    expect((await edgestep(["replan", runId])).code).toBe(2);
    expect((await edgestep(["replan", runId, "--steps", "[]", "--give-up"])).code).toBe(2);
    const notAList = await edgestep(["replan", runId, "--steps", '{"x":1}']);
    expect([notAList.code, notAList.stderr]).toEqual([
      2,
      expect.stringContaining("--steps: expected a list of steps or { steps }"),
    ]);
    const declined = await edgestep(["replan", runId, "--give-up", "no fix today"]);
    expect(declined.lines).toEqual([
      expect.stringMatching(`^${runId} repair declined: the run is \\w+$`),
    ]);
    expect((await edgestep(["get", runId, "--watch"])).code).toBe(1);
    const failed = await statusWhen(runId, (s) => s.status === "failed");
    expect(failed.steps[0].error).toMatchObject({ category: "replan_declined" });
  });
});

describe("edgestep destinations", () => {
  it("lists the destinations with their limits, calls in flight and waiting; --json the document", async () => {
    const text = await edgestep(["destinations"]);
    expect(text.code).toBe(0);
    expect(text.lines.map((l) => l.split(/ {2,}/))).toEqual([
      ["DESTINATION", "LIMITS", "IN FLIGHT", "WAITING", "PAUSED UNTIL"],
      ["api.example.com", "2 at once, 5/s", "0", "0"],
    ]);
    const json = await edgestep(["destinations", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual([
      {
        destination: "api.example.com",
        limits: { concurrency: 2, ratePerSecond: 5 },
        inFlight: 0,
        waiting: 0,
        pausedUntil: null,
      },
    ]);
  });
});

describe("errors and exit codes", () => {
  it("a reader that stops early (| head) ends the CLI quietly, with exit 0", async () => {
    const runId = await submitted({
      steps: [{ id: "big", tool: "pass", params: { value: "x".repeat(200_000) } }],
    });
    await statusWhen(runId, (s) => s.status === "completed");
    const pipeline = `set -o pipefail; "${process.execPath}" "${BIN}" results ${runId} | head -c 10 > /dev/null`;
    const { stderr } = await promisify(execFile)("bash", ["-c", pipeline], {
      env: { ...process.env, ...env },
    }); // rejects on a non-zero exit of the CLI
    expect(stderr).not.toMatch(/EPIPE|Unhandled/);
  });

  it("an unknown run exits 3 (not_found), as JSON on stderr with --json", async () => {
    const missing = `run_${"0".repeat(32)}`;
    const result = await edgestep(["get", missing]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^error: not_found: run "run_0+" not found/);
    const json = await edgestep(["get", missing, "--json"]);
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: "not_found", status: 404 } });
  });

  it("a missing or wrong key exits 3 (unauthorized); --key overrides EDGESTEP_API_KEY", async () => {
    const noKey = await cli(["validate", "examples/01-simple.json"], {
      env: { EDGESTEP_URL: worker.url },
    });
    expect(noKey.code).toBe(3);
    expect(noKey.stderr).toMatch(/^error: unauthorized: /);
    expect((await edgestep(["--key", "wrong", "validate", "examples/01-simple.json"])).code).toBe(
      3,
    );
  });

  it("an unreachable Worker exits 4, with a hint", async () => {
    const result = await cli(["get", "run_x", "--url", "http://127.0.0.1:9"]);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain("is the Worker running?");
    const watch = await cli(["get", "run_x", "--watch", "--url", "http://127.0.0.1:9"]);
    expect(watch.code).toBe(4);
    expect(watch.stderr).toContain("the run goes on without you: edgestep get run_x --watch");
  });

  it("a watch that fails names its run, as JSON with --json", async () => {
    const missing = `run_${"1".repeat(32)}`;
    const json = await edgestep(["get", missing, "--watch", "--json"]);
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr)).toMatchObject({
      error: { code: "not_found" },
      runId: missing,
    });
    // A run that does not exist does not "go on".
    expect((await edgestep(["get", missing, "--watch"])).stderr).not.toContain("goes on");
  });

  it("bad arguments and unreadable files exit 2", async () => {
    expect((await edgestep(["get"])).code).toBe(2);
    expect((await edgestep(["ls", "--limit", "0"])).code).toBe(2);
    expect((await edgestep(["ls", "--limit", "201"])).code).toBe(2);
    for (const url of ["not-a-url", "ftp://example.com"])
      expect((await cli(["stats", "--url", url])).code).toBe(2);
    expect((await cli(["stats"], { env: { EDGESTEP_URL: "nope" } })).code).toBe(2);
    // An empty EDGESTEP_URL is unset: the default URL, reached or not, but not a usage error.
    const empty = await cli(["stats"], { env: { EDGESTEP_URL: "" } });
    expect(empty.code).not.toBe(2);
    if (empty.code === 4) expect(empty.stderr).toContain("127.0.0.1:8787");
    expect((await edgestep(["nonsense"])).code).toBe(2);
    const missing = await edgestep(["run", "no-such-plan.json"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: cannot read no-such-plan.json/);
    expect((await edgestep(["run", "-"], "{not json")).code).toBe(2);
    expect((await edgestep(["run", "-"], "[1,2]")).stderr).toMatch(/does not hold a plan/);
  });

  it("a plan file must be UTF-8 (exit 2); a byte order mark is dropped", async () => {
    const dir = await mkdtemp(join(tmpdir(), "edgestep-cli-"));
    const latin1 = join(dir, "latin1.json");
    await writeFile(latin1, Buffer.from('{"name":"caf\xe9","steps":[{"tool":"pass"}]}', "latin1"));
    const refused = await edgestep(["validate", latin1]);
    expect([refused.code, refused.stderr]).toEqual([2, `error: ${latin1} is not UTF-8 text\n`]);
    const bom = join(dir, "bom.json");
    await writeFile(bom, `\ufeff${JSON.stringify({ steps: [{ id: "a", tool: "pass" }] })}`);
    expect((await edgestep(["validate", bom])).code).toBe(0);
  });

  it("with --json, the command line's own mistakes are JSON on stderr too", async () => {
    for (const args of [
      ["get", "--json"],
      ["--json", "bogus"],
      ["ls", "--limit", "0", "--json"],
    ]) {
      const result = await edgestep(args);
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stderr)).toEqual({
        error: { code: "usage", message: expect.any(String) },
      });
    }
    expect(JSON.parse((await edgestep(["get", "--json"])).stderr).error.message).toBe(
      "missing required argument 'runId'",
    );
  });

  it("--help and --version exit 0", async () => {
    const help = await edgestep(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Usage: edgestep/);
    expect(help.stdout).toMatch(/Exit codes: 0 ok; 1 a watched run ended failed/);
    expect((await edgestep(["--version"])).lines).toEqual(["0.1.0"]);
  });
});

describe("ls, stats and delete (SPEC 8 routes)", () => {
  it("ls filters by status, tag and name; stats counts; delete removes a final run", async () => {
    const tag = `cli-${Date.now()}`;
    const runId = await submitted({
      name: tag,
      tags: { suite: tag },
      steps: [{ id: "a", tool: "pass" }],
    });
    await statusWhen(runId, (s) => s.status === "completed");
    const listed = await edgestep([
      "ls",
      "--tag",
      `suite:${tag}`,
      "--status",
      "completed",
      "--name",
      tag,
    ]);
    expect(listed.code).toBe(0);
    expect(listed.lines[1]).toMatch(new RegExp(`^${runId}  completed  ${tag}`));
    const page = JSON.parse((await edgestep(["ls", "--tag", `suite:${tag}`, "--json"])).stdout);
    expect(page.runs.map((r: any) => r.runId)).toEqual([runId]);
    const stats = JSON.parse((await edgestep(["stats", "--json"])).stdout);
    expect(stats.byStatus.completed).toBeGreaterThan(0);
    expect((await edgestep(["delete", runId])).lines).toEqual([`${runId} deleted`]);
    expect((await edgestep(["get", runId])).code).toBe(3);
    expect((await edgestep(["ls", "--status", "bogus"])).code).toBe(3);
  });
});

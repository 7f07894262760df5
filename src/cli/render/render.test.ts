/**
 * The CLI's renderers, line by line: the live frame of `--watch` (progress bar, ETA, running
 * steps, retries, what the run waits for), its closing summary, the plain event lines, and the
 * `get`/`ls`/`stats`/`validate` documents. (Runs in workerd, whose clock zone is UTC.)
 */
import { describe, expect, it } from "vitest";
import type { RunEvent, RunSummary, StepStatus } from "../../client/index.ts";
import {
  renderDestinations,
  renderRun,
  renderRunList,
  renderStats,
  renderValidation,
} from "./documents.ts";
import { describeEvent, logLine } from "./events.ts";
import { duration, fit, someOf, table, terminalText } from "./format.ts";
import { exitCodeOf, progressBar, renderFrame, renderSummary } from "./progress.ts";

const NOW = Date.parse("2026-11-20T14:03:07Z");
const RUN = "run_0123456789abcdef0123456789abcdef";

function summary(extra: Partial<RunSummary> = {}): RunSummary {
  return {
    runId: RUN,
    name: "nightly",
    status: "running",
    createdAt: "2026-11-20T14:03:00.000Z",
    startedAt: "2026-11-20T14:03:01.000Z",
    endedAt: null,
    mode: { type: "continuous", maxIterations: 10000 },
    iterations: 1,
    iterationsRemaining: 9999,
    progress: {
      completedSteps: 4,
      totalSteps: 10,
      percentage: 40,
      elapsedMs: 6000,
      averageStepDurationMs: 500,
      estimatedTimeRemainingMs: 3000,
      runningSteps: 2,
    },
    summary: {
      totalSteps: 10,
      successfulSteps: 4,
      failedSteps: 0,
      skippedSteps: 0,
      cancelledSteps: 0,
    },
    ...extra,
  };
}

function step(id: string, extra: Partial<StepStatus> = {}): StepStatus {
  return {
    id,
    index: 0,
    tool: "http",
    status: "running",
    attempts: 1,
    startedAt: null,
    endedAt: null,
    durationMs: null,
    ...extra,
  };
}

describe("the live frame", () => {
  it("shows the run, a progress bar with completed/total and ETA, and the running steps", () => {
    const frame = renderFrame(
      { run: summary(), active: [step("a"), step("b")], readAt: NOW },
      NOW,
      100,
    );
    expect(frame).toEqual([
      `${RUN} nightly  running  6.0 s`,
      "[████████████░░░░░░░░░░░░░░░░░░] 4/10 40%  ETA 3.0 s",
      "running (2): a, b",
    ]);
  });

  it("ages elapsed time and ETA from when the status was read", () => {
    const [title, bar] = renderFrame({ run: summary(), active: [], readAt: NOW - 2000 }, NOW, 100);
    expect(title).toMatch(/8\.0 s$/);
    expect(bar).toMatch(/ETA 1\.0 s$/);
  });

  it("shows a retry with its next attempt time and the last error", () => {
    const retrying = step("flaky", {
      status: "retrying",
      attempts: 2,
      nextAttemptAt: "2026-11-20T14:03:11.000Z",
      error: { category: "server_error", message: "upstream answered 503", status: 503 },
    });
    const frame = renderFrame({ run: summary(), active: [retrying], readAt: NOW }, NOW, 200);
    expect(frame[2]).toBe(
      "retrying flaky: attempt 3 at 14:03:11 (in 4.0 s) after server_error (HTTP 503): upstream answered 503",
    );
  });

  it("says what the run waits for, with the command that answers it", () => {
    const run = summary({
      status: "waiting",
      pendingApproval: [
        { gate: "risk", stepIds: ["deploy"] },
        { gate: "step", stepIds: ["release"] },
      ],
    });
    const active = [
      step("release", { status: "waiting", waitingFor: "approval" }),
      step("build", { status: "waiting", waitingFor: "callback" }),
      step("nap", {
        status: "waiting",
        waitingFor: "timer",
        nextAttemptAt: "2026-11-20T15:00:00.000Z",
      }),
      step("q1", { status: "waiting", waitingFor: "quota" }),
      step("q2", { status: "waiting", waitingFor: "quota" }),
    ];
    const frame = renderFrame({ run, active, readAt: NOW }, NOW, 200);
    expect(frame[1]).not.toMatch(/ETA/);
    expect(frame.slice(2)).toEqual([
      `waiting for approval (risk gate: deploy): edgestep approve ${RUN}`,
      `waiting for approval of release: edgestep approve ${RUN} --step release`,
      "waiting for quota (2): q1, q2",
      "waiting for callback: build",
      "waiting for timer: nap until 15:00:00 (in 56 min 53 s)",
    ]);
  });

  it("says which repairs wait for a person, and the command that answers them", () => {
    const error = { category: "verification_failed", message: "verify failed" };
    const run = summary({
      status: "waiting",
      pendingReplan: [{ n: 1, stepId: "find", error, diagnosis: "step find failed" }],
    });
    const active = [
      step("find", { status: "waiting", waitingFor: "replan", error }),
      step("other", { status: "waiting", waitingFor: "replan" }),
    ];
    const frame = renderFrame({ run, active, readAt: NOW }, NOW, 200);
    expect(frame.slice(2)).toEqual([
      `waiting for a repair of find: edgestep replan ${RUN} --step find --steps <file> (or --give-up)`,
      "waiting for replan: other",
    ]);
  });

  it("says how to resume a paused run", () => {
    const frame = renderFrame(
      { run: summary({ status: "paused", iterations: 5 }), active: [], readAt: NOW },
      NOW,
      200,
    );
    expect(frame.at(-1)).toBe(`paused after 5 iterations: edgestep resume ${RUN}`);
  });

  it("fits every line to the terminal's width", () => {
    const frame = renderFrame(
      { run: summary(), active: [step("x".repeat(80))], readAt: NOW },
      NOW,
      40,
    );
    for (const line of frame) expect(line.length).toBeLessThanOrEqual(40);
    expect(frame[2]).toMatch(/…$/);
  });

  it("draws an empty, partial and full bar", () => {
    expect(progressBar(0, 4, 8)).toBe("[░░░░░░░░]");
    expect(progressBar(1, 4, 8)).toBe("[██░░░░░░]");
    expect(progressBar(4, 4, 8)).toBe("[████████]");
    expect(progressBar(0, 0, 4)).toBe("[████]");
  });
});

describe("the closing summary and exit code", () => {
  it("counts the steps and lists what failed", () => {
    const run = summary({
      status: "partial",
      endedAt: "2026-11-20T14:03:04.500Z",
      summary: {
        totalSteps: 3,
        successfulSteps: 1,
        failedSteps: 1,
        skippedSteps: 1,
        cancelledSteps: 0,
      },
    });
    const failed = [
      step("c", {
        status: "failed",
        error: { category: "client_error", message: "not found", status: 404 },
      }),
    ];
    expect(renderSummary(run, failed)).toEqual([
      "run partial in 3.5 s: 3 steps, 1 succeeded, 1 failed, 1 skipped, 0 cancelled",
      "failed c: client_error (HTTP 404): not found",
      "ended 14:03:04",
    ]);
  });

  it("exits 0 only for completed", () => {
    expect(exitCodeOf("completed")).toBe(0);
    for (const status of ["partial", "failed", "cancelled"] as const)
      expect(exitCodeOf(status)).toBe(1);
  });
});

describe("plain event lines", () => {
  const event = (type: string, extra: Partial<RunEvent> = {}): RunEvent => ({
    seq: 7,
    type,
    at: "2026-11-20T14:03:07.250Z",
    ...extra,
  });

  it.each([
    [event("run_started"), "run started"],
    [event("step_started", { stepId: "a", attempt: 2 }), "step a started (attempt 2)"],
    [event("step_started", { stepId: "a", data: { forEach: true } }), "step a started (forEach)"],
    [
      event("step_succeeded", { stepId: "a", attempt: 1, data: { executionMs: 12 } }),
      "step a succeeded (12 ms)",
    ],
    [
      event("step_failed", {
        stepId: "a",
        data: { category: "client_error", message: "nope", status: 404 },
      }),
      "step a failed: client_error (HTTP 404): nope",
    ],
    [
      event("step_retry_scheduled", {
        stepId: "a",
        attempt: 1,
        data: {
          category: "server_error",
          message: "busy",
          status: 503,
          nextAttemptAt: "2026-11-20T14:03:09.000Z",
        },
      }),
      "step a attempt 1 failed: server_error (HTTP 503): busy; retry at 14:03:09",
    ],
    [
      event("step_retry_scheduled", {
        stepId: "deploy",
        attempt: 2,
        data: {
          category: "interrupted",
          message: "the run restarted during this compensation",
          nextAttemptAt: "2026-11-20T14:03:09.000Z",
          compensation: true,
        },
      }),
      "compensation of deploy attempt 2 failed: interrupted: the run restarted during this compensation; retry at 14:03:09",
    ],
    [
      event("step_skipped", { stepId: "b", data: { reason: "dependency_failed" } }),
      "step b skipped (dependency_failed)",
    ],
    [
      event("step_waiting", { stepId: "cb", data: { waitingFor: "callback" } }),
      "step cb waiting for callback",
    ],
    [
      event("quota_wait", {
        stepId: "fetch",
        data: { destination: "api.example.com", reason: "queued", position: 4 },
      }),
      "step fetch waiting for quota at api.example.com (queued #4)",
    ],
    [
      event("quota_wait", {
        stepId: "each",
        data: {
          destination: "api.example.com",
          reason: "paused",
          item: 2,
          pausedUntil: "2026-11-20T14:03:09.000Z",
        },
      }),
      "step each item 2 waiting for quota at api.example.com (paused until 14:03:09)",
    ],
    [
      event("approval_requested", { data: { gate: "risk", stepIds: ["deploy"] } }),
      `approval requested (risk gate: deploy): edgestep approve ${RUN}`,
    ],
    [
      event("approval_requested", { stepId: "release" }),
      `approval requested: edgestep approve ${RUN} --step release`,
    ],
    [event("approval_denied", { stepId: "release" }), "approval denied for release"],
    [
      event("run_paused", { data: { iterations: 5 } }),
      `run paused after 5 iterations: edgestep resume ${RUN}`,
    ],
    [event("run_resumed", { data: { redrive: true, steps: 2 } }), "run redriven: 2 steps again"],
    [event("run_finished", { data: { status: "partial" } }), "run finished: partial"],
    [
      event("compensation_finished", { stepId: "deploy", data: { status: "succeeded" } }),
      "compensation of deploy succeeded",
    ],
    [event("webhook_failed", { data: { status: 500 } }), "webhook failed (HTTP 500)"],
    [
      event("verification_failed", {
        stepId: "find",
        data: { category: "verification_failed", message: 'verify "${output.length}" failed' },
      }),
      'step find failed verification: verify "${output.length}" failed',
    ],
    [
      event("replan_requested", { stepId: "find", data: { n: 2, mode: "human" } }),
      `repair 2 of find requested: edgestep replan ${RUN} --step find --steps <file>`,
    ],
    [
      event("replan_requested", { stepId: "find", data: { n: 1, mode: "url" } }),
      "repair 1 of find requested from the planner",
    ],
    [
      event("replan_applied", {
        stepId: "find",
        data: { n: 1, revision: 1, newStepIds: ["city"] },
      }),
      "repair 1 of find applied (plan revision 1, new steps: city)",
    ],
    [
      event("replan_failed", {
        stepId: "find",
        data: { n: 1, category: "replan_declined", message: "the repair was declined" },
      }),
      "repair 1 of find failed: replan_declined: the repair was declined",
    ],
    [event("an_unknown_event", { stepId: "a" }), "an unknown event a"],
  ])("%# %j", (e, line) => {
    expect(describeEvent(e, RUN)).toBe(line);
  });

  it("leaves out iteration events", () => {
    expect(describeEvent(event("iteration_started"), RUN)).toBeNull();
  });

  it("writes a log line with the seq, step, attempt and data", () => {
    expect(
      logLine(event("step_succeeded", { stepId: "a", attempt: 1, data: { executionMs: 12 } })),
    ).toBe('14:03:07  #7  step_succeeded  a  attempt 1  {"executionMs":12}');
  });
});

describe("terminalText", () => {
  it("shows control characters from a run's data as \ufffd, keeps colours, tabs and newlines", () => {
    expect(terminalText("a\x1b]0;title\x07b\x1b[2Jc\u009b1m\x7f")).toBe(
      "a\ufffd]0;title\ufffdb\ufffd[2Jc\ufffd1m\ufffd",
    );
    expect(terminalText("x\ty\nz")).toBe("x\ty\nz");
    expect(terminalText("\x1b[33mwarn\x1b[0m")).toBe("\x1b[33mwarn\x1b[0m");
  });

  it("ends a line that sets a colour with a reset, so a cut line does not colour the next", () => {
    expect(terminalText(fit("\x1b[1mbold and long\x1b[22m", 8))).toBe(
      "\x1b[1mbold an…\x1b[22m\x1b[0m",
    );
    expect(terminalText("\x1b[33mwarn\x1b[39m")).toBe("\x1b[33mwarn\x1b[39m\x1b[0m");
    expect(terminalText("plain")).toBe("plain");
  });
});

describe("documents", () => {
  it("get: the header, counts, and a table of steps", () => {
    const run = {
      ...summary({ status: "completed", endedAt: "2026-11-20T14:03:05.000Z" }),
      steps: [
        step("a", { status: "succeeded", durationMs: 12, tool: "pass" }),
        step("b", { status: "skipped", reason: "condition_false" }),
      ],
    };
    expect(renderRun(run, NOW)).toEqual([
      `${RUN}  completed  nightly`,
      "created 14:03:00  started 14:03:01  ended 14:03:05  elapsed 6.0 s",
      "progress 4/10 (40%)  succeeded 4  failed 0  skipped 0  cancelled 0",
      "",
      "STEP  TOOL  STATUS     ATTEMPTS  DURATION  DETAIL",
      "a     pass  succeeded  1         12 ms",
      "b     http  skipped    1                   condition_false",
    ]);
  });

  it("get: an ETA only while the run is running, not while it waits", () => {
    const progressLine = (status: RunSummary["status"]) => renderRun(summary({ status }), NOW)[2];
    expect(progressLine("running")).toMatch(/ETA 3\.0 s$/);
    expect(progressLine("waiting")).not.toMatch(/ETA/);
    expect(progressLine("paused")).not.toMatch(/ETA/);
  });

  it("ls, stats and validate", () => {
    const entry = {
      ...summary(),
      tags: { team: "payments" },
      progress: { completedSteps: 4, totalSteps: 10, percentage: 40 },
    };
    const { mode: _m, iterations: _i, iterationsRemaining: _r, ...listed } = entry;
    expect(renderRunList({ runs: [listed], next: null })).toEqual([
      "RUN                                   STATUS   NAME     CREATED (UTC)        STEPS  TAGS",
      `${RUN}  running  nightly  2026-11-20 14:03:00  4/10   team:payments`,
    ]);
    expect(renderRunList({ runs: [], next: null })).toEqual(["no runs"]);
    expect(renderStats({ total: 3, byStatus: { completed: 2, failed: 1 } })).toEqual([
      "STATUS     RUNS",
      "completed  2",
      "failed     1",
      "total 3",
    ]);
    expect(
      renderValidation({
        valid: true,
        order: ["a", "b"],
        levels: [["a"], ["b"]],
        criticalPath: ["a", "b"],
      }),
    ).toEqual([
      "valid: 2 steps in 2 levels",
      "  level 0: a",
      "  level 1: b",
      "critical path: a -> b",
    ]);
  });
});

describe("destinations", () => {
  it("limits in words, calls in flight and waiting, and when a pause ends", () => {
    const pausedUntil = new Date(NOW + 4_000).toISOString();
    const lines = renderDestinations(
      [
        {
          destination: "api.example.com",
          limits: { concurrency: 3, ratePerSecond: 20, burst: 5 },
          inFlight: 3,
          waiting: 12,
          pausedUntil: null,
        },
        { destination: "other.test", limits: {}, inFlight: 0, waiting: 2, pausedUntil },
      ],
      NOW,
    );
    expect(lines[0]).toMatch(/^DESTINATION\s+LIMITS\s+IN FLIGHT\s+WAITING\s+PAUSED UNTIL$/);
    expect(lines[1]).toMatch(/^api\.example\.com\s+3 at once, 20\/s, burst 5\s+3\s+12$/);
    expect(lines[2]).toMatch(/^other\.test\s+none\s+0\s+2\s+\d\d:\d\d:\d\d \(in 4\.0 s\)$/);
    expect(renderDestinations([], NOW)).toEqual([
      "no destinations (DESTINATIONS lists none, and none was paused lately)",
    ]);
  });
});

describe("formats", () => {
  it("durations, cut lines, lists and tables", () => {
    expect([duration(850), duration(12_340), duration(245_000), duration(7_800_000)]).toEqual([
      "850 ms",
      "12 s",
      "4 min 5 s",
      "2 h 10 min",
    ]);
    expect(fit("abcdef", 4)).toBe("abc…");
    expect(someOf(["a", "b", "c"], 2)).toBe("a, b (+1 more)");
    expect(table(["A", "BB"], [["xyz", "1"]])).toEqual(["A    BB", "xyz  1"]);
  });

  it("measures lines in terminal cells: wide characters take two, colour codes none", () => {
    expect(fit("日本語のステップ", 7)).toBe("日本語…");
    expect(fit("\x1b[33mshort\x1b[39m", 5)).toBe("\x1b[33mshort\x1b[39m\x1b[0m");
    // A control character from a run's data is shown as one cell (`�`), so it is counted as one.
    expect(fit(`${"x".repeat(10)}\x1b[2J${"y".repeat(10)}`, 20)).toBe(
      `${"x".repeat(10)}\ufffd[2J${"y".repeat(5)}…`,
    );
    expect(
      table(
        ["ID", "X"],
        [
          ["日本", "1"],
          ["ab", "2"],
        ],
      ),
    ).toEqual(["ID    X", "日本  1", "ab    2"]);
  });
});

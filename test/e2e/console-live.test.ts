/**
 * The run page beyond console.test.ts's main paths: the header ticks while the run is live, a
 * run that does not exist stops the page from following it, a refused API key says so, a
 * forEach step's items in the waterfall, the side panel with long content, and the legend's
 * colours. Waits are on DOM states, never on sleeps.
 */
import { describe, expect, it } from "vitest";
import { clickNode, expectNoProblems, nodeIs, openPage, runStatusIs, waitFor } from "./browser.ts";
import { KEY, consoleClient, useConsoleEnv } from "./console-helpers.ts";

const env = useConsoleEnv();

const { submit, page, post, url } = consoleClient(env);
const text = (selector: string) =>
  `document.querySelector(${JSON.stringify(selector)})?.textContent ?? null`;

describe("console: the run header between events", () => {
  it("ticks the elapsed time of a run that waits on a timer (no events meanwhile)", async () => {
    const runId = await submit({ steps: [{ id: "nap", tool: "wait", params: { ms: 600_000 } }] });
    const p = await page(`/runs/${runId}`);
    try {
      await waitFor(p.page, "nap waiting", nodeIs("nap", "waiting"));
      const first = await p.page.evaluate(text("[data-testid=elapsed]"));
      expect(first).toMatch(/^elapsed /);
      // The wait sends nothing until it ends: only the page's own clock can move the figure.
      await waitFor(
        p.page,
        "the elapsed time to move",
        `(${text("[data-testid=elapsed]")}) !== ${JSON.stringify(first)}`,
      );
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: a run that does not exist", () => {
  it("says so and stops following its event stream after the stream's 404", async () => {
    const p = await page(`/runs/run_${"0".repeat(32)}`);
    try {
      // "ended": the page follows no more (without the 404 it would reconnect forever).
      await waitFor(
        p.page,
        "the not-found page to stop following",
        `document.querySelector("[data-testid=run-not-found]")?.dataset.connection === "ended"`,
      );
      expect(p.requests.filter((u) => new URL(u).pathname.endsWith("/events"))).toHaveLength(1);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: a refused API key", () => {
  it("brings the prompt back saying the key was refused; the right key then shows the run", async () => {
    const runId = await submit({ steps: [{ id: "only", tool: "pass" }] });
    const p = await openPage(env().browser);
    try {
      await p.page.goto(url(`/runs/${runId}`), { waitUntil: "domcontentloaded" });
      const input = ".key-prompt input[name=apiKey]";
      await p.page.waitForSelector(input);
      expect(await p.page.$("[data-testid=key-refused]")).toBeNull(); // no key yet: nothing refused
      await p.page.type(input, "not-the-key");
      await p.page.click(".key-prompt button[type=submit]");
      await p.page.waitForSelector(".key-prompt [data-testid=key-refused]");
      expect(await p.page.evaluate(() => sessionStorage.getItem("edgestep.apiKey"))).toBeNull();
      await p.page.type(input, KEY);
      await p.page.click(".key-prompt button[type=submit]");
      await waitFor(p.page, "the run after the right key", runStatusIs("completed"));
      expect(await p.page.$(".key-prompt")).toBeNull();
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the waterfall of a forEach step", () => {
  it("shows, under the selected step, each item's attempts and its own backoff", async () => {
    const key = `items-${Date.now()}`;
    const runId = await submit({
      steps: [
        {
          id: "each",
          tool: "http",
          // Item 0 fails once then succeeds; item 1 succeeds at once.
          forEach: ["500,200", "200"],
          retry: { maxRetries: 2, baseDelayMs: 200, jitter: "none" },
          params: { url: `${env().upstream.url}/script/${key}-\${index}?plan=\${item}` },
        },
      ],
    });
    const p = await page(`/runs/${runId}`);
    try {
      await waitFor(p.page, "the run completed", runStatusIs("completed"));
      await clickNode(p.page, "each");
      const item = (k: number) => `.tl-sub[data-item-of="each"][data-item="${k}"]`;
      await p.page.waitForSelector(`${item(0)} .seg.k-attempt.o-succeeded`);
      const kinds = (k: number) =>
        p.page.$$eval(`${item(k)} .seg`, (ss) =>
          ss.map((s) => [...s.classList].filter((c) => /^[ko]-/.test(c)).join(" ")),
        );
      expect(await kinds(0)).toEqual(["k-attempt o-failed", "k-backoff", "k-attempt o-succeeded"]);
      expect(await kinds(1)).toEqual(["k-attempt o-succeeded"]);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the side panel with long content", () => {
  it("wraps long errors, params and templates and scrolls, never wider than itself", async () => {
    const long = "x".repeat(600);
    const runId = await submit({
      steps: [
        { id: "big", tool: "pass", params: { value: long } },
        {
          id: "bad",
          tool: "http",
          retry: { maxRetries: 0 },
          params: { url: `${env().upstream.url}/script/${long}?plan=404` },
        },
        { id: "never", tool: "pass", when: `\${steps.big.data.${long}}` },
      ],
    });
    const p = await page(`/runs/${runId}`);
    try {
      await waitFor(p.page, "the run failed", runStatusIs("partial"));
      for (const id of ["big", "bad", "never"]) {
        await clickNode(p.page, id);
        await p.page.waitForSelector(
          `.side-panel[data-step-id="${id}"] table.attempts, .side-panel[data-step-id="${id}"] p.muted`,
        );
        await p.page.waitForSelector(`.side-panel[data-step-id="${id}"] pre.output`);
        const { scroll, client } = await p.page.$eval(".side-panel", (e) => ({
          scroll: e.scrollWidth,
          client: e.clientWidth,
        }));
        expect([id, scroll]).toEqual([id, client]);
      }
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the graph's legend", () => {
  it("has a key for every node status, coloured as that node is", async () => {
    const runId = await submit({ steps: [{ id: "x", tool: "pass" }] });
    const p = await page(`/runs/${runId}`);
    try {
      await p.page.waitForSelector(".legend .key");
      const colours = await p.page.evaluate(() => {
        const svg = document.querySelector(".dag svg")!;
        const statuses = ["pending", "running", "waiting", "retrying", "succeeded", "failed"];
        return [...statuses, "skipped", "cancelled"].map((status) => {
          // A node of that status beside the graph's own, read as the browser styles it.
          const g = document.createElementNS("http://www.w3.org/2000/svg", "g");
          g.setAttribute("class", `node s-${status}`);
          const box = document.createElementNS("http://www.w3.org/2000/svg", "rect");
          box.setAttribute("class", "box");
          box.style.animation = "none"; // a running node pulses: compare its resting colour
          g.appendChild(box);
          svg.appendChild(g);
          const node = getComputedStyle(box);
          const drawn = [node.fill, node.stroke];
          g.remove();
          const key = document.querySelector(`.legend .key.s-${status}`);
          const style = key && getComputedStyle(key);
          return [status, drawn, style ? [style.backgroundColor, style.borderTopColor] : null];
        });
      });
      for (const [status, node, key] of colours) expect([status, key]).toEqual([status, node]);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: a finished run whose webhook is still retrying", () => {
  it("stops following the run at its end; the webhook's deliveries still reach the header", async () => {
    // The receiver answers 500 three times, then 200: retried 1 s, 2 s and 4 s later.
    const hook = `${env().upstream.url}/script/hook-${Date.now()}?plan=500,500,500,200`;
    const runId = await submit({
      webhook: { url: hook },
      steps: [{ id: "x", tool: "pass" }],
    });
    const connectionIs = (c: string) =>
      `document.querySelector(".run-header [data-connection]")?.dataset.connection === "${c}"`;
    const webhookIs = (state: string) =>
      `document.querySelector(".run-header [data-webhook-state]")?.dataset.webhookState === "${state}"`;
    const p = await page(`/runs/${runId}`);
    try {
      // Ended while the webhook is pending (without the fix: "reconnecting" until it is done).
      await waitFor(
        p.page,
        "the page to stop following while the webhook retries",
        `${runStatusIs("completed")} && ${connectionIs("ended")} && ${webhookIs("pending")}`,
      );
      const events = () => p.requests.filter((u) => new URL(u).pathname.endsWith("/events"));
      expect(events()).toHaveLength(1);
      await waitFor(p.page, "the delivery in the header", webhookIs("delivered"), 30_000);
      expect(events()).toHaveLength(1);
      expectNoProblems(p);
    } finally {
      await p.close();
    }

    // Opened again, the log holds webhook_delivered: the axis still ends at the run's end.
    const log = (await (
      await fetch(url(`/v1/runs/${runId}/events`), {
        headers: { authorization: `Bearer ${KEY}` },
      })
    ).json()) as { events: { type: string; at: string }[] };
    expect(log.events.map((e) => e.type)).toContain("webhook_delivered");
    const own = log.events
      .filter((e) => !e.type.startsWith("webhook_"))
      .map((e) => Date.parse(e.at));
    const again = await page(`/runs/${runId}`);
    try {
      await waitFor(again.page, "the page to stop following", connectionIs("ended"));
      const span = await again.page.$eval(".timeline", (e) =>
        Number((e as HTMLElement).dataset.spanMs),
      );
      expect(span).toBe(Math.max(1, own.at(-1)! - own[0]!));
      expectNoProblems(again);
    } finally {
      await again.close();
    }
  });
});

describe("console: the waterfall's colours", () => {
  it("draws an attempt that led to a repair red with its category, a cancelled wait grey", async () => {
    const runId = await submit({
      replan: { mode: "human" },
      steps: [
        { id: "v", tool: "pass", params: { value: [] }, verify: "${output.length}" },
        { id: "nap", tool: "wait", params: { ms: 600_000 } },
      ],
    });
    const p = await page(`/runs/${runId}`);
    try {
      await waitFor(
        p.page,
        "both steps waiting",
        `${nodeIs("v", "waiting")} && ${nodeIs("nap", "waiting")}`,
      );
      expect((await post(`/v1/runs/${runId}/cancel`, {})).status).toBe(200);
      await waitFor(p.page, "the run cancelled", runStatusIs("cancelled"));
      const row = (id: string) => `.tl-row[data-step-id="${id}"] .seg`;
      await p.page.waitForSelector(`${row("nap")}.k-wait.o-cancelled`);
      const segs = (id: string) =>
        p.page.$$eval(row(id), (ss) =>
          ss.map((s) => [
            [...s.classList].filter((c) => /^[ko]-/.test(c)).join(" "),
            s.getAttribute("title")!.split(" · ")[0],
          ]),
        );
      expect(await segs("v")).toEqual([
        ["k-attempt o-failed", "attempt 1: verification_failed"],
        ["k-wait o-cancelled", "waiting for replan"],
      ]);
      expect(await segs("nap")).toEqual([
        ["k-attempt o-succeeded", "attempt 1"],
        ["k-wait o-cancelled", "waiting for timer"],
      ]);
      // Drawn as the legend's cancelled key, not as a wait.
      const colours = await p.page.evaluate(
        (sel: string) => {
          const bg = (s: string) => getComputedStyle(document.querySelector(s)!).backgroundColor;
          return [bg(sel), bg(".tl-legend .seg-key.o-cancelled"), bg(".tl-legend .seg-key.k-wait")];
        },
        `${row("nap")}.k-wait.o-cancelled`,
      );
      expect(colours[0]).toBe(colours[1]);
      expect(colours[0]).not.toBe(colours[2]);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: a phone's width (390 px)", () => {
  it("fits every page: the side panel under the graph, the playground stacked, the list scrolls", async () => {
    const runId = await submit({
      name: "a-run-with-a-rather-long-name-for-a-phone",
      tags: { team: "blue", region: "eu-west-1", tier: "gold" },
      steps: [{ id: "only-step", tool: "pass" }],
    });
    const p = await page(`/runs/${runId}`);
    try {
      await p.page.setViewport({ width: 390, height: 844 });
      const fits = () => p.page.evaluate(() => document.documentElement.scrollWidth <= innerWidth);
      await waitFor(p.page, "the run completed", runStatusIs("completed"));
      await clickNode(p.page, "only-step");
      await p.page.waitForSelector(".side-panel table.attempts");
      const width = (s: string) => p.page.$eval(s, (e) => e.getBoundingClientRect().width);
      expect(await width(".graph-pane")).toBeGreaterThan(300);
      expect(await width(".side-panel")).toBeGreaterThan(300);
      expect(await fits()).toBe(true);

      await p.page.goto(url("/playground"), { waitUntil: "domcontentloaded" });
      await p.page.waitForSelector(".pg-preview .dag .node");
      expect(await fits()).toBe(true);
      expect(await width(".pg-preview")).toBeGreaterThan(300);

      await p.page.goto(url("/"), { waitUntil: "domcontentloaded" });
      await p.page.waitForSelector(`tr[data-run-id="${runId}"]`);
      expect(await fits()).toBe(true);
      const open = await p.page.$eval(".open-by-id button", (e) => e.getBoundingClientRect().right);
      expect(open).toBeLessThanOrEqual(390);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the header's progress of a run denied at its risk gate", () => {
  it("shows its steps cancelled, not a green bar at 100 %", async () => {
    const runId = await submit({
      config: { requireApprovalForRisk: "high" },
      steps: ["a", "b", "c", "d"].map((id) => ({ id, tool: "pass", risk: "high" })),
    });
    const p = await page(`/runs/${runId}`);
    try {
      await p.page.waitForSelector('.approval[data-gate="risk"]');
      expect((await post(`/v1/runs/${runId}/approve`, { approved: false })).status).toBe(200);
      await waitFor(p.page, "the run cancelled", runStatusIs("cancelled"));
      await waitFor(
        p.page,
        "the progress in words",
        `document.querySelector("[data-testid=progress]")?.textContent === "0 succeeded · 4 cancelled of 4 steps"`,
      );
      const bar = await p.page.$$eval(".run-header .progress-fill", (fs) =>
        fs.map((f) => [(f as HTMLElement).dataset.outcome, (f as HTMLElement).style.width]),
      );
      expect(bar).toEqual([["cancelled", "100%"]]);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the side panel's attempts table", () => {
  it("has each column's header on one line", async () => {
    const runId = await submit({ steps: [{ id: "one", tool: "pass" }] });
    const p = await page(`/runs/${runId}`);
    try {
      await waitFor(p.page, "the run completed", runStatusIs("completed"));
      await clickNode(p.page, "one");
      await p.page.waitForSelector(".side-panel table.attempts tbody tr");
      const lines = await p.page.$$eval(".side-panel table.attempts th", (ths) =>
        ths.map((th) => {
          const range = document.createRange();
          range.selectNodeContents(th);
          return [th.textContent, range.getClientRects().length];
        }),
      );
      expect(lines).toEqual([
        ["#", 1],
        ["item", 1],
        ["started", 1],
        ["took", 1],
        ["outcome", 1],
      ]);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

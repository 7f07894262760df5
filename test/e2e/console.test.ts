/**
 * The console in a real browser (headless Chromium, puppeteer-core), against the Worker
 * built by wrangler and served by Miniflare over HTTP, with API_KEYS set. Everything here
 * works with today's API; what needs the listing routes (SPEC 8) is in
 * console-listing.test.ts. Waits are on DOM states, never on sleeps.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ElementHandle } from "puppeteer-core";
import { describe, expect, it } from "vitest";
import {
  clickNode,
  clickWhenShown,
  expectNoProblems,
  nodeIs,
  openPage,
  runStatusIs,
  screenshot,
  setPlanText,
  waitFor,
} from "./browser.ts";
import { KEY, consoleClient, useConsoleEnv } from "./console-helpers.ts";

const env = useConsoleEnv();

const { submit, get, post, page, deploy, url } = consoleClient(env);
const upstream = () => env().upstream.url;

describe("console: serving and the API key", () => {
  it("is served at / by the Worker; the API's paths stay the API's", async () => {
    const html = await fetch(url("/"), { headers: { "sec-fetch-mode": "navigate" } });
    expect(html.status).toBe(200);
    expect(await html.text()).toContain('<div id="app">');
    expect(html.headers.get("content-security-policy")).toContain("script-src 'self'");
    // A browser opening an API URL gets the API's JSON, not the console's page.
    const api = await fetch(url("/v1/runs/run_nope"), {
      headers: { "sec-fetch-mode": "navigate" },
    });
    expect(api.headers.get("content-type")).toContain("application/json");
    // Every request reaches the Worker first: what the API does not answer on its own paths
    // is a JSON 404 (405 for another method), and the console's files come from the assets.
    const unknown = await fetch(url("/v1/nope"), { headers: { authorization: `Bearer ${KEY}` } });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: "not_found" } });
    const wrong = await fetch(url("/openapi.json"), { method: "POST" });
    expect(wrong.status).toBe(405);
    expect(await wrong.json()).toMatchObject({ error: { code: "method_not_allowed" } });
    const script = await fetch(url("/assets/main.js"));
    expect(script.headers.get("content-type")).toContain("javascript");
    expect(script.headers.get("x-content-type-options")).toBe("nosniff");
    for (const page of ["/runs/run_x", "/playground"]) {
      const deep = await fetch(url(page), { headers: { "sec-fetch-mode": "navigate" } });
      expect(deep.status).toBe(200);
      expect(await deep.text()).toContain('<div id="app">');
    }
    // A path that names a file (an extension) and is not one is a 404, not the console's page.
    for (const missing of ["/assets/nope.js", "/favicon-missing.png"]) {
      const res = await fetch(url(missing));
      expect([missing, res.status]).toEqual([missing, 404]);
    }
  });

  it("asks for the key, keeps it in sessionStorage only, and shows the run", async () => {
    const runId = await submit({
      name: "keyed",
      steps: [{ id: "only", tool: "pass", params: { value: 1 } }],
    });
    const p = await openPage(env().browser);
    try {
      await p.page.goto(url(`/runs/${runId}`), { waitUntil: "domcontentloaded" });
      await p.page.waitForSelector(".key-prompt input[name=apiKey]");
      await p.page.type(".key-prompt input[name=apiKey]", KEY);
      await p.page.click(".key-prompt button[type=submit]");
      await waitFor(p.page, "the run's status after the key", runStatusIs("completed"));
      expect(await p.page.evaluate(() => sessionStorage.getItem("edgestep.apiKey"))).toBe(KEY);
      const stored = await p.page.evaluate(() => Object.values(localStorage));
      expect(stored.filter((v) => v.includes(KEY))).toEqual([]);
      expect(p.page.url()).not.toContain(KEY);
      expect(p.requests.filter((r) => r.includes(KEY))).toEqual([]);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the run page", () => {
  it("shows every node and turns them green as steps succeed, without a reload", async () => {
    const runId = await submit({
      name: "live-chain",
      input: { flag: false },
      steps: [
        { id: "gate", tool: "approval" },
        { id: "a", tool: "http", dependsOn: ["gate"], params: { url: `${upstream()}/delay/150` } },
        { id: "b", tool: "http", dependsOn: ["a"], params: { url: `${upstream()}/delay/150` } },
        { id: "c", tool: "pass", dependsOn: ["b"], params: { value: "${steps.b.data}" } },
        { id: "maybe", tool: "pass", dependsOn: ["gate"], when: "${input.flag}" },
        { id: "after-maybe", tool: "pass", dependsOn: ["maybe"] },
      ],
    });
    const p = await page(`/runs/${runId}`);
    try {
      await waitFor(p.page, "the gate waiting", nodeIs("gate", "waiting"));
      const ids = await p.page.$$eval(".dag .node", (ns) =>
        ns.map((n) => (n as SVGElement).dataset.stepId),
      );
      expect(ids.sort()).toEqual(["a", "after-maybe", "b", "c", "gate", "maybe"]);
      for (const id of ["a", "b", "c"])
        expect(
          await p.page.$eval(
            `.dag .node[data-step-id="${id}"]`,
            (n) => (n as SVGElement).dataset.status,
          ),
        ).toBe("pending");
      await p.page.evaluate(() => ((window as any).__sameDocument = true));

      const answered = await post(`/v1/runs/${runId}/approve`, { approved: true, stepId: "gate" });
      expect(answered.status).toBe(200);
      for (const id of ["gate", "a", "b", "c"])
        await waitFor(p.page, `${id} green`, nodeIs(id, "succeeded"));
      await waitFor(p.page, "the run completed", runStatusIs("completed"));
      expect(await p.page.evaluate(() => (window as any).__sameDocument)).toBe(true);

      // A `when` that was false and a step skipped because of it look different.
      const reason = (id: string) =>
        p.page.$eval(`.dag .node[data-step-id="${id}"]`, (n) => (n as SVGElement).dataset.reason);
      expect(await reason("maybe")).toBe("condition_false");
      expect(await reason("after-maybe")).toBe("dependency_skipped");

      // The side panel: the selected step's attempts and output.
      await clickNode(p.page, "b");
      await p.page.waitForSelector('.side-panel[data-step-id="b"] table.attempts tbody tr');
      expect(
        await p.page.$eval(".side-panel [data-testid=step-status]", (e) => e.textContent),
      ).toBe("succeeded");
      expect(await p.page.$eval(".side-panel pre.output", (e) => e.textContent)).toContain(
        '"ms": 150',
      );
      // The waterfall (fed by the event stream, which can trail the status a little): a row
      // per step that ran, the gate's wait, c's succeeded attempt, the skip marks.
      await p.page.waitForSelector('.tl-row[data-step-id="c"] .seg.k-attempt.o-succeeded');
      const rows = await p.page.$$eval(".tl-row", (rs) =>
        rs.map((r) => (r as HTMLElement).dataset.stepId),
      );
      expect(rows).toEqual(expect.arrayContaining(["gate", "a", "b", "c", "maybe"]));
      expect(await p.page.$$eval('.tl-row[data-step-id="gate"] .seg.k-wait', (s) => s.length)).toBe(
        1,
      );
      expect(await p.page.$$eval('.tl-row[data-step-id="maybe"] .tl-skip', (s) => s.length)).toBe(
        1,
      );
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("approves the risk gate and an approval step from the page; the run completes", async () => {
    const runId = await submit(deploy());
    const p = await page(`/runs/${runId}`);
    try {
      await p.page.waitForSelector('.approval[data-gate="risk"] input[value="deploy"]');
      await clickWhenShown(p.page, 'button[data-action="approve-gate"]');
      await p.page.waitForSelector('.approval[data-gate="step"][data-step-id="release"]', {
        timeout: 20_000,
      });
      await waitFor(p.page, "deploy's items all done", nodeIs("deploy", "succeeded"));
      await p.page.type('.approval[data-step-id="release"] input', "from-the-console");
      await clickWhenShown(p.page, 'button[data-action="approve-step"]');
      await waitFor(p.page, "the run completed", runStatusIs("completed"));
      await waitFor(p.page, "shift-traffic green", nodeIs("shift-traffic", "succeeded"));
      const release = await get(`/v1/runs/${runId}/steps/release`);
      expect(release.data).toEqual({ approved: true, comment: "from-the-console" });
      expect(
        await p.page.$eval('.dag .node[data-step-id="deploy"] .sub', (e) => e.textContent),
      ).toContain("3/3 items");
      // The event stream (which feeds the waterfall) has caught up and ended.
      await p.page.waitForSelector('.tl-row[data-step-id="shift-traffic"] .seg.o-succeeded');
      await p.page.waitForSelector(".conn-ended");
      await screenshot(p.page, "console-run-completed.png");
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("denies an approval step only on a second click", async () => {
    const runId = await submit({ steps: [{ id: "gate", tool: "approval" }] });
    const p = await page(`/runs/${runId}`);
    try {
      await clickWhenShown(p.page, 'button[data-action="deny-step"]');
      await p.page.waitForSelector('button[data-action="deny-step-confirm"]');
      expect((await get(`/v1/runs/${runId}/steps/gate`)).status).toBe("waiting");
      await clickWhenShown(p.page, 'button[data-action="deny-step-confirm"]');
      await waitFor(p.page, "the run failed", runStatusIs("failed"));
      expect((await get(`/v1/runs/${runId}/steps/gate`)).error.category).toBe("approval_denied");
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("shows a failed run's rollback: failed and skipped nodes, the compensation path", async () => {
    const runId = await submit(deploy(true));
    expect((await post(`/v1/runs/${runId}/approve`, { approved: true })).status).toBe(200);
    const p = await page(`/runs/${runId}`);
    try {
      await waitFor(p.page, "the run failed", runStatusIs("failed"));
      await p.page.waitForSelector(".rollback.rb-completed", { timeout: 20_000 });
      await p.page.waitForSelector(".edge.compensation");
      expect(
        await p.page.$eval(
          '.dag .node[data-step-id="deploy"]',
          (n) => (n as SVGElement).dataset.status,
        ),
      ).toBe("failed");
      expect(
        await p.page.$eval(
          '.dag .node[data-step-id="release"]',
          (n) => (n as SVGElement).dataset.reason,
        ),
      ).toBe("dependency_failed");
      await p.page.waitForSelector(
        '.tl-row[data-step-id="deploy"] .seg.k-compensation.o-succeeded',
      );
      await clickNode(p.page, "deploy");
      await p.page.waitForSelector('.side-panel[data-step-id="deploy"] table.attempts tr.bad');
      // Redrive is refused for a rolled-back run (its work was undone): no button for it.
      expect(await p.page.$('button[data-action="retry"]')).toBeNull();
      await p.page.waitForSelector(".conn-ended");
      await screenshot(p.page, "console-run-rolled-back.png");
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("answers the risk gate with skipSteps, cancels, and redrives from the page", async () => {
    const skipRun = await submit({
      config: { requireApprovalForRisk: "high" },
      steps: [
        { id: "safe", tool: "pass", risk: "high" },
        { id: "drop-tables", tool: "pass", risk: "high" },
      ],
    });
    const waitRun = await submit({ steps: [{ id: "nap", tool: "wait", params: { ms: 600_000 } }] });
    const key = `flaky-${Date.now()}`;
    const flakyRun = await submit({
      steps: [
        { id: "ok", tool: "pass" },
        {
          id: "flaky",
          tool: "http",
          retry: { maxRetries: 0 },
          params: { url: `${upstream()}/script/${key}?plan=500,200` },
        },
      ],
    });

    const p = await page(`/runs/${skipRun}`);
    try {
      await p.page.waitForSelector('.approval[data-gate="risk"] input[value="drop-tables"]');
      await p.page.click('.approval input[value="drop-tables"]');
      await clickWhenShown(p.page, 'button[data-action="approve-gate"]');
      await waitFor(p.page, "the run completed", runStatusIs("completed"));
      expect(
        await p.page.$eval(
          '.dag .node[data-step-id="drop-tables"]',
          (n) => (n as SVGElement).dataset.reason,
        ),
      ).toBe("skipped_by_user");

      await p.page.goto(url(`/runs/${waitRun}`), { waitUntil: "domcontentloaded" });
      await waitFor(p.page, "nap waiting", nodeIs("nap", "waiting"));
      await clickWhenShown(p.page, 'button[data-action="cancel"]');
      await clickWhenShown(p.page, 'button[data-action="cancel-confirm"]');
      await waitFor(p.page, "the run cancelled", runStatusIs("cancelled"));

      await p.page.goto(url(`/runs/${flakyRun}`), { waitUntil: "domcontentloaded" });
      await waitFor(p.page, "the run partial", runStatusIs("partial"));
      await p.page.waitForSelector(".conn-ended"); // its event stream is over
      await clickWhenShown(p.page, 'button[data-action="retry"]');
      await waitFor(p.page, "the redriven run completed", runStatusIs("completed"));
      await waitFor(p.page, "flaky green", nodeIs("flaky", "succeeded"));
      // The waterfall follows the redrive's events too, however fast it ended.
      await p.page.waitForSelector('.tl-row[data-step-id="flaky"] .seg.o-succeeded');
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the playground", () => {
  it("shows a cycle at its path, previews a valid plan's levels, submits it and opens the run", async () => {
    const p = await page("/playground");
    try {
      await p.page.waitForSelector("textarea[name=plan]");
      const setPlan = (plan: unknown) => setPlanText(p.page, JSON.stringify(plan, null, 2));
      await setPlan({
        steps: [
          { id: "a", tool: "pass", dependsOn: ["c"] },
          { id: "b", tool: "pass", dependsOn: ["a"] },
          { id: "c", tool: "pass", dependsOn: ["b"] },
        ],
      });
      await clickWhenShown(p.page, 'button[data-action="validate"]');
      await p.page.waitForSelector("[data-testid=invalid] .issues li");
      const issues = await p.page.$$eval(".issues li", (ls) =>
        ls.map((l) => ({ path: (l as HTMLElement).dataset.path, text: l.textContent })),
      );
      expect(
        issues.some(
          (i) => /^steps\.\d+\.dependsOn\.0$/.test(i.path ?? "") && /cycle/.test(i.text ?? ""),
        ),
      ).toBe(true);

      await setPlan({
        name: "from-the-playground",
        steps: [
          { id: "fetch", tool: "pass", params: { value: [1, 2, 3] } },
          {
            id: "each",
            tool: "pass",
            forEach: "${steps.fetch.data}",
            params: { value: "${item}" },
          },
          { id: "side", tool: "pass", dependsOn: ["fetch"] },
          { id: "sum", tool: "pass", dependsOn: ["side"], params: { value: "${steps.each.data}" } },
        ],
      });
      await clickWhenShown(p.page, 'button[data-action="validate"]');
      await p.page.waitForSelector("[data-testid=valid] .levels li");
      expect(await p.page.$$eval(".levels li", (ls) => ls.map((l) => l.textContent))).toEqual([
        "level 0: fetch",
        "level 1: each, side",
        "level 2: sum",
      ]);
      // The preview draws the template dependency (each -> sum) and the levels.
      await p.page.waitForSelector('.pg-preview .node[data-step-id="sum"]');
      expect(await p.page.$$eval(".pg-preview .dag .node", (ns) => ns.length)).toBe(4);
      expect(
        await p.page.$eval('.pg-preview .node[data-step-id="sum"] .level', (e) => e.textContent),
      ).toBe("L2");
      expect(await p.page.$$eval(".pg-preview .edge:not(.compensation)", (es) => es.length)).toBe(
        4,
      );
      expect(await p.page.$$eval(".pg-preview .node .crit-mark", (es) => es.length)).toBe(3);
      // The draft stays in the tab, as the key does: not for the next person on this browser.
      const draft = await p.page.evaluate(() => ({
        tab: sessionStorage.getItem("edgestep.playground"),
        browser: localStorage.getItem("edgestep.playground"),
      }));
      expect(draft.tab).toContain("from-the-playground");
      expect(draft.browser).toBeNull();

      await clickWhenShown(p.page, 'button[data-action="submit"]');
      await waitFor(p.page, "the run page", `location.pathname.startsWith("/runs/run_")`);
      await waitFor(p.page, "the run completed", runStatusIs("completed"));
      const runId = p.page.url().split("/runs/")[1]!;
      expect((await get(`/v1/runs/${runId}`)).name).toBe("from-the-playground");
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the playground's preview as the plan grows", () => {
  it("draws every step of a plan that gained steps, with no page error", async () => {
    const p = await page("/playground");
    try {
      await p.page.waitForSelector("textarea[name=plan]");
      const chainOf = (n: number) => ({
        steps: Array.from({ length: n }, (_, i) => ({
          id: `s${i}`,
          tool: "pass",
          ...(i > 0 && { dependsOn: [`s${i - 1}`] }),
        })),
      });
      for (const n of [2, 6]) {
        await setPlanText(p.page, JSON.stringify(chainOf(n)));
        await p.page.waitForSelector(`.pg-preview .node[data-step-id="s${n - 1}"]`);
        expect(await p.page.$$eval(".pg-preview .dag .node", (ns) => ns.length)).toBe(n);
      }
      // A verdict is of the text it was asked for: opening a file takes it away.
      await clickWhenShown(p.page, 'button[data-action="validate"]');
      await p.page.waitForSelector("[data-testid=valid]");
      const file = join(mkdtempSync(join(tmpdir(), "pg-")), "plan.json");
      writeFileSync(file, JSON.stringify(chainOf(3)));
      const input = await p.page.$('input[type="file"]');
      await (input as ElementHandle<HTMLInputElement>).uploadFile(file);
      await p.page.waitForFunction(
        () => document.querySelectorAll(".pg-preview .dag .node").length === 3,
      );
      expect(await p.page.$("[data-testid=valid]")).toBeNull();
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the playground's file picker", () => {
  it("opens the same file again after the text was edited", async () => {
    const p = await page("/playground");
    try {
      await p.page.waitForSelector("textarea[name=plan]");
      const file = join(mkdtempSync(join(tmpdir(), "pg-")), "plan.json");
      writeFileSync(file, JSON.stringify({ steps: [{ id: "from-file", tool: "pass" }] }));
      const input = (await p.page.$('input[type="file"]')) as ElementHandle<HTMLInputElement>;
      const textIs = (s: string) =>
        `document.querySelector("textarea[name=plan]").value.includes(${JSON.stringify(s)})`;
      await input.uploadFile(file);
      await waitFor(p.page, "the file's text", textIs("from-file"));
      await p.page.$eval("textarea[name=plan]", (t) => {
        (t as HTMLTextAreaElement).value = "{}";
        t.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await waitFor(p.page, "the edit", `!(${textIs("from-file")})`);
      await input.uploadFile(file);
      await waitFor(p.page, "the same file's text again", textIs("from-file"));
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

describe("console: the runs list without the listing routes", () => {
  it("says listing is not available and opens a run by id", async () => {
    const runId = await submit({ steps: [{ id: "x", tool: "pass" }] });
    const p = await page("/");
    try {
      // Answer GET /v1/runs and /v1/stats as a server without them would, whatever this one has.
      await p.page.setRequestInterception(true);
      p.page.on("request", (r) => {
        const path = new URL(r.url()).pathname;
        if (path === "/v1/runs" || path === "/v1/stats") {
          void r.respond({
            status: 404,
            contentType: "application/json",
            body: JSON.stringify({
              error: { code: "not_found", message: `no route for GET ${path}` },
            }),
          });
        } else void r.continue();
      });
      await p.page.reload({ waitUntil: "domcontentloaded" });
      await p.page.waitForSelector("[data-testid=listing-unavailable]");
      await p.page.type(".open-by-id input", runId);
      await p.page.click(".open-by-id button");
      await waitFor(p.page, "the run page", runStatusIs("completed"));
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

/** A seeded random DAG of `pass` steps: each depends on one or two of the ten before it. */
function randomDag(n: number, name: string) {
  let seed = 42;
  const rand = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  const steps = Array.from({ length: n }, (_, i) => {
    const deps = new Set<string>();
    if (i > 0)
      for (let k = 0; k < 1 + Math.floor(rand() * 2); k++)
        deps.add(`s${Math.max(0, i - 1 - Math.floor(rand() * 10))}`);
    return { id: `s${i}`, tool: "pass", params: { value: i }, dependsOn: [...deps] };
  });
  return { name, steps };
}

describe("console: large runs (figures reported, not asserted)", () => {
  it(
    "paints a 200-step run and lays out a 1,000-step run that still pans, zooms and selects",
    { timeout: 90_000 },
    async () => {
      const figures: string[] = [];
      for (const n of [200, 1000]) {
        const runId = await submit(randomDag(n, `scale-${n}`));
        const p = await page("/");
        try {
          // The longest gap between two frames while the page loads: how long it was frozen.
          await p.page.evaluateOnNewDocument(() => {
            const w = window as unknown as { __longestFrame: number };
            w.__longestFrame = 0;
            let last = performance.now();
            const tick = (t: number) => {
              w.__longestFrame = Math.max(w.__longestFrame, t - last);
              last = t;
              requestAnimationFrame(tick);
            };
            requestAnimationFrame(tick);
          });
          // First paint: navigation start to every node of the DAG in the document (with the header).
          await p.page.goto(url(`/runs/${runId}`), { waitUntil: "domcontentloaded" });
          await waitFor(
            p.page,
            `${n} nodes`,
            `document.querySelectorAll('.dag .node').length === ${n} && document.querySelector('.run-header') !== null && ((window.__painted ??= performance.now()), true)`,
            60_000,
          );
          const painted = await p.page.evaluate(() => (window as any).__painted as number);
          const layoutMs = Number(
            await p.page.$eval(".dag-wrap", (e) => (e as HTMLElement).dataset.layoutMs),
          );
          const frozen = await p.page.evaluate(() => (window as any).__longestFrame as number);
          figures.push(
            `${n} steps: DAG painted ${painted.toFixed(0)} ms after navigation; dagre layout ${layoutMs} ms (${n > 300 ? "in the layout worker" : "in the page"}); longest frame until then ${frozen.toFixed(0)} ms`,
          );

          // Still usable: the wheel zooms, a click selects a step.
          const before = await p.page.$eval(
            ".dag-stage",
            (e) => (e as HTMLElement).style.transform,
          );
          const box = (await (await p.page.$(".dag"))!.boundingBox())!;
          await p.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
          await p.page.mouse.wheel({ deltaY: -400 });
          await waitFor(
            p.page,
            "a zoom",
            `document.querySelector('.dag-stage').style.transform !== ${JSON.stringify(before)}`,
          );
          const started = Date.now();
          await clickNode(p.page, `s${n - 1}`);
          await p.page.waitForSelector(
            `.side-panel[data-step-id="s${n - 1}"] table.attempts tbody tr`,
          );
          figures.push(
            `${n} steps: a click on a node to its side panel with attempts: ${Date.now() - started} ms`,
          );
          await waitFor(p.page, "the run completed", runStatusIs("completed"));
          expectNoProblems(p);
        } finally {
          await p.close();
        }
      }
      console.log(`console figures:\n  ${figures.join("\n  ")}`);
    },
  );
});

describe("console: the playground's warnings", () => {
  it("lists validation's warnings at their paths, and the submission's on the run page", async () => {
    const p = await page("/playground");
    try {
      await p.page.waitForSelector("textarea[name=plan]");
      const plan = {
        steps: [{ id: "a", tool: "pass", rationale: "because", params: { value: 1 } }],
      };
      await setPlanText(p.page, JSON.stringify(plan));
      const warnings = () =>
        p.page.$$eval("[data-testid=warnings] li", (ls) =>
          ls.map((l) => [(l as HTMLElement).dataset.path, l.textContent]),
        );
      const expected = [
        ["steps.0.rationale", 'steps.0.rationale unknown step field "rationale" was ignored'],
      ];
      await clickWhenShown(p.page, 'button[data-action="validate"]');
      await p.page.waitForSelector("[data-testid=valid]");
      await p.page.waitForSelector("[data-testid=warnings] li");
      expect(await warnings()).toEqual(expected);

      await clickWhenShown(p.page, 'button[data-action="submit"]');
      await waitFor(p.page, "the run page", `location.pathname.startsWith("/runs/run_")`);
      await p.page.waitForSelector(".run-page [data-testid=warnings] li");
      expect(await warnings()).toEqual(expected);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

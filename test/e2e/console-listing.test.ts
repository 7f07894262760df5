/**
 * The console's runs list against the listing routes of SPEC 8 (`GET /v1/runs`,
 * `GET /v1/stats`, `DELETE /v1/runs/:id`, plan `tags`); the console's behaviour without them
 * is tested in console.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clickWhenShown, expectNoProblems, openPage, runStatusIs, waitFor } from "./browser.ts";
import {
  consoleClient,
  startConsoleEnv,
  stopConsoleEnv,
  type ConsoleEnv,
} from "./console-helpers.ts";

let env: ConsoleEnv;
const { submit, get, post, page, url } = consoleClient(() => env);

/** The names of the listed runs, top to bottom. */
const listedNames = `[...document.querySelectorAll("table.runs tbody tr td:nth-child(2) a")].map((a) => a.textContent)`;
const listedAre = (names: string[]) =>
  `JSON.stringify(${listedNames}) === ${JSON.stringify(JSON.stringify(names))}`;

async function waitForRun(runId: string, status: string) {
  for (let i = 0; i < 400; i++) {
    if ((await get(`/v1/runs/${runId}`)).status === status) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} never became ${status}`);
}

describe("console: the runs list (SPEC 8's listing routes)", () => {
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    env = await startConsoleEnv();
    ids.a = await submit({
      name: "list-a",
      tags: { team: "blue" },
      steps: [{ id: "x", tool: "pass" }],
    });
    await waitForRun(ids.a, "completed");
    ids.b = await submit({
      name: "list-b",
      tags: { team: "red" },
      steps: [{ id: "ok", tool: "approval" }],
    });
    await waitForRun(ids.b, "waiting");
    ids.c = await submit({
      name: "list-c",
      tags: { team: "blue", tier: "1", region: "eu west" },
      steps: [
        { id: "bad", tool: "http", params: { url: `${env.upstream.url}/script/list-c?plan=404` } },
      ],
    });
    await waitForRun(ids.c, "failed");
  });
  afterAll(async () => {
    await stopConsoleEnv(env ?? {});
  });

  it("lists runs newest first with their counts by status, and filters by status, name and tag", async () => {
    const p = await page("/");
    try {
      await waitFor(
        p.page,
        "the three runs, newest first",
        listedAre(["list-c", "list-b", "list-a"]),
      );
      const counts = await p.page.$$eval("[data-count-status]", (cs) =>
        Object.fromEntries(cs.map((c) => [(c as HTMLElement).dataset.countStatus, c.textContent])),
      );
      expect(counts).toEqual({
        waiting: "waiting 1",
        completed: "completed 1",
        failed: "failed 1",
      });

      await p.page.select("select[name=status]", "waiting");
      await waitFor(p.page, "status filter", listedAre(["list-b"]));
      await p.page.select("select[name=status]", "");
      expect(await p.page.$("[data-testid=counts-unfiltered]")).toBeNull();
      await p.page.type("input[name=name]", "list-a");
      await waitFor(p.page, "name filter", listedAre(["list-a"]));
      // The counts stay those of every run: said so under a name filter.
      expect(await p.page.$eval("[data-testid=counts]", (c) => c.textContent)).toMatch(
        /^all runs:.*counts of all runs: the name and tag filters do not apply/,
      );
      await p.page.$eval("input[name=name]", (i) => {
        (i as HTMLInputElement).value = "";
        i.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await p.page.type("input[name=tag]", "team:blue");
      await waitFor(p.page, "tag filter", listedAre(["list-c", "list-a"]));
      await p.page.type("input[name=tag]", " tier:1");
      await waitFor(p.page, "two tags, both must match", listedAre(["list-c"]));
      // A value with a space, quoted.
      await p.page.$eval("input[name=tag]", (i) => {
        (i as HTMLInputElement).value = "";
        i.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await waitFor(p.page, "no tag filter", listedAre(["list-c", "list-b", "list-a"]));
      await p.page.type("input[name=tag]", 'region:"eu west"');
      await waitFor(p.page, "a quoted tag value", listedAre(["list-c"]));
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("refreshes by itself: a new run appears and a status change shows, without a reload", async () => {
    const p = await page("/");
    try {
      await waitFor(p.page, "the list", listedAre(["list-c", "list-b", "list-a"]));
      await p.page.evaluate(() => ((window as any).__sameDocument = true));
      const d = await submit({ name: "list-d", steps: [{ id: "x", tool: "pass" }] });
      await waitFor(
        p.page,
        "the new run on top",
        listedAre(["list-d", "list-c", "list-b", "list-a"]),
      );
      expect((await post(`/v1/runs/${ids.b}/approve`, { approved: true })).status).toBe(200);
      await waitFor(
        p.page,
        "list-b completed in the list",
        `document.querySelector('tr[data-run-id="${ids.b}"] [data-run-status]')?.dataset.runStatus === "completed"`,
      );
      expect(await p.page.evaluate(() => (window as any).__sameDocument)).toBe(true);
      // A row links to its run.
      await p.page.click(`tr[data-run-id="${d}"] a`);
      await waitFor(p.page, "the run page", runStatusIs("completed"));
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("keeps its filters in the address: Back from a run shows the same filtered list", async () => {
    const p = await page("/");
    try {
      await p.page.waitForSelector("table.runs");
      await p.page.select("select[name=status]", "failed");
      await p.page.type("input[name=tag]", "team:blue");
      await waitFor(p.page, "the filtered list", listedAre(["list-c"]));
      await waitFor(
        p.page,
        "the filters in the address",
        `location.search === "?status=failed&tags=team%3Ablue"`,
      );
      await p.page.click(`tr[data-run-id="${ids.c}"] a`);
      await waitFor(p.page, "the run page", runStatusIs("failed"));
      await p.page.goBack();
      await waitFor(
        p.page,
        "the filters back in their boxes",
        `document.querySelector("select[name=status]")?.value === "failed" &&
         document.querySelector("input[name=tag]")?.value === "team:blue"`,
      );
      await waitFor(p.page, "the filtered list again", listedAre(["list-c"]));
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("clears the rows under a refused tag filter and stops asking until the filter changes", async () => {
    const p = await page("/");
    try {
      await waitFor(p.page, "the list", `(${listedNames}).length > 0`);
      await p.page.type("input[name=tag]", "nocolon");
      await waitFor(
        p.page,
        "the 400 without the previous filter's rows, no refresh due",
        `/not key:value/.test(document.querySelector(".page .message")?.textContent ?? "") &&
         !document.querySelector("table.runs") &&
         document.querySelector(".page")?.dataset.refreshing === "false"`,
      );
      await p.page.$eval("input[name=tag]", (i) => {
        (i as HTMLInputElement).value = "team:red";
        i.dispatchEvent(new Event("input", { bubbles: true }));
      });
      await waitFor(p.page, "a valid filter's rows", listedAre(["list-b"]));
      expect(await p.page.$(".page .message")).toBeNull();
      expect(await p.page.$eval(".page", (e) => (e as HTMLElement).dataset.refreshing)).toBe(
        "true",
      );
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("asks nothing more behind the API key prompt", async () => {
    const p = await openPage(env.browser);
    try {
      await p.page.goto(url("/"), { waitUntil: "domcontentloaded" });
      await p.page.waitForSelector(".key-prompt input[name=apiKey]");
      await waitFor(
        p.page,
        "the list to stop refreshing",
        `document.querySelector(".page")?.dataset.refreshing === "false"`,
      );
      const lists = p.requests.filter((u) => new URL(u).pathname === "/v1/runs");
      expect(lists).toHaveLength(1);
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });

  it("deletes a final run from its page: gone from the API and the list", async () => {
    const p = await page("/");
    try {
      await p.page.waitForSelector(`tr[data-run-id="${ids.a}"] a`);
      await p.page.click(`tr[data-run-id="${ids.a}"] a`);
      await waitFor(p.page, "the run", runStatusIs("completed"));
      await clickWhenShown(p.page, 'button[data-action="delete"]');
      await clickWhenShown(p.page, 'button[data-action="delete-confirm"]');
      await waitFor(p.page, "back on the list", `location.pathname === "/"`);
      await waitFor(
        p.page,
        "the list without it",
        `!(${listedNames}).includes("list-a") && (${listedNames}).length > 0`,
      );
      expect(
        (
          await fetch(url(`/v1/runs/${ids.a}`), {
            headers: { authorization: "Bearer console-test-key" },
          })
        ).status,
      ).toBe(404);
      // The deleted run's page was replaced by the list: Back goes to the list it came from.
      await p.page.goBack();
      await waitFor(p.page, "the list again", `(${listedNames}).length > 0`);
      expect(await p.page.$("[data-testid=run-not-found]")).toBeNull();
      expectNoProblems(p);
    } finally {
      await p.close();
    }
  });
});

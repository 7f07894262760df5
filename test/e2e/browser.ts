/**
 * Headless Chromium for the console's tests: puppeteer-core driving the browser that the
 * npm package @sparticuz/chromium ships (no download step). One browser per test file;
 * each page records what would be a bug for a user: uncaught errors, console errors and
 * 5xx answers.
 */
import chromium from "@sparticuz/chromium";
import { mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { expect } from "vitest";

export async function launchBrowser(): Promise<Browser> {
  // The package's flags, less the ones that would hide a same-origin bug.
  const args = chromium.args.filter((a) => a !== "--disable-web-security");
  return puppeteer.launch({
    executablePath: await chromium.executablePath(),
    args: [...args, "--no-sandbox", "--disable-dev-shm-usage"],
    headless: true,
    defaultViewport: { width: 1400, height: 1000 },
  });
}

export interface ConsolePage {
  page: Page;
  /** Console errors and uncaught exceptions, and every 5xx the page got. */
  problems: string[];
  /** Every URL the page requested. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * A fresh page (a tab: its own sessionStorage). (Not a browser context of its own: closing
 * one ends this single-process Chromium.) The browser logs a
 * "Failed to load resource" console error for any 4xx; those the console handles on
 * purpose (401 before the key is given, 404 of a route this server lacks) are left out,
 * and every 5xx is a problem whatever it says.
 */
export async function openPage(browser: Browser): Promise<ConsolePage> {
  const page = await browser.newPage();
  const problems: string[] = [];
  const requests: string[] = [];
  page.on("pageerror", (err) => problems.push(`pageerror: ${(err as Error).message}`));
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    if (/^Failed to load resource: the server responded with a status of 4\d\d/.test(m.text()))
      return;
    problems.push(`console.error: ${m.text()}`);
  });
  page.on("request", (r) => requests.push(r.url()));
  page.on("response", (r) => {
    if (r.status() >= 500) problems.push(`HTTP ${r.status()} ${r.url()}`);
  });
  return { page, problems, requests, close: () => page.close() };
}

export function expectNoProblems(p: ConsolePage): void {
  expect(p.problems).toEqual([]);
}

/** Waits for a DOM state (never a fixed sleep). */
export async function waitFor(page: Page, what: string, fn: string, timeout = 20_000) {
  try {
    await page.waitForFunction(fn, { timeout, polling: "raf" });
  } catch (err) {
    throw new Error(`waiting for ${what}: ${(err as Error).message}`);
  }
}

/** Clicks `selector` once it is shown (a control appears after the page re-renders). */
export async function clickWhenShown(page: Page, selector: string): Promise<void> {
  const element = await page.waitForSelector(selector, { visible: true });
  await element!.click();
}

/**
 * Selects a node of the DAG by its click handler (not by mouse position: the graph may be
 * re-fitted to its view between reading a position and clicking it).
 */
export async function clickNode(page: Page, stepId: string): Promise<void> {
  const node = await page.waitForSelector(`.dag .node[data-step-id="${stepId}"]`);
  await node!.evaluate((e) => e.dispatchEvent(new MouseEvent("click", { bubbles: true })));
}

/** Types `text` into the playground's plan box as one input event (as a paste). */
export async function setPlanText(page: Page, text: string): Promise<void> {
  await page.$eval(
    "textarea[name=plan]",
    (t, value) => {
      const area = t as HTMLTextAreaElement;
      area.value = value as string;
      area.dispatchEvent(new Event("input", { bubbles: true }));
    },
    text,
  );
}

/** `[data-step-id=<id>]` node's status attribute equals `status`. */
export const nodeIs = (id: string, status: string) =>
  `document.querySelector('.dag .node[data-step-id="${id}"]')?.dataset.status === "${status}"`;

export const runStatusIs = (status: string) =>
  `document.querySelector('.run-header [data-run-status]')?.dataset.runStatus === "${status}"`;

/**
 * Screenshots go to docs/ (for the README) with UPDATE_SCREENSHOTS=1, else to a temporary
 * folder, so an ordinary test run leaves the repository untouched.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = process.env.UPDATE_SCREENSHOTS
    ? resolve(import.meta.dirname, "../../docs")
    : join(tmpdir(), "edgestep-console-screenshots");
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await page.screenshot({ path, fullPage: true });
  return path;
}

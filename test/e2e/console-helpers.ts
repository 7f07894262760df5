/**
 * Shared by the console's browser tests: the Worker (with API_KEYS set, so every page goes
 * through the key prompt's storage), the loopback upstream, one browser, and a client that
 * submits plans with the key.
 */
import type { Browser } from "puppeteer-core";
import { afterAll, beforeAll, expect } from "vitest";
import deployPlan from "../../examples/deploy.json";
import { startUpstream, type Upstream } from "../upstream/server.ts";
import { launchBrowser, openPage, type ConsolePage } from "./browser.ts";
import { bootWorker, type BootedWorker } from "./worker.ts";

export const KEY = "console-test-key";

export interface ConsoleEnv {
  upstream: Upstream;
  worker: BootedWorker;
  browser: Browser;
}

export async function startConsoleEnv(): Promise<ConsoleEnv> {
  const upstream = await startUpstream();
  const [worker, browser] = await Promise.all([
    bootWorker(upstream.url, { API_KEYS: KEY, RUNS_PER_MINUTE: "0" }),
    launchBrowser(),
  ]);
  return { upstream, worker, browser };
}

export async function stopConsoleEnv(env: Partial<ConsoleEnv>): Promise<void> {
  await env.browser?.close();
  await env.worker?.stop();
  await env.upstream?.close();
}

/** A test file's console environment: started before its tests, stopped after them; read it through the getter. */
export function useConsoleEnv(): () => ConsoleEnv {
  let env: ConsoleEnv | undefined;
  beforeAll(async () => {
    env = await startConsoleEnv();
  });
  afterAll(async () => {
    await stopConsoleEnv(env ?? {});
  });
  return () => env!;
}

export function consoleClient(env: () => ConsoleEnv) {
  const headers = { "content-type": "application/json", authorization: `Bearer ${KEY}` };
  const url = (path: string) => `${env().worker.url}${path}`;

  async function submit(plan: unknown): Promise<string> {
    const res = await fetch(url("/v1/runs"), {
      method: "POST",
      headers,
      body: JSON.stringify(plan),
    });
    const body = (await res.json()) as { runId: string };
    expect(res.status, JSON.stringify(body)).toBe(202);
    return body.runId;
  }

  async function get(path: string): Promise<any> {
    const res = await fetch(url(path), { headers });
    expect(res.status, path).toBe(200);
    return res.json();
  }

  async function post(path: string, body: unknown): Promise<Response> {
    return fetch(url(path), { method: "POST", headers, body: JSON.stringify(body) });
  }

  /** A page that already holds the key in its sessionStorage (as after the prompt). */
  async function page(path: string): Promise<ConsolePage> {
    const p = await openPage(env().browser);
    await p.page.evaluateOnNewDocument((k: string) => {
      sessionStorage.setItem("edgestep.apiKey", k);
    }, KEY);
    await p.page.goto(url(path), { waitUntil: "domcontentloaded" });
    return p;
  }

  /** examples/deploy.json aimed at the test's upstream; `fail` makes one target answer 500. */
  function deploy(fail = false): unknown {
    const text = JSON.stringify(deployPlan).replaceAll("http://127.0.0.1:8788", env().upstream.url);
    return JSON.parse(fail ? text.replace('"ap-south"', '"ap-south-fail"') : text);
  }

  return { submit, get, post, page, deploy, url };
}

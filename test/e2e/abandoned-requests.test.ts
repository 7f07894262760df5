/**
 * Clients that go away mid-request (a closed event stream, an aborted long poll), over real
 * HTTP (Miniflare): their runs go on. workerd drops what a Durable Object started while a
 * cancelled call was its current request, so without src/api/kept-calls.ts most runs followed
 * this way stayed `running` for good, a step's answer never recorded.
 */
import { describe, expect, it } from "vitest";
import { e2eClient } from "./client.ts";
import { bootForFile } from "./worker.ts";

const e2e = bootForFile();
const { post, waitForEnd } = e2eClient(() => e2e.worker.url);

/** Four chains of five short calls, side by side. */
function chains(tag: string) {
  return {
    name: `abandoned-${tag}`,
    steps: Array.from({ length: 20 }, (_, i) => ({
      id: `s${i}`,
      tool: "http",
      params: { url: `${e2e.upstream.url}/delay/${20 + (i % 4) * 15}?tag=${tag}` },
      ...(i >= 4 && { dependsOn: [`s${i - 4}`] }),
    })),
  };
}

/** Follows the run's event stream, dropping the connection after every event or two, until it ends. */
async function followImpatiently(statusUrl: string): Promise<void> {
  // A run that never ends sends nothing more: the test's wait for its end then says so.
  const giveUp = AbortSignal.timeout(15_000);
  let last: string | null = null;
  for (let connection = 0; !giveUp.aborted; connection++) {
    const controller = new AbortController();
    const headers: Record<string, string> = { accept: "text/event-stream" };
    if (last !== null) headers["last-event-id"] = last;
    const signal = AbortSignal.any([controller.signal, giveUp]);
    const res = await fetch(`${statusUrl}/events`, { headers, signal }).catch(() => null);
    if (res === null) return;
    if (res.status === 204) return;
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let seen = 0;
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) break;
      text += decoder.decode(value, { stream: true });
      for (const id of text.matchAll(/^id: (\d+)$/gm)) last = id[1]!;
      seen = (text.match(/^id: /gm) ?? []).length;
      if (seen >= 1 + (connection % 2)) {
        controller.abort();
        break;
      }
    }
  }
}

describe("a client that leaves mid-request", () => {
  it("runs whose event streams are dropped and reopened every event or two all complete", async () => {
    const tag = String(Date.now());
    const started = await Promise.all(
      [0, 1, 2].map((n) => post("/v1/runs", chains(`${tag}-${n}`))),
    );
    const urls = started.map((res) => {
      expect(res.status).toBe(202);
      return res.headers.get("location")!;
    });
    await Promise.all(urls.map((url) => followImpatiently(url)));
    const ends = await Promise.all(urls.map((url) => waitForEnd(url, 20_000)));
    expect(ends.map((s) => s.status)).toEqual(["completed", "completed", "completed"]);
  }, 60_000);
});

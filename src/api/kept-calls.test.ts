import { env as workerEnv } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { settings, type Env } from "../env";
import { keptCalls } from "./kept-calls";

/** A namespace whose stubs answer `ping` later, and a `waitUntil` that records what it keeps. */
function fakes() {
  const kept: Promise<unknown>[] = [];
  const namespace = {
    label: "runs",
    idFromName(name: string) {
      return `${this.label}:${name}`;
    },
    get: (id: string) => ({ ping: async (n: number) => `${id} ${n}`, name: "stub" }),
  };
  const env = {
    RUNS: namespace,
    LIMITS: namespace,
    INDEX: namespace,
    DESTINATION_SLOTS: namespace,
    PAUSE_BOARD: namespace,
  } as unknown as Env;
  return { env: keptCalls(env, { waitUntil: (p) => void kept.push(p) }), kept };
}

describe("keptCalls", () => {
  it("keeps every call into an object to its end (waitUntil), answering as the stub does", async () => {
    const { env, kept } = fakes();
    const stub = env.RUNS.get(env.RUNS.idFromName("a")) as unknown as {
      ping(n: number): Promise<string>;
      name: string;
    };
    expect(await stub.ping(1)).toBe("runs:a 1");
    expect(await stub.ping(2)).toBe("runs:a 2");
    expect(kept).toHaveLength(2);
    expect(stub.name).toBe("stub");
  });

  it("shares the Worker's parsed settings: none are parsed again per request", () => {
    const perRequest = keptCalls(workerEnv as Env, { waitUntil: () => {} });
    expect(perRequest).not.toBe(workerEnv);
    expect(settings(perRequest)).toBe(settings(workerEnv as Env));
  });
});

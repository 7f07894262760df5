import { describe, expect, it } from "vitest";
import { limited, parseDestinations, redirectedInto, redirectRefusal } from "./destinations";
import { hostOf } from "./host-pattern";

const tools = new Set(["crm", "billing"]);
const http = (url: string) => ({ tool: "http", registry: false, url });
const registry = (tool: string, url: string | null) => ({ tool, registry: true, url });

describe("parseDestinations (DESTINATIONS, SPEC 10)", () => {
  it("takes a JSON object or a string holding one; unset or empty is no destination", () => {
    const value = { "api.example.com": { concurrency: 3 } };
    expect(parseDestinations(value, tools).listed).toEqual([
      ["api.example.com", { concurrency: 3 }],
    ]);
    expect(parseDestinations(JSON.stringify(value), tools).listed).toHaveLength(1);
    expect(parseDestinations(undefined, tools).empty).toBe(true);
    expect(parseDestinations(" ", tools).empty).toBe(true);
  });

  it("keys hosts in lower case without their port, as ALLOWED_HOSTS; tool names as they are", () => {
    const table = parseDestinations({ "API.Example.com:8443": {}, crm: { burst: 2 } }, tools);
    expect(table.listed.map(([key]) => key)).toEqual(["api.example.com", "crm"]);
  });

  it("keys IPv6 hosts as a call's URL names them", () => {
    const table = parseDestinations({ "::1": {}, "[::2]:80": { concurrency: 1 } }, tools);
    expect(table.listed.map(([key]) => key)).toEqual(["::1", "::2"]);
    const call = { tool: "http", registry: false, url: "http://[0::2]:8080/x" };
    expect(table.resolve(call)).toEqual({ key: "::2", limits: { concurrency: 1 } });
  });

  it("is a deployment error naming DESTINATIONS and the problem", () => {
    expect(() => parseDestinations("{not json", tools)).toThrow(/DESTINATIONS is not valid JSON/);
    expect(() => parseDestinations({ "a.test": { concurrency: 0 } }, tools)).toThrow(
      /DESTINATIONS is invalid[\s\S]*concurrency/,
    );
    expect(() => parseDestinations({ "a.test": { concurency: 2 } }, tools)).toThrow(/concurency/);
    expect(() => parseDestinations({ "a.test": { ratePerSecond: -1 } }, tools)).toThrow(
      /ratePerSecond/,
    );
    expect(() => parseDestinations({ not_a_tool: {} }, tools)).toThrow(
      /"not_a_tool" is neither a tool of TOOLS nor a host/,
    );
    expect(() => parseDestinations({ "a.test": {}, "A.test:80": {} }, tools)).toThrow(/twice/);
  });
});

describe("DestinationTable.resolve", () => {
  const table = parseDestinations(
    {
      "api.example.com": { concurrency: 2 },
      "*.example.com": { ratePerSecond: 5 },
      "*.eu.example.com": { concurrency: 1 },
      crm: { concurrency: 4 },
    },
    tools,
  );

  it("an exact host first, then the most specific wildcard, all hosts under it together", () => {
    expect(table.resolve(http("https://API.example.com:8443/x"))).toEqual({
      key: "api.example.com",
      limits: { concurrency: 2 },
    });
    expect(table.resolve(http("https://a.eu.example.com/x"))?.key).toBe("*.eu.example.com");
    expect(table.resolve(http("https://b.example.com/x"))?.key).toBe("*.example.com");
    expect(table.resolve(http("https://c.d.example.com/x"))?.key).toBe("*.example.com");
  });

  it("a wildcard does not cover its own domain; an unlisted host is its own destination, without limits", () => {
    expect(table.resolve(http("https://example.com/"))).toEqual({
      key: "example.com",
      limits: null,
    });
    expect(table.resolve(http("http://[::1]:8080/"))).toEqual({ key: "::1", limits: null });
  });

  it("a registry tool is limited by its name, else by its URL's host; a service tool is its name", () => {
    expect(table.resolve(registry("crm", "https://other.test/crm"))?.key).toBe("crm");
    expect(table.resolve(registry("billing", "https://api.example.com/b"))?.key).toBe(
      "api.example.com",
    );
    expect(table.resolve(registry("billing", null))).toEqual({ key: "billing", limits: null });
  });

  it("an http step named like a tool is still its host's; a URL that does not parse has no destination", () => {
    expect(table.resolve({ tool: "crm", registry: false, url: "https://x.test/" })?.key).toBe(
      "x.test",
    );
    expect(table.resolve(http("not a url"))).toBeNull();
    expect(hostOf(null)).toBeNull();
  });

  it("limitsOf answers a key's limits; limited says whether calls wait for slots", () => {
    expect(table.limitsOf("crm")).toEqual({ concurrency: 4 });
    expect(table.limitsOf("example.com")).toBeNull();
    expect(limited({ concurrency: 1 })).toBe(true);
    expect(limited({ ratePerSecond: 1 })).toBe(true);
    expect(limited({ burst: 3 })).toBe(false);
    expect(limited({})).toBe(false);
    expect(limited(null)).toBe(false);
  });
});

describe("redirectedInto: where a redirect led a call, when not where it started", () => {
  const table = parseDestinations(
    { "api.example.com": { concurrency: 2 }, crm: { concurrency: 4 }, "crm.example.net": {} },
    tools,
  );
  const crm = { tool: "crm", registry: true, url: "https://crm.example.net/v1" };

  it("is null within the call's own destination or its host's: a registry tool listed by name, http → https", () => {
    expect(redirectedInto(table, crm, "https://crm.example.net/v1/")).toBeNull();
    expect(
      redirectedInto(table, http("http://api.example.com/a"), "https://api.example.com/a"),
    ).toBeNull();
  });

  it("is the destination reached otherwise", () => {
    expect(redirectedInto(table, crm, "https://api.example.com/x")).toEqual({
      key: "api.example.com",
      limits: { concurrency: 2 },
    });
    expect(redirectedInto(table, http("https://free.test/"), "https://other.test/")).toEqual({
      key: "other.test",
      limits: null,
    });
  });
});

describe("redirectRefusal (a redirect passes the gate of where it leads)", () => {
  const NOW = 1_000_000;

  it("follows a redirect within the destination, or into one neither limited nor paused", () => {
    expect(redirectRefusal(null, null, NOW)).toBeNull();
    expect(redirectRefusal({ key: "b.test", limits: null }, null, NOW)).toBeNull();
  });

  it("refuses one into another destination with limits, and holds one into a paused destination as a 429", () => {
    expect(redirectRefusal({ key: "l.test", limits: { concurrency: 1 } }, null, NOW)).toMatchObject(
      {
        category: "egress_denied",
        message: expect.stringContaining("call l.test directly"),
      },
    );
    expect(redirectRefusal({ key: "b.test", limits: null }, NOW + 4_000, NOW)).toMatchObject({
      category: "rate_limited",
      retryAfterMs: 4_000,
    });
  });
});

import { describe, expect, it } from "vitest";
import { checkUrl, hostAllowed, parseAllowedHosts } from "./egress";

describe("parseAllowedHosts", () => {
  it.each([undefined, "", "  "])("%j allows every host", (value) => {
    expect(parseAllowedHosts(value)).toBeNull();
  });

  it("refuses an entry that is not a host, naming it (a deployment error)", () => {
    expect(() => parseAllowedHosts("api.example.com, https://crm.example.com/")).toThrow(
      /ALLOWED_HOSTS: "https:\/\/crm.example.com\/" is not a host/,
    );
    expect(() => parseAllowedHosts("*")).toThrow(/"\*" is not a host/);
  });

  it("trims, lowercases, drops ports and empty entries", () => {
    expect(parseAllowedHosts(" API.Example.com, b.example.org:8443 ,,*.Example.NET ")).toEqual([
      "api.example.com",
      "b.example.org",
      "*.example.net",
    ]);
  });
});

describe("hostAllowed", () => {
  const allowed = parseAllowedHosts("api.example.com,*.example.org,[::1]");

  it("null allows any host", () => {
    expect(hostAllowed("anything.test", null)).toBe(true);
  });

  it("matches an exact host, case-insensitively", () => {
    expect(hostAllowed("api.example.com", allowed)).toBe(true);
    expect(hostAllowed("API.EXAMPLE.COM", allowed)).toBe(true);
  });

  it("an exact entry does not cover subdomains or look-alikes", () => {
    expect(hostAllowed("x.api.example.com", allowed)).toBe(false);
    expect(hostAllowed("api.example.com.evil.net", allowed)).toBe(false);
    expect(hostAllowed("example.com", allowed)).toBe(false);
  });

  it("a wildcard covers subdomains at any depth", () => {
    expect(hostAllowed("a.example.org", allowed)).toBe(true);
    expect(hostAllowed("a.b.example.org", allowed)).toBe(true);
  });

  it("a wildcard does not cover the bare domain or a suffix look-alike", () => {
    expect(hostAllowed("example.org", allowed)).toBe(false);
    expect(hostAllowed("evilexample.org", allowed)).toBe(false);
    expect(hostAllowed(".example.org", allowed)).toBe(false);
  });

  it("matches IPv6 addresses however the entry and the URL spell them", () => {
    const v6 = parseAllowedHosts("::1,[::2]:80,fe80::1");
    for (const url of ["http://[::1]/", "http://[0:0::2]:8080/", "http://[FE80::1]/"])
      expect(checkUrl(url, v6)).toBeNull();
    expect(checkUrl("http://[::3]/", v6)).toMatchObject({ code: "egress_denied" });
  });

  it("an empty allowlist denies everything", () => {
    expect(hostAllowed("api.example.com", [])).toBe(false);
  });
});

describe("checkUrl", () => {
  const allowed = parseAllowedHosts("api.example.com,*.example.org");

  it.each([
    "https://api.example.com/x?q=1",
    "http://api.example.com",
    "https://api.example.com:8443/x",
    "https://deep.sub.example.org/",
  ])("accepts %s", (url) => {
    expect(checkUrl(url, allowed)).toBeNull();
  });

  it.each([
    "ftp://api.example.com/f",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "data:text/plain,hi",
    "ws://api.example.com",
  ])("rejects the scheme of %s as invalid_plan", (url) => {
    expect(checkUrl(url, null)?.code).toBe("invalid_plan");
  });

  it("rejects what is not a URL as invalid_plan", () => {
    const problem = checkUrl("api.example.com/x", null);
    expect(problem?.code).toBe("invalid_plan");
    expect(problem?.message).toContain("not a valid URL");
  });

  it("denies a host outside the allowlist as egress_denied, naming it", () => {
    const problem = checkUrl("https://evil.example.net/steal", allowed);
    expect(problem?.code).toBe("egress_denied");
    expect(problem?.message).toContain("evil.example.net");
  });

  it("judges the real host, not userinfo that looks like one", () => {
    expect(checkUrl("https://api.example.com@evil.example.net/", allowed)?.code).toBe(
      "egress_denied",
    );
  });

  it("refuses a URL carrying credentials, which fetch refuses and the run's status would show", () => {
    for (const url of ["https://user:pw@api.example.com/h", "https://token@api.example.com/"])
      expect(checkUrl(url, allowed)).toEqual({
        code: "invalid_plan",
        message: expect.stringContaining("must not carry credentials"),
      });
  });

  it("allows any http(s) host without an allowlist", () => {
    expect(checkUrl("https://evil.example.net/", null)).toBeNull();
  });

  it("truncates a long invalid URL in the message", () => {
    const problem = checkUrl(`not a url ${"x".repeat(500)}`, null);
    expect(problem!.message.length).toBeLessThan(200);
  });
});

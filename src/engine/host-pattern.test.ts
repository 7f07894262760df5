import { describe, expect, it } from "vitest";
import { hostOf, hostPattern } from "./host-pattern";

describe("hostPattern", () => {
  it.each([
    ["api.example.com", "api.example.com"],
    [" API.Example.com:8443 ", "api.example.com"],
    ["*.Example.NET", "*.example.net"],
    ["*.example.net:443", "*.example.net"],
    ["10.0.0.1", "10.0.0.1"],
    ["10.0.0.1:8080", "10.0.0.1"],
    ["::1", "::1"],
    ["[::1]", "::1"],
    ["[::2]:80", "::2"],
    ["fe80::1", "fe80::1"],
    ["0:0::1", "::1"],
    ["[2001:DB8::1]:443", "2001:db8::1"],
    ["bücher.example", "xn--bcher-kva.example"],
    ["my_host.internal", "my_host.internal"],
  ])("%j names %j", (entry, pattern) => {
    expect(hostPattern(entry)).toBe(pattern);
  });

  it.each([
    "https://api.example.com/",
    "api.example.com/path",
    "user@api.example.com",
    "*",
    "*.",
    "*.*.example.com",
    "127.0.0.1:abc",
    "api example.com",
    "",
  ])("%j is not a host", (entry) => {
    expect(hostPattern(entry)).toBeNull();
  });

  it("names a URL's host the same way, so that an entry and a URL compare as strings", () => {
    for (const [url, entry] of [
      ["http://[::1]:8080/x", "::1"],
      ["http://[0:0::1]/", "[::1]:80"],
      ["https://API.example.com:8443/", "api.example.com"],
      ["https://bücher.example/", "bücher.example"],
    ] as const)
      expect(hostOf(url)).toBe(hostPattern(entry));
  });
});

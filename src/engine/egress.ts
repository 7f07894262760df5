/** The egress allowlist (`ALLOWED_HOSTS`, SPEC 7) and the http(s)-only rule. Pure. */
import { bareHost, hostPattern } from "./host-pattern.ts";
import type { UrlProblem } from "./validate";

/** Parsed `ALLOWED_HOSTS`: null means every host is allowed. */
export type AllowedHosts = readonly string[] | null;

/** Parses `ALLOWED_HOSTS`; throws naming an entry that is not a host (a deployment error). */
export function parseAllowedHosts(value: string | undefined): AllowedHosts {
  if (value === undefined || value.trim() === "") return null;
  const entries = value.split(",").filter((e) => e.trim() !== "");
  return entries.map((entry) => {
    const pattern = hostPattern(entry);
    if (pattern === null)
      throw new Error(
        `ALLOWED_HOSTS: ${JSON.stringify(entry.trim())} is not a host (api.example.com, *.example.com, 10.0.0.1, ::1; a port is ignored)`,
      );
    return pattern;
  });
}

export function hostAllowed(host: string, allowed: AllowedHosts): boolean {
  if (allowed === null) return true;
  const h = bareHost(host);
  return allowed.some((pattern) =>
    pattern.startsWith("*.")
      ? h.endsWith(pattern.slice(1)) && h.length > pattern.length - 1
      : h === pattern,
  );
}

/** Why a URL with this scheme (`"ftp:"`, lowercase with its colon) may not be called, or null. */
export function schemeProblem(protocol: string): UrlProblem | null {
  if (protocol === "http:" || protocol === "https:") return null;
  return {
    code: "invalid_plan",
    message: `URL scheme "${protocol}" is not allowed: use http or https`,
  };
}

export function checkUrl(url: string, allowed: AllowedHosts): UrlProblem | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { code: "invalid_plan", message: `"${truncate(url)}" is not a valid URL` };
  }
  const scheme = schemeProblem(parsed.protocol);
  if (scheme) return scheme;
  if (!hostAllowed(parsed.hostname, allowed)) {
    return { code: "egress_denied", message: `host "${parsed.hostname}" is not in ALLOWED_HOSTS` };
  }
  if (parsed.username !== "" || parsed.password !== "") {
    // workerd drops the userinfo unsent, and the run's status and plan would show it.
    return {
      code: "invalid_plan",
      message: "a URL must not carry credentials (user:password@): send them in a header",
    };
  }
  return null;
}

function truncate(s: string): string {
  return s.length > 100 ? `${s.slice(0, 100)}...` : s;
}

/** The egress allowlist (`ALLOWED_HOSTS`, SPEC 7) and the http(s)-only rule. Pure. */
import type { UrlProblem } from "./validate";

/** Parsed `ALLOWED_HOSTS`: null means every host is allowed. */
export type AllowedHosts = readonly string[] | null;

export function parseAllowedHosts(value: string | undefined): AllowedHosts {
  if (value === undefined || value.trim() === "") return null;
  return value
    .split(",")
    .map((h) => h.trim().toLowerCase().replace(/:\d+$/, ""))
    .filter((h) => h !== "");
}

export function hostAllowed(host: string, allowed: AllowedHosts): boolean {
  if (allowed === null) return true;
  const h = host.toLowerCase().replace(/^\[|\]$/g, "");
  return allowed.some((pattern) =>
    pattern.startsWith("*.")
      ? h.endsWith(pattern.slice(1)) && h.length > pattern.length - 1
      : h === pattern,
  );
}

export function checkUrl(url: string, allowed: AllowedHosts): UrlProblem | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { code: "invalid_plan", message: `"${truncate(url)}" is not a valid URL` };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return {
      code: "invalid_plan",
      message: `URL scheme "${parsed.protocol}" is not allowed: use http or https`,
    };
  }
  if (!hostAllowed(parsed.hostname, allowed)) {
    return { code: "egress_denied", message: `host "${parsed.hostname}" is not in ALLOWED_HOSTS` };
  }
  return null;
}

function truncate(s: string): string {
  return s.length > 100 ? `${s.slice(0, 100)}...` : s;
}

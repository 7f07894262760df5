/**
 * Hosts as `ALLOWED_HOSTS` and `DESTINATIONS` name them, and as a call's URL gives them: lower
 * case, punycode, without port or IPv6 brackets, IPv6 in its canonical form, so that an
 * entry and a URL's host compare as strings. Pure.
 */

/** A host name (letters, digits, `-`, `_` between dots), an IPv4 address or an IPv6 one. */
const NAME = /^([a-z0-9_-]+\.)*[a-z0-9_-]+$/;

/** A URL's host in that form; null when `url` is not a URL. */
export function hostOf(url: string | null): string | null {
  if (url === null) return null;
  try {
    return bareHost(new URL(url).hostname);
  } catch {
    return null;
  }
}

/**
 * An entry (`api.example.com`, `API.example.com:8443`, `*.example.com`, `10.0.0.1`, `::1`,
 * `[::1]:8080`) in that form, `*.` kept; null when it is none of these. A port is ignored.
 */
export function hostPattern(entry: string): string | null {
  const e = entry.trim().toLowerCase();
  if (e.startsWith("*.")) {
    const domain = hostPattern(e.slice(2));
    return domain !== null && NAME.test(domain) ? `*.${domain}` : null;
  }
  // A bare IPv6 address has colons of its own: bracketed, it parses (and `::1:80` stays whole).
  const authority = !e.startsWith("[") && e.split(":").length > 2 ? `[${e}]` : e;
  let url: URL;
  try {
    url = new URL(`http://${authority}`);
  } catch {
    return null;
  }
  // Anything beyond host and port (a scheme, a path, userinfo) means the entry is not a host.
  if (url.href !== `${url.origin}/` || url.username !== "" || url.password !== "") return null;
  const host = bareHost(url.hostname);
  return url.hostname.startsWith("[") || NAME.test(host) ? host : null;
}

/** A URL's `hostname` in that form. */
export const bareHost = (hostname: string) => hostname.toLowerCase().replace(/^\[|\]$/g, "");

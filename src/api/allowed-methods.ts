/**
 * The methods the API answers on a path, for a `405` with `Allow` when a request names a route
 * with the wrong method (`PUT /v1/runs`), rather than a `404` that says the path is unknown.
 */
export interface RouteEntry {
  method: string;
  path: string;
}

/** A Hono route path as a RegExp: `:name` (or `:name{re}`) is one segment, `*` anything. */
function pattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      if (segment === "*") return ".*";
      const param = /^:\w+(?:\{(.+)\})?$/.exec(segment);
      if (param) return param[1] ?? "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  // No trailing slash: the router (strict) does not take one, so such a path is a 404.
  return new RegExp(`^${source}$`);
}

/** Builds the lookup once: the routes' handlers (middleware, registered for ALL, left out). */
export function allowedMethods(routes: readonly RouteEntry[]): (path: string) => string[] {
  const compiled = routes
    .filter((r) => r.method !== "ALL")
    .map((r) => ({ method: r.method, re: pattern(r.path) }));
  return (path) => {
    const methods = new Set(compiled.filter((r) => r.re.test(path)).map((r) => r.method));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods];
  };
}

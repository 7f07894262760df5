/** Client-side routes (the Worker answers every non-API path with index.html). */
import { useEffect, useState } from "preact/hooks";

export type Route =
  /** `search`: the list's filters, as the address held them when the list was reached. */
  | { page: "runs"; search: string }
  | { page: "run"; runId: string }
  | { page: "playground" }
  | { page: "not_found"; path: string };

export function parseRoute(path: string, search = ""): Route {
  if (path === "/" || path === "/runs") return { page: "runs", search };
  if (path === "/playground") return { page: "playground" };
  const m = /^\/runs\/([^/]+)$/.exec(path);
  if (m) return { page: "run", runId: decodeURIComponent(m[1]!) };
  return { page: "not_found", path };
}

export const runPath = (runId: string) => `/runs/${encodeURIComponent(runId)}`;

/**
 * `state`: what the new history entry holds for its page (e.g. a submission's warnings).
 * `replace`: the current page is no place to go Back to (a run just deleted).
 */
export function navigate(path: string, state: unknown = null, replace = false): void {
  if (path === location.pathname + location.search) return;
  if (replace) history.replaceState(state, "", path);
  else history.pushState(state, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** The current route; in-app links (`<a href="/...">`) navigate without a reload. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname, location.search));
  useEffect(() => {
    const onPop = () => setRoute(parseRoute(location.pathname, location.search));
    const onClick = (e: MouseEvent) => {
      const a = (e.target as Element | null)?.closest?.("a");
      if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey)
        return;
      const href = a.getAttribute("href");
      if (!href?.startsWith("/") || href.startsWith("/v1/") || a.target) return;
      e.preventDefault();
      navigate(href);
    };
    addEventListener("popstate", onPop);
    document.addEventListener("click", onClick);
    return () => {
      removeEventListener("popstate", onPop);
      document.removeEventListener("click", onClick);
    };
  }, []);
  return route;
}

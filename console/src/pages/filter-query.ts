/**
 * The runs list's filters in the page's address (`/?status=failed&name=x&tags=team:blue`), so
 * Back to the list, a reload or a shared link shows the same runs. The tag box's text is kept
 * as typed (quotes and all): it is what the box shows again. Pure: text in, text out.
 */
export interface Filters {
  status: string;
  name: string;
  tags: string;
}

const KEYS: readonly (keyof Filters)[] = ["status", "name", "tags"];

export function filtersOfQuery(search: string): Filters {
  const q = new URLSearchParams(search);
  return { status: q.get("status") ?? "", name: q.get("name") ?? "", tags: q.get("tags") ?? "" };
}

/** `?status=…` with the filters set (empty ones left out), or "" when none is. */
export function queryOfFilters(f: Filters): string {
  const q = new URLSearchParams();
  for (const k of KEYS) if (f[k]) q.set(k, f[k]);
  const text = q.toString();
  return text ? `?${text}` : "";
}

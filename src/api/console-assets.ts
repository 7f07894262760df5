/**
 * What is not the API's is the console's (wrangler.toml `[assets]`, `not_found_handling =
 * "none"`): a file of console/dist, or for a page path the console's index.html, which routes
 * in the browser (`/`, `/runs/<id>`, `/playground`). A path whose last segment has a file
 * extension names a file: when there is none it stays the assets' 404, where the assets' own
 * single-page-application fallback answered it with index.html and a 200 (a missing script
 * or image looked found, as HTML).
 */
export function namesFile(path: string): boolean {
  return /\.[^/.]+$/.test(path.slice(path.lastIndexOf("/") + 1));
}

/** A file as the assets have it (their 404 when missing); any other path the console's page, in one fetch. */
export function consoleAsset(assets: Fetcher, request: Request): Promise<Response> {
  if (namesFile(new URL(request.url).pathname)) return assets.fetch(request);
  return assets.fetch(new Request(new URL("/", request.url), request));
}

/**
 * The API key, when the Worker has API_KEYS set: asked for once, kept in sessionStorage
 * (gone when the tab closes), sent only in the Authorization header. Never in a URL, never
 * logged.
 */
const KEY = "edgestep.apiKey";

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function setApiKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function forgetApiKey(): void {
  sessionStorage.removeItem(KEY);
}

/** `refused`: a key was sent and the API did not take it (as opposed to no key at all). */
type Listener = (refused: boolean) => void;
const listeners = new Set<Listener>();

/** The API answered 401: whoever shows the key prompt hears it. */
export function onKeyNeeded(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * The API answered 401 to a request sent with `sentKey` (null: none). A key set since that
 * request left is not the one refused: it stays, and nobody is asked again.
 */
export function keyNeeded(sentKey: string | null): void {
  if (sentKey !== apiKey()) return;
  forgetApiKey();
  for (const l of listeners) l(sentKey !== null);
}

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

type Listener = () => void;
const listeners = new Set<Listener>();

/** The API answered 401: whoever shows the key prompt hears it. */
export function onKeyNeeded(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function keyNeeded(): void {
  forgetApiKey();
  for (const l of listeners) l();
}

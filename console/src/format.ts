/** Formatting for people: durations, times, JSON. */

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s % 60)} s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h ${m % 60} min` : `${Math.floor(h / 24)} d ${h % 24} h`;
}

export function time(iso: string | null | undefined): string {
  if (!iso) return "–";
  const d = new Date(iso);
  return d.toLocaleString(undefined, {
    month: "short",
    day: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  });
}

/** Time of day with milliseconds, for attempts a few ms apart. */
export function clock(iso: string | null | undefined): string {
  if (!iso) return "–";
  const d = new Date(iso);
  const hms = d.toLocaleTimeString(undefined, { hour12: false });
  return `${hms}.${String(d.getMilliseconds()).padStart(3, "0")}`;
}

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return "–";
  const ms = now - Date.parse(iso);
  return ms < 1000 ? "just now" : `${duration(ms)} ago`;
}

/** Pretty JSON, cut at `max` characters. */
export function prettyJson(value: unknown, max = 20_000): string {
  const text = JSON.stringify(value, null, 2) ?? "undefined";
  return text.length > max
    ? `${text.slice(0, max)}\n… (${text.length - max} more characters)`
    : text;
}

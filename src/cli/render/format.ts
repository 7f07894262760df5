/** Small text formats shared by the CLI's renderers. Pure. */
import cliTruncate from "cli-truncate";
import stringWidth from "string-width";

/** `850 ms`, `12.3 s`, `4 min 5 s`, `2 h 10 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((ms % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/** Local time of day, `14:03:07`. */
export function clock(at: Date | string | number): string {
  const d = new Date(at);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `14:03:07 (in 4.0 s)`, or `(due)` when it is past. */
export function when(at: string, now: number): string {
  const ms = Date.parse(at) - now;
  return `${clock(at)} (${ms > 0 ? `in ${duration(ms)}` : "due"})`;
}

/**
 * Cuts a line to `width` terminal cells (a terminal wraps longer ones, which breaks
 * redrawing): a wide character (CJK, most emoji) takes two, a colour code none, and a colour
 * cut off is closed.
 */
export function fit(line: string, width: number): string {
  // Measured as shown: a control character from a run's data is shown as `�`, one cell.
  return cliTruncate(terminalText(line), Math.max(0, width));
}

/**
 * `  ETA 3.0 s` while the run is running, else nothing: a waiting or paused run's remaining
 * time is not its steps' average (a person, a callback, a resume decides it).
 */
export function etaText(status: string, remainingMs: number): string {
  return remainingMs > 0 && status === "running" ? `  ETA ${duration(remainingMs)}` : "";
}

/**
 * At most `max` lines: a frame taller than the terminal cannot be redrawn in place (the cursor
 * cannot go back above the screen's top), so the lines past it become one `(+n more)` line.
 */
export function capLines(lines: string[], max: number): string[] {
  if (lines.length <= max) return lines;
  const kept = lines.slice(0, Math.max(0, max - 1));
  return [...kept, `… (+${lines.length - kept.length} more lines)`];
}

/** `a, b, c (+4 more)`. */
export function someOf(items: string[], max = 5): string {
  const shown = items.slice(0, max).join(", ");
  return items.length > max ? `${shown} (+${items.length - max} more)` : shown;
}

/** A table with columns aligned in terminal cells; the last column is not padded. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) =>
    Math.max(stringWidth(h), ...rows.map((r) => stringWidth(r[i] ?? ""))),
  );
  const padEnd = (cell: string, width: number) =>
    cell + " ".repeat(Math.max(0, width - stringWidth(cell)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : padEnd(c, widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

export interface StepErrorLike {
  category: string;
  message: string;
  status?: number;
}

/** How a step error reads: `server_error (HTTP 503): upstream answered 503`. */
export function stepError(error: StepErrorLike): string {
  const status = error.status === undefined ? "" : ` (HTTP ${error.status})`;
  return `${error.category}${status}: ${error.message}`;
}

/**
 * A colour (SGR) sequence, the only escape the CLI's own lines carry (`Output.paint`), else a
 * control character: C0 but tab and newline, DEL, C1 (U+009B is a CSI to some terminals).
 */
const SGR_OR_CONTROL = /(\x1b\[[0-9;]*m)|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/**
 * A line as a terminal may receive it: text from elsewhere (a plan's name, an upstream's error
 * message) could carry escapes that clear the screen, retitle the window or write the
 * clipboard, so every control character but colour sequences, tab and newline shows as `�`;
 * a line that sets a colour ends with a reset, so none bleeds into the next (a line cut short
 * by `fit` may have lost its own).
 */
export function terminalText(line: string): string {
  let coloured = false;
  const out = line.replace(SGR_OR_CONTROL, (_, sgr: string | undefined) => {
    if (sgr === undefined) return "\ufffd";
    coloured = true;
    return sgr;
  });
  return coloured && !out.endsWith("\x1b[0m") ? `${out}\x1b[0m` : out;
}

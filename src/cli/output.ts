/**
 * Where the CLI writes: plain lines, JSON for scripts (`--json`), and on a terminal a live
 * frame redrawn in place with lines logged above it. Colors only on a terminal, and never
 * with NO_COLOR (node:util's styleText decides). Every human line passes `terminalText`: no
 * escape from a run's data reaches the terminal (JSON escapes them itself).
 */
import { styleText } from "node:util";
import { capLines, terminalText } from "./render/format.ts";
import type { Paint } from "./render/progress.ts";

/** Cursor control (ECMA-48): up n lines to column 1, erase to the end of the screen. */
const up = (n: number) => (n > 0 ? `\x1b[${n}F` : "\r");
const ERASE_DOWN = "\x1b[J";
const HIDE_CURSOR = "\x1b[?25l";
const SHOW_CURSOR = "\x1b[?25h";

export class Output {
  readonly json: boolean;
  readonly isTTY: boolean;
  readonly paint: Paint;
  private readonly stdout: NodeJS.WriteStream;
  private readonly stderr: NodeJS.WriteStream;
  private frameLines = 0;

  // No parameter properties: Node runs this file by stripping types, which cannot rewrite them.
  constructor(json: boolean, stdout = process.stdout, stderr = process.stderr) {
    this.json = json;
    this.stdout = stdout;
    this.stderr = stderr;
    // A reader that stops early (`| head`) closes the pipe: that ends the CLI, quietly, as
    // other Unix tools do, rather than with an unhandled EPIPE.
    stdout.on("error", (err: NodeJS.ErrnoException) => {
      if (err.code !== "EPIPE") throw err;
      process.exit(0);
    });
    this.isTTY = stdout.isTTY === true && !json;
    this.paint = (style, text) => styleText(style, text, { stream: stdout });
  }

  get columns(): number {
    return this.stdout.columns || 100;
  }

  get rows(): number {
    return this.stdout.rows || 24;
  }

  line(text = ""): void {
    this.clearFrame();
    this.stdout.write(`${terminalText(text)}\n`);
  }

  lines(texts: string[]): void {
    for (const text of texts) this.line(text);
  }

  /** A JSON document for scripts, on its own line(s). */
  document(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** One JSON value per line (NDJSON), for streams. */
  record(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** A warning on stderr, where the frame was (the next frame is drawn below it, not over it). */
  warn(text: string): void {
    this.clearFrame();
    this.stderr.write(`${terminalText(text)}\n`);
  }

  /** Replaces the live frame (a terminal only) with `lines`, as many as fit on the screen. */
  frame(lines: string[]): void {
    if (!this.isTTY) return;
    const erase = this.frameLines > 0 ? up(this.frameLines) + ERASE_DOWN : HIDE_CURSOR;
    const shown = capLines(lines, Math.max(2, this.rows - 1));
    this.stdout.write(`${erase}${shown.map(terminalText).join("\n")}\n`);
    this.frameLines = shown.length;
  }

  /** Erases the live frame, so what follows is written where it was. */
  clearFrame(): void {
    if (this.frameLines === 0) return;
    this.stdout.write(up(this.frameLines) + ERASE_DOWN);
    this.frameLines = 0;
  }

  /** Leaves the terminal as it was found: the cursor shown again. */
  restore(): void {
    if (this.isTTY) this.stdout.write(SHOW_CURSOR);
  }
}

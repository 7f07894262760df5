import { describe, expect, it } from "vitest";
import { Output } from "./output.ts";

/** Two streams writing into one log, as a terminal shows both. */
function terminal(rows = 24) {
  const log: string[] = [];
  const stream = (name: string) => ({
    isTTY: true,
    columns: 80,
    rows,
    on: () => {},
    write: (text: string) => log.push(`${name}:${text}`),
  });
  const out = new Output(
    false,
    stream("out") as unknown as typeof process.stdout,
    stream("err") as unknown as typeof process.stderr,
  );
  return { log, out };
}

describe("Output on a terminal", () => {
  it("erases the live frame before a warning, so the next frame does not draw over it", () => {
    const { log, out } = terminal();
    out.frame(["[███░░] 1/2", "running (1): a"]);
    out.warn("event stream lost; polling instead");
    out.frame(["[█████] 2/2"]);
    expect(log.slice(1)).toEqual([
      "out:\x1b[2F\x1b[J",
      "err:event stream lost; polling instead\n",
      "out:\x1b[?25l[█████] 2/2\n",
    ]);
  });

  it("keeps a frame within the screen, so it can be redrawn in place", () => {
    const { log, out } = terminal(5);
    out.frame(Array.from({ length: 9 }, (_, i) => `line ${i}`));
    out.frame(["done"]);
    expect(log).toEqual([
      "out:\x1b[?25lline 0\nline 1\nline 2\n… (+6 more lines)\n",
      "out:\x1b[4F\x1b[Jdone\n",
    ]);
  });
});

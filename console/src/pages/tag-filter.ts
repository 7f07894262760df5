/**
 * The runs list's tag box: `key:value` filters separated by spaces or commas. A value with a
 * space or a comma is quoted (`env:"eu west"`, or the whole filter: `"env:eu west"`); inside
 * quotes `\"` is a quote and `\\` a backslash. Pure: the box's text in, the `tag` filters out.
 */
export function parseTagFilter(text: string): string[] {
  const filters: string[] = [];
  let current = "";
  let started = false; // `env:""` is a filter (an empty value), where two separators are not
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted && ch === "\\" && i + 1 < text.length) {
      current += text[++i];
    } else if (ch === '"') {
      quoted = !quoted;
      started = true;
    } else if (!quoted && (ch === "," || /\s/.test(ch))) {
      if (started) filters.push(current);
      current = "";
      started = false;
    } else {
      current += ch;
      started = true;
    }
  }
  if (started) filters.push(current);
  return filters;
}

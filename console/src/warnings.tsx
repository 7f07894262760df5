/**
 * A plan's warnings (unknown step fields the API ignored), by path: the playground shows
 * validation's, and the run page those of the submission that created it (handed over in
 * the history entry, so they survive a reload and Back, and need no storage of their own).
 */
import type { Issue } from "./types";

export function PlanWarnings(props: {
  warnings: readonly Issue[];
  title: string;
  onPick?: (path: string) => void;
}) {
  if (props.warnings.length === 0) return null;
  return (
    <div class="verdict warn" data-testid="warnings">
      <strong>{props.title}</strong>
      <ul class="issues">
        {props.warnings.map((w, k) => (
          <li key={k} data-path={w.path} onClick={() => props.onPick?.(w.path)}>
            <code class="path">{w.path}</code> {w.message}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** The warnings the history entry holds (set by `navigate(path, { warnings })`). */
export function warningsOfEntry(): Issue[] {
  const state = history.state as { warnings?: unknown } | null;
  return Array.isArray(state?.warnings) ? (state.warnings as Issue[]) : [];
}

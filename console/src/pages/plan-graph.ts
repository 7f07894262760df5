/**
 * The graph of a plan being written (the playground's preview): each step's id (its index
 * when it has none), its `dependsOn` (ids or indices; `depends_on` too) and the steps its
 * templates read (`${steps.<id>...}`, `${steps['<id>']...}`, `${step[N]...}`), which are
 * implicit dependencies (SPEC 3.3). The API's validation stays the judge; this only draws.
 */
import { stepNamedBy } from "../../../src/engine/graph";

interface RawStep {
  id?: unknown;
  dependsOn?: unknown;
  depends_on?: unknown;
  params?: unknown;
  when?: unknown;
  forEach?: unknown;
}

const TEMPLATE = /\$\{([^}]*)\}/g;

function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) value.forEach((v) => strings(v, out));
  else if (typeof value === "object" && value !== null)
    Object.values(value).forEach((v) => strings(v, out));
  return out;
}

/** The step a template expression reads: an id, or a plan index. */
function reference(expr: string): string | number | null {
  const e = expr.trim();
  const byId = /^steps(?:\.([A-Za-z0-9_-]+)|\[\s*(['"])([A-Za-z0-9_.-]+)\2\s*\])/.exec(e);
  if (byId) return byId[1] ?? byId[3]!;
  const byIndex = /^step(?:\[\s*(\d+)\s*\]|\.(\d+))/.exec(e);
  return byIndex ? Number(byIndex[1] ?? byIndex[2]) : null;
}

export interface PreviewStep {
  id: string;
  tool: string;
  dependsOn: string[];
  when?: string | boolean;
  forEach?: string | unknown[];
  compensate?: { tool: string; params: Record<string, unknown> };
}

export function previewSteps(doc: unknown): PreviewStep[] {
  const raw = (doc as { steps?: unknown })?.steps;
  if (!Array.isArray(raw)) return [];
  const steps = raw.map((s: RawStep & { tool?: unknown; compensate?: unknown }, i) => ({
    s,
    id: typeof s?.id === "string" ? s.id : String(i),
    tool: typeof s?.tool === "string" ? s.tool : "?",
  }));
  const indexOfId = new Map(steps.map((s, i) => [s.id, i]));
  // As the server reads them: an index, an id, or an index written as digits.
  const idAt = (ref: unknown): string | null => {
    if (typeof ref === "number") return steps[ref]?.id ?? null;
    if (typeof ref !== "string") return null;
    const i = stepNamedBy(ref, (id) => indexOfId.get(id), steps.length);
    return i === undefined ? ref : steps[i]!.id;
  };
  return steps.map(({ s, id, tool }) => {
    const explicit = [s?.dependsOn, s?.depends_on].flatMap((d) => (Array.isArray(d) ? d : []));
    const implicit = strings([s?.params, s?.when, s?.forEach]).flatMap((text) =>
      [...text.matchAll(TEMPLATE)].map((m) => reference(m[1]!)),
    );
    const dependsOn = [
      ...new Set(
        [...explicit, ...implicit].map(idAt).filter((d): d is string => d !== null && d !== id),
      ),
    ];
    return {
      id,
      tool,
      dependsOn,
      ...(typeof s?.when === "string" || typeof s?.when === "boolean" ? { when: s.when } : {}),
      ...((typeof s?.forEach === "string" || Array.isArray(s?.forEach)) && { forEach: s.forEach }),
      ...(typeof s?.compensate === "object" && s.compensate !== null
        ? { compensate: s.compensate as PreviewStep["compensate"] & object }
        : {}),
    };
  });
}

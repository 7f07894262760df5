/**
 * Lays a plan's graph out left to right with dagre (@dagrejs/dagre). Up to a few hundred
 * steps it uses dagre's best settings (network-simplex ranking, crossing minimisation);
 * past that, settings that keep a 1,000-step plan's layout within a couple of seconds
 * (tight-tree ranking, one ordering pass).
 */
import dagre from "@dagrejs/dagre";

export const NODE_WIDTH = 184;
export const NODE_HEIGHT = 46;
/** Past this many steps: the faster settings (they fit the in-page limit of use-layout.ts). */
const LARGE = 300;

export interface Point {
  x: number;
  y: number;
}

export interface Layout {
  /** Node centres, by step index. */
  nodes: Point[];
  edges: { from: number; to: number; points: Point[] }[];
  width: number;
  height: number;
  /** Time dagre took, in ms. */
  ms: number;
}

/** `deps[i]`: the indices step i waits for. */
export function layoutGraph(ids: readonly string[], deps: readonly (readonly number[])[]): Layout {
  const started = performance.now();
  const large = ids.length > LARGE;
  const g = new dagre.graphlib.Graph();
  g.setGraph({
    rankdir: "LR",
    nodesep: 14,
    ranksep: 56,
    marginx: 16,
    marginy: 16,
    ranker: large ? "tight-tree" : "network-simplex",
  });
  g.setDefaultEdgeLabel(() => ({}));
  ids.forEach((_, i) => g.setNode(String(i), { width: NODE_WIDTH, height: NODE_HEIGHT }));
  deps.forEach((ds, i) => ds.forEach((d) => g.setEdge(String(d), String(i))));
  dagre.layout(g, large ? { disableOptimalOrderHeuristic: true } : {});
  const nodes = ids.map((_, i) => {
    const n = g.node(String(i));
    return { x: n.x ?? 0, y: n.y ?? 0 };
  });
  const edges = g.edges().map((e) => ({
    from: Number(e.v),
    to: Number(e.w),
    points: (g.edge(e).points ?? []).map((p: Point) => ({ x: p.x, y: p.y })),
  }));
  const { width = 0, height = 0 } = g.graph();
  return { nodes, edges, width, height, ms: performance.now() - started };
}

/**
 * Lays a graph out: up to a few hundred steps on the page itself (a fraction of a second,
 * and no worker to start), larger plans in the layout worker (layout-worker.ts), so the
 * page keeps answering while dagre works. null until the layout is ready.
 */
import { useEffect, useState } from "preact/hooks";
import { layoutGraph, type Layout } from "./layout";
import type { GraphModel } from "./model";

/** Past this many steps the layout runs in the worker. */
const IN_PAGE_MAX = 300;

export interface LayoutRequest {
  id: number;
  ids: string[];
  deps: number[][];
}

let worker: Worker | null = null;
let nextId = 0;
const waiting = new Map<number, (layout: Layout) => void>();

function layoutWorker(): Worker {
  if (!worker) {
    worker = new Worker("/assets/layout-worker.js", { type: "module" });
    worker.addEventListener("message", (e: MessageEvent<{ id: number; layout: Layout }>) => {
      waiting.get(e.data.id)?.(e.data.layout);
      waiting.delete(e.data.id);
    });
  }
  return worker;
}

export function useLayout(model: GraphModel | null): Layout | null {
  // The layout remembers the model it is of: in the render where the model changes (a step
  // typed in the playground, a repair that adds steps), the old layout would have no node
  // for the new steps. A layout of another model is never returned.
  const [laid, setLaid] = useState<{ of: GraphModel; layout: Layout } | null>(null);
  useEffect(() => {
    if (!model || model.ids.length === 0) return;
    if (model.ids.length <= IN_PAGE_MAX) {
      // After the frame that shows the header: the page paints first.
      const t = setTimeout(
        () => setLaid({ of: model, layout: layoutGraph(model.ids, model.deps) }),
        0,
      );
      return () => clearTimeout(t);
    }
    const id = nextId++;
    waiting.set(id, (layout) => setLaid({ of: model, layout }));
    const request: LayoutRequest = { id, ids: model.ids, deps: model.deps };
    layoutWorker().postMessage(request);
    return () => waiting.delete(id);
  }, [model]);
  return laid !== null && laid.of === model ? laid.layout : null;
}

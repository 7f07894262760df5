/** Lays a graph out in the layout worker (layout-worker.ts); null until it answers. */
import { useEffect, useState } from "preact/hooks";
import type { Layout } from "./layout";
import type { GraphModel } from "./model";

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
  const [layout, setLayout] = useState<Layout | null>(null);
  // Started while the run's data loads, so it is ready when the plan arrives.
  useEffect(() => void layoutWorker(), []);
  useEffect(() => {
    setLayout(null);
    if (!model || model.ids.length === 0) return;
    const id = nextId++;
    waiting.set(id, setLayout);
    const request: LayoutRequest = { id, ids: model.ids, deps: model.deps };
    layoutWorker().postMessage(request);
    return () => waiting.delete(id);
  }, [model]);
  return layout;
}

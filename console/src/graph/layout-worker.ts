/**
 * The layout runs in a Web Worker: a 1,000-step plan takes dagre a second or two, and the
 * page (header, controls, waterfall) stays responsive meanwhile.
 */
import { layoutGraph } from "./layout";
import type { LayoutRequest } from "./use-layout";

addEventListener("message", (e: MessageEvent<LayoutRequest>) => {
  postMessage({ id: e.data.id, layout: layoutGraph(e.data.ids, e.data.deps) });
});

/**
 * The plan's DAG as SVG, laid out by dagre, with pan and zoom (@panzoom/panzoom). Nodes are
 * coloured by status (`data-status`), the critical path is marked, forEach nodes show item
 * progress, skipped nodes say why (a `when` that was false vs a dependency that failed or was
 * skipped), and a failed run's rollback draws its compensation path.
 */
import Panzoom, { type PanzoomObject } from "@panzoom/panzoom";
import type { RefObject } from "preact";
import { useEffect, useMemo, useRef } from "preact/hooks";
import type { PlanStep, RunStatus, StepStatus } from "../types";
import { DagNode, nodeSubtitle, type NodeProps } from "./dag-node";
import { NODE_HEIGHT, type Layout, type Point } from "./layout";
import type { GraphModel } from "./model";

export interface DagProps {
  model: GraphModel;
  layout: Layout;
  /** The run's step entries, by index (absent in the playground's preview). */
  steps?: readonly StepStatus[] | undefined;
  planSteps?: readonly Pick<PlanStep, "tool" | "forEach" | "when" | "compensate">[] | undefined;
  critical: readonly number[];
  rollback?: RunStatus["rollback"] | undefined;
  selected?: number | null;
  onSelect?: (index: number) => void;
  /** Level number under each node (the playground's preview). */
  levelOf?: readonly number[] | undefined;
}

const path = (points: readonly Point[]) =>
  points.length === 0
    ? ""
    : `M${points.map((p) => `${p.x.toFixed(1)},${p.y.toFixed(1)}`).join("L")}`;

/**
 * The rollback's path: from the step whose failure ended the run, through each compensated
 * step in the order the compensations ran (reverse order of completion). A step that both
 * failed and is compensated (a forEach that reached some targets) gets a loop.
 */
function compensationPath(
  model: GraphModel,
  layout: Layout,
  rollback: DagProps["rollback"],
  steps: DagProps["steps"],
) {
  if (!rollback || rollback.steps.length === 0) return [];
  const failed = (steps ?? [])
    .filter((s) => s.status === "failed" && s.endedAt)
    .sort((a, b) => Date.parse(a.endedAt!) - Date.parse(b.endedAt!))[0];
  const chain = [
    ...(failed ? [failed.index] : []),
    ...rollback.steps.flatMap((s) => model.index.get(s.stepId) ?? []),
  ].filter((i, k, all) => k === 0 || all[k - 1] !== i);
  const top = (i: number) => layout.nodes[i]!.y - NODE_HEIGHT / 2;
  if (chain.length === 1) {
    const { x } = layout.nodes[chain[0]!]!;
    const y = top(chain[0]!);
    return [
      { key: "loop", d: `M${x - 30},${y} C${x - 30},${y - 44} ${x + 30},${y - 44} ${x + 30},${y}` },
    ];
  }
  return chain.slice(1).map((to, k) => {
    const a = layout.nodes[chain[k]!]!;
    const b = layout.nodes[to]!;
    const lift = Math.max(40, Math.abs(b.x - a.x) / 3);
    const y = Math.min(top(chain[k]!), top(to)) - lift;
    return {
      key: `${chain[k]}-${to}`,
      d: `M${a.x},${top(chain[k]!)} C${a.x},${y} ${b.x},${y} ${b.x},${top(to)}`,
    };
  });
}

function Arrow({ id }: { id: string }) {
  return (
    <marker
      id={id}
      viewBox="0 0 8 8"
      refX="8"
      refY="4"
      markerWidth="8"
      markerHeight="8"
      markerUnits="userSpaceOnUse"
      orient="auto"
    >
      <path d="M0,0L8,4L0,8z" class={id} />
    </marker>
  );
}

/**
 * Pan and zoom over `stage` inside `viewport`; `fit` shows the whole layout, after Panzoom's own
 * first pan (a timer it sets when created) and whenever the view changes size (the side panel
 * opens or closes).
 */
function usePanzoom(
  viewport: RefObject<HTMLDivElement | null>,
  stage: RefObject<HTMLDivElement | null>,
  layout: Layout,
) {
  const panzoom = useRef<PanzoomObject | null>(null);
  useEffect(() => {
    const pz = Panzoom(stage.current!, {
      canvas: true,
      origin: "0 0",
      minScale: 0.02,
      maxScale: 4,
      cursor: "grab",
      handleStartEvent: (e: Event) => e.preventDefault(),
    });
    panzoom.current = pz;
    const wheel = (e: WheelEvent) => pz.zoomWithWheel(e);
    const view = viewport.current!;
    view.addEventListener("wheel", wheel, { passive: false });
    return () => {
      view.removeEventListener("wheel", wheel);
      pz.destroy();
    };
  }, []);

  const fit = () => {
    const pz = panzoom.current;
    const view = viewport.current;
    if (!pz || !view || layout.width === 0) return;
    const { clientWidth: vw, clientHeight: vh } = view;
    const scale = Math.max(0.02, Math.min(1, vw / layout.width, vh / layout.height));
    pz.zoom(scale, { animate: false, force: true });
    pz.pan((vw / scale - layout.width) / 2, Math.max(0, (vh / scale - layout.height) / 2), {
      animate: false,
      force: true,
    });
  };
  useEffect(() => {
    const t = setTimeout(fit, 0);
    const resized = new ResizeObserver(() => fit());
    resized.observe(viewport.current!);
    return () => {
      clearTimeout(t);
      resized.disconnect();
    };
  }, [layout]);
  return { panzoom, fit };
}

export function DagView(props: DagProps) {
  const { model, layout, critical, rollback, steps, onSelect } = props;
  const viewport = useRef<HTMLDivElement>(null);
  const stage = useRef<HTMLDivElement>(null);
  const { panzoom, fit } = usePanzoom(viewport, stage, layout);

  const criticalEdges = useMemo(() => {
    const set = new Set<string>();
    for (let k = 1; k < critical.length; k++) set.add(`${critical[k - 1]}>${critical[k]}`);
    return set;
  }, [critical]);
  const onPath = useMemo(() => new Set(critical), [critical]);
  const compensation = useMemo(
    () => compensationPath(model, layout, rollback, steps),
    [model, layout, rollback, steps],
  );
  const compensated = new Map((rollback?.steps ?? []).map((s) => [s.stepId, s.status]));
  // One callback for every node, so a node re-renders only when what it shows changed.
  const selectRef = useRef(onSelect);
  selectRef.current = onSelect;
  const select = useMemo(() => (i: number) => selectRef.current?.(i), []);

  return (
    <div
      class="dag"
      ref={viewport}
      style={{ height: `${Math.min(560, Math.max(260, layout.height + 48))}px` }}
    >
      <div class="dag-stage" ref={stage}>
        <svg
          width={layout.width}
          height={layout.height}
          viewBox={`0 0 ${layout.width} ${layout.height}`}
          role="img"
          aria-label={`graph of ${model.ids.length} steps`}
        >
          <Defs />
          <g class="edges">
            {layout.edges.map((e) => (
              <path
                key={`${e.from}>${e.to}`}
                class={criticalEdges.has(`${e.from}>${e.to}`) ? "edge critical" : "edge"}
                d={path(e.points)}
                marker-end="url(#arrow)"
              />
            ))}
          </g>
          <g class="compensation-edges">
            {compensation.map((c) => (
              <path key={c.key} class="edge compensation" d={c.d} marker-end="url(#arrow-comp)" />
            ))}
          </g>
          <g class="nodes">
            {model.ids.map((id, i) => (
              <DagNode
                key={id}
                {...nodeProps(props, i, onPath.has(i), compensated.get(id), select)}
              />
            ))}
          </g>
        </svg>
      </div>
      <div class="dag-tools">
        <button type="button" title="zoom in" onClick={() => panzoom.current?.zoomIn()}>
          +
        </button>
        <button type="button" title="zoom out" onClick={() => panzoom.current?.zoomOut()}>
          −
        </button>
        <button type="button" title="fit the graph" onClick={fit}>
          fit
        </button>
      </div>
    </div>
  );
}

/** The arrowheads and the hatching the edges and nodes refer to. */
function Defs() {
  return (
    <defs>
      <Arrow id="arrow" />
      <Arrow id="arrow-comp" />
      <pattern
        id="hatch"
        width="6"
        height="6"
        patternUnits="userSpaceOnUse"
        patternTransform="rotate(45)"
      >
        <line x1="0" y1="0" x2="0" y2="6" class="hatch-line" />
      </pattern>
    </defs>
  );
}

/** What node `i` shows: its run entry if any, else what the plan says of it. */
function nodeProps(
  { model, layout, steps, planSteps, selected, levelOf }: DagProps,
  i: number,
  critical: boolean,
  compensation: NodeProps["compensation"],
  onSelect: (i: number) => void,
): NodeProps {
  const step = steps?.[i];
  const plan = planSteps?.[i];
  const tool = plan?.tool ?? step?.tool ?? "";
  return {
    id: model.ids[i]!,
    index: i,
    at: layout.nodes[i]!,
    tool,
    status: step?.status ?? "planned",
    reason: step?.reason,
    subtitle: !step && plan?.forEach !== undefined ? `${tool} · forEach` : nodeSubtitle(step, tool),
    items: step?.items,
    critical,
    selected: selected === i,
    hasWhen: plan?.when !== undefined,
    hasCompensate: plan?.compensate !== undefined,
    compensation,
    level: levelOf?.[i],
    onSelect,
  };
}

/**
 * One step of the DAG. A class with shouldComponentUpdate: a status read re-renders a
 * 1,000-step graph, and only the nodes whose status, position or marks changed redraw.
 */
import { Component } from "preact";
import type { RunStatus, StepStatus } from "../types";
import { NODE_HEIGHT, NODE_WIDTH, type Point } from "./layout";

type Items = NonNullable<StepStatus["items"]>;
type CompensationStatus = NonNullable<RunStatus["rollback"]>["steps"][number]["status"];

export interface NodeProps {
  id: string;
  index: number;
  at: Point;
  tool: string;
  /** The step's status, or "planned" in the playground's preview. */
  status: string;
  reason: string | undefined;
  subtitle: string;
  items: Items | undefined;
  critical: boolean;
  selected: boolean;
  hasWhen: boolean;
  hasCompensate: boolean;
  compensation: CompensationStatus | undefined;
  level: number | undefined;
  onSelect: (index: number) => void;
}

const SKIP_LABEL: Record<string, string> = {
  condition_false: "skipped: when was false",
  dependency_failed: "skipped: dependency failed",
  dependency_skipped: "skipped: dependency skipped",
  skipped_by_user: "skipped by user",
};

export function nodeSubtitle(step: StepStatus | undefined, tool: string): string {
  if (!step) return tool;
  if (step.items) {
    const { total, succeeded, failed } = step.items;
    return `${tool} · ${step.status} · ${succeeded + failed}/${total} items`;
  }
  if (step.status === "skipped") return SKIP_LABEL[step.reason ?? ""] ?? "skipped";
  if (step.status === "waiting") return `${tool} · waiting for ${step.waitingFor ?? "?"}`;
  if (step.status === "retrying") return `${tool} · retrying (attempt ${step.attempts})`;
  return `${tool} · ${step.status}`;
}

function ItemBar({ items }: { items: Items }) {
  const w = NODE_WIDTH - 16;
  const part = (n: number) => (items.total === 0 ? 0 : (n / items.total) * w);
  return (
    <g class="items" transform={`translate(8, ${NODE_HEIGHT - 9})`}>
      <rect class="items-track" width={w} height={4} rx={2} />
      <rect class="items-ok" width={part(items.succeeded)} height={4} rx={2} />
      <rect class="items-failed" x={part(items.succeeded)} width={part(items.failed)} height={4} />
    </g>
  );
}

const itemsKey = (i: Items | undefined) => (i ? `${i.total}/${i.succeeded}/${i.failed}` : "");

export class DagNode extends Component<NodeProps> {
  override shouldComponentUpdate(next: NodeProps): boolean {
    const p = this.props;
    return (
      p.status !== next.status ||
      p.reason !== next.reason ||
      p.subtitle !== next.subtitle ||
      p.critical !== next.critical ||
      p.selected !== next.selected ||
      p.compensation !== next.compensation ||
      p.level !== next.level ||
      p.at.x !== next.at.x ||
      p.at.y !== next.at.y ||
      itemsKey(p.items) !== itemsKey(next.items) ||
      p.hasWhen !== next.hasWhen ||
      p.hasCompensate !== next.hasCompensate ||
      p.tool !== next.tool
    );
  }

  override render() {
    const p = this.props;
    const classes = [
      "node",
      `s-${p.status}`,
      p.reason ? `r-${p.reason}` : "",
      p.critical ? "critical" : "",
      p.selected ? "selected" : "",
    ];
    return (
      <g
        class={classes.join(" ")}
        transform={`translate(${p.at.x - NODE_WIDTH / 2},${p.at.y - NODE_HEIGHT / 2})`}
        data-step-id={p.id}
        data-status={p.status}
        {...(p.reason && { "data-reason": p.reason })}
        onClick={() => p.onSelect(p.index)}
      >
        <title>{`${p.id} (${p.tool}): ${p.status}`}</title>
        <rect class="box" width={NODE_WIDTH} height={NODE_HEIGHT} rx={7} />
        {p.critical && (
          <rect class="crit-mark" x={3} y={6} width={4} height={NODE_HEIGHT - 12} rx={2} />
        )}
        {p.status === "skipped" && p.reason !== "condition_false" && (
          <rect class="hatch" width={NODE_WIDTH} height={NODE_HEIGHT} rx={7} />
        )}
        <text class="label" x={12} y={18}>
          {p.id.length > 24 ? `${p.id.slice(0, 23)}…` : p.id}
        </text>
        <text class="sub" x={12} y={33}>
          {p.subtitle}
        </text>
        {p.hasWhen && (
          <text class="badge" x={NODE_WIDTH - (p.hasCompensate ? 24 : 8)} y={15} text-anchor="end">
            when
          </text>
        )}
        {p.hasCompensate && (
          <text
            class={`badge comp c-${p.compensation ?? "none"}`}
            x={NODE_WIDTH - 8}
            y={15}
            text-anchor="end"
          >
            <title>
              {p.compensation ? `compensation ${p.compensation}` : "has a compensation"}
            </title>
            ↺
          </text>
        )}
        {p.items && <ItemBar items={p.items} />}
        {p.level !== undefined && (
          <text class="level" x={NODE_WIDTH - 8} y={NODE_HEIGHT - 5} text-anchor="end">
            {`L${p.level}`}
          </text>
        )}
      </g>
    );
  }
}

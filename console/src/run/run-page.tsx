/** The run page: header and controls, the live DAG, the waterfall, and the selected step. */
import { useEffect, useMemo, useState } from "preact/hooks";
import { DagView } from "../graph/dag-view";
import { criticalPathOf, graphOf } from "../graph/model";
import { useLayout } from "../graph/use-layout";
import { Approvals, Controls } from "./controls";
import { RunHeader } from "./header";
import { SidePanel } from "./side-panel";
import { TimelineView } from "./timeline";
import { buildTimeline } from "./timeline-model";
import { useItemAttempts } from "./use-item-attempts";
import { isNotFound, settled, useRun } from "./use-run";
import { PlanWarnings, warningsOfEntry } from "../warnings";

/** Re-renders every second while the run is live (elapsed times, open bars). */
function useNow(active: boolean): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!active) return;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [active]);
  return active ? now : Date.now();
}

export function RunPage({ runId }: { runId: string }) {
  const { status, readAt, plan, events, connection, error, refresh } = useRun(runId);
  const [selected, setSelected] = useState<string | null>(null);
  const [warnings] = useState(warningsOfEntry);
  const model = useMemo(() => (plan ? graphOf(plan.plan.steps) : null), [plan]);
  const layout = useLayout(model);
  const live = status !== null && !settled(status);
  const now = useNow(live);
  const critical = useMemo(
    () => (model ? criticalPathOf(model, status?.steps ?? null, now) : []),
    // The path changes as steps end, not every second.
    [model, status?.progress.completedSteps, status?.endedAt],
  );
  const itemLogs = useItemAttempts(runId, status?.steps);
  const timeline = useMemo(() => buildTimeline(events, itemLogs), [events, itemLogs]);

  if (error && isNotFound(error)) return <RunNotFound runId={runId} connection={connection} />;
  if (!status) return <div class="page muted">{error ? error.message : "Loading run…"}</div>;

  const selectedIndex = selected === null ? null : (model?.index.get(selected) ?? null);
  const selectedStep = selectedIndex === null ? undefined : status.steps[selectedIndex];
  return (
    <div class="run-page">
      <RunHeader s={status} readAt={readAt} now={now} connection={connection} tags={status.tags} />
      <PlanWarnings warnings={warnings} title="Submitted with warnings:" />
      <Approvals s={status} onDone={refresh} />
      <Controls s={status} onDone={refresh} />
      {error && <p class="message">{error.message}</p>}
      <div class="run-body">
        <section class="graph-pane">
          {model && layout ? (
            <div
              class="dag-wrap"
              data-layout-ms={layout.ms.toFixed(0)}
              data-steps={model.ids.length}
            >
              <DagView
                model={model}
                layout={layout}
                steps={status.steps}
                planSteps={plan?.plan.steps}
                critical={critical}
                rollback={status.rollback}
                selected={selectedIndex}
                onSelect={(i) => setSelected(model.ids[i] ?? null)}
              />
              <Legend />
            </div>
          ) : (
            <p class="muted">
              {plan ? `Laying out ${plan.plan.steps.length} steps…` : "Loading the plan…"}
            </p>
          )}
        </section>
        {selectedStep && (
          <SidePanel
            runId={runId}
            step={selectedStep}
            plan={selectedIndex === null ? undefined : plan?.plan.steps[selectedIndex]}
            onClose={() => setSelected(null)}
          />
        )}
      </div>
      <section class="timeline-pane">
        <h2>Timeline</h2>
        <TimelineView
          timeline={timeline}
          now={now}
          live={live}
          selectedStepId={selected}
          onSelect={setSelected}
        />
      </section>
    </div>
  );
}

function RunNotFound({ runId, connection }: { runId: string; connection: string }) {
  return (
    <div class="page" data-testid="run-not-found" data-connection={connection}>
      <h1>Run not found</h1>
      <p>{`No run ${runId} for this API key.`}</p>
      <a href="/">Back to runs</a>
    </div>
  );
}

/** What the graph's colours and marks mean. */
function Legend() {
  return (
    <div class="legend">
      <span class="key s-pending" /> pending
      <span class="key s-succeeded" /> succeeded <span class="key s-running" /> running
      <span class="key s-waiting" /> waiting <span class="key s-retrying" /> retrying
      <span class="key s-failed" /> failed <span class="key s-skipped" /> skipped
      <span class="key s-cancelled" /> cancelled
      <span class="key critical" /> critical path
      <span class="key compensation" /> compensation
    </div>
  );
}

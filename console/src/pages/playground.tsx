/**
 * The plan playground: paste or load a plan, validate it (issues listed at their paths),
 * preview its DAG with levels and critical path, submit it and jump to the run.
 */
import { useEffect, useMemo, useState } from "preact/hooks";
import { ApiError, api } from "../api";
import { DagView } from "../graph/dag-view";
import { criticalPathOf, graphOf } from "../graph/model";
import { useLayout } from "../graph/use-layout";
import { navigate, runPath } from "../router";
import { PlanWarnings } from "../warnings";
import type { Issue, ValidateResult } from "../types";
import { EXAMPLES } from "./playground-examples";
import { previewSteps } from "./plan-graph";

// Kept in this tab, as the API key is: on a shared browser, the next person (with another key)
// does not find the last plan, and any token written into its headers.
const DRAFT = "edgestep.playground";
// Where earlier versions kept it, for every tab and key: gone.
localStorage.removeItem(DRAFT);
const first = Object.values(EXAMPLES)[0];

type Verdict =
  | { kind: "none" }
  | { kind: "valid"; result: ValidateResult }
  | { kind: "invalid"; code: string; message: string; issues: Issue[] };

function parse(text: string): { doc: unknown; error: string | null } {
  try {
    return { doc: JSON.parse(text), error: null };
  } catch (err) {
    return { doc: null, error: (err as Error).message };
  }
}

/** The draft (kept in this tab) and, 400 ms behind it, the text the preview shows. */
function useDraft() {
  const [text, setText] = useState(
    () => sessionStorage.getItem(DRAFT) ?? JSON.stringify(first, null, 2),
  );
  useEffect(() => sessionStorage.setItem(DRAFT, text), [text]);
  const [shown, setShown] = useState(text);
  useEffect(() => {
    const t = setTimeout(() => setShown(text), 400);
    return () => clearTimeout(t);
  }, [text]);
  return { text, setText, shown };
}

/** The preview's graph of `shown`: levels and critical path from validation once it passed. */
function usePreview(shown: string, valid: ValidateResult | null) {
  const parsed = useMemo(() => parse(shown), [shown]);
  const steps = useMemo(() => previewSteps(parsed.doc), [parsed]);
  const model = useMemo(() => graphOf(steps), [steps]);
  const layout = useLayout(model);
  const critical = useMemo(() => {
    if (valid) return valid.criticalPath.flatMap((id) => model.index.get(id) ?? []);
    return criticalPathOf(model, null, 0);
  }, [valid, model]);
  const levelOf = useMemo(() => {
    const levels = valid?.levels ?? model.levels.map((l) => l.map((i) => model.ids[i]!));
    const out: number[] = [];
    levels.forEach((ids, l) =>
      ids.forEach((id) => {
        const i = model.index.get(id);
        if (i !== undefined) out[i] = l;
      }),
    );
    return out;
  }, [valid, model]);
  return { parseError: parsed.error, steps, model, layout, critical, levelOf };
}

export function Playground() {
  const { text, setText, shown } = useDraft();
  const [verdict, setVerdict] = useState<Verdict>({ kind: "none" });
  const [busy, setBusy] = useState(false);
  const [focus, setFocus] = useState<number | null>(null);
  const valid = verdict.kind === "valid" ? verdict.result : null;
  const preview = usePreview(shown, valid);
  /** A new text: the verdict was on the one it replaces. */
  const replace = (next: string) => {
    setText(next);
    setVerdict({ kind: "none" });
  };

  const call = async (what: "validate" | "submit") => {
    setBusy(true);
    try {
      if (what === "validate") setVerdict({ kind: "valid", result: await api.validate(text) });
      else {
        const created = await api.submit(text);
        // The run page shows them: accepted, the plan's ignored fields are still worth a look.
        navigate(runPath(created.runId), { warnings: created.warnings ?? [] });
      }
    } catch (err) {
      const e = err as ApiError;
      setVerdict({
        kind: "invalid",
        code: e.code ?? "error",
        message: e.message,
        issues: e.issues ?? [],
      });
    } finally {
      setBusy(false);
    }
  };

  const pickIssue = (path: string) => {
    const m = /^steps\.(\d+)/.exec(path);
    setFocus(m ? Number(m[1]) : null);
  };

  return (
    <div class="page playground">
      <PlaygroundHead onLoad={replace} />
      <div class="pg-body">
        <div class="pg-editor">
          <textarea
            name="plan"
            spellcheck={false}
            value={text}
            onInput={(e) => replace((e.target as HTMLTextAreaElement).value)}
          />
          <div class="pg-actions">
            <button
              type="button"
              data-action="validate"
              disabled={busy}
              onClick={() => call("validate")}
            >
              Validate
            </button>
            <button
              type="button"
              class="primary"
              data-action="submit"
              disabled={busy}
              onClick={() => call("submit")}
            >
              Submit and open the run
            </button>
          </div>
          {preview.parseError && <p class="message">{`Not JSON yet: ${preview.parseError}`}</p>}
          <VerdictView verdict={verdict} onPick={pickIssue} />
        </div>
        <div class="pg-preview">
          {preview.layout ? (
            <DagView
              model={preview.model}
              layout={preview.layout}
              planSteps={preview.steps}
              critical={preview.critical}
              levelOf={preview.levelOf}
              selected={focus}
              onSelect={setFocus}
            />
          ) : (
            <p class="muted">The plan's graph shows here.</p>
          )}
        </div>
      </div>
    </div>
  );
}

/** The title, the examples and a file to open: each replaces the draft. */
function PlaygroundHead({ onLoad }: { onLoad: (text: string) => void }) {
  return (
    <div class="page-head">
      <h1>Playground</h1>
      <select
        name="example"
        onChange={(e) => {
          const v = EXAMPLES[(e.target as HTMLSelectElement).value];
          if (v) onLoad(JSON.stringify(v, null, 2));
        }}
      >
        <option value="">load an example…</option>
        {Object.keys(EXAMPLES).map((k) => (
          <option key={k} value={k}>
            {k}
          </option>
        ))}
      </select>
      <label class="file">
        open a file
        <input
          type="file"
          accept=".json,application/json"
          onChange={async (e) => {
            const input = e.target as HTMLInputElement;
            const f = input.files?.[0];
            if (f) onLoad(await f.text());
            // Else the same file chosen again (after edits to revert) fires no change.
            input.value = "";
          }}
        />
      </label>
    </div>
  );
}

/** Validation's answer: the levels, critical path and warnings, or the issues at their paths. */
function VerdictView({ verdict, onPick }: { verdict: Verdict; onPick: (path: string) => void }) {
  switch (verdict.kind) {
    case "none":
      return null;
    case "valid":
      return (
        <>
          <div class="verdict ok" data-testid="valid">
            <strong>Valid.</strong>
            <ol class="levels">
              {verdict.result.levels.map((ids, l) => (
                <li key={l}>{`level ${l}: ${ids.join(", ")}`}</li>
              ))}
            </ol>
            <p>{`Critical path: ${verdict.result.criticalPath.join(" → ")}`}</p>
          </div>
          <PlanWarnings
            warnings={verdict.result.warnings ?? []}
            title="Warnings (the plan runs without these fields):"
            onPick={onPick}
          />
        </>
      );
    case "invalid":
      return (
        <div class="verdict bad" data-testid="invalid">
          <strong>{verdict.code}</strong>
          {verdict.issues.length === 0 && <p>{verdict.message}</p>}
          <ul class="issues">
            {verdict.issues.map((i, k) => (
              <li key={k} data-path={i.path} onClick={() => onPick(i.path)}>
                <code class="path">{i.path}</code> {i.message}
              </li>
            ))}
          </ul>
        </div>
      );
  }
}

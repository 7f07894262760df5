/**
 * One tool attempt (a step, one forEach item, or a compensation), in two parts: `prepare`
 * resolves templates and finds the tool (what the call is, and so where it goes: its
 * destination is asked for a slot in between, SPEC 10); `callTool` issues a callback token when
 * needed and calls the tool with a timeout and an abort handle. The caller records the attempt
 * before `callTool`.
 */
import type { OutputLimits } from "../../src/engine/output";
import type { CompiledStep } from "../../src/engine/plan";
import { resolveTemplates, templateError, type TemplateContext } from "../../src/engine/templates";
import type { ToolSet } from "../../src/tools";
import type { Tool, ToolCall, ToolResult } from "../../src/tools/tool";
import { newCallbackToken } from "../../src/ids";
import type { RunContext } from "../run-context";
import type { CallbackTable } from "../storage/callback-table";
import type { CallWatch } from "./call-watch";

export interface Invoker {
  tools: ToolSet;
  callbacks: CallbackTable;
  runId: string;
  baseUrl: string | null;
  output: OutputLimits;
  /** Every call is watched until it settles: the alarm restarts the object should one be lost. */
  calls: CallWatch;
  /** Whether a call may follow a redirect to `url` (the quota gate's redirectRefusal). */
  redirects(tool: string, params: Record<string, unknown>, url: string): ToolResult | null;
}

/** What a run's calls need, from its context. */
export function invokerOf(ctx: RunContext, runId: string, baseUrl: string | null): Invoker {
  return {
    tools: ctx.tools,
    callbacks: ctx.checkpoint.callbacks,
    runId,
    baseUrl,
    output: ctx.output,
    calls: ctx.calls,
    redirects: (tool, params, url) => ctx.gate.redirectRefusal(tool, params, url, ctx.now()),
  };
}

/** A call ready to be made: its tool and resolved params. */
export interface Prepared {
  tool: Tool;
  params: Record<string, unknown>;
}

export type Preparation =
  | ({ type: "ready" } & Prepared)
  /** The attempt fails before anything is sent (a template, an unknown tool). */
  | { type: "failed"; result: ToolResult };

export interface Invocation {
  controller: AbortController;
  result: Promise<ToolResult>;
}

export function prepare(deps: Invoker, step: CompiledStep, context: TemplateContext): Preparation {
  let params: Record<string, unknown>;
  try {
    params = resolveTemplates(step.params, context) as Record<string, unknown>;
  } catch (err) {
    return { type: "failed", result: { ok: false, ...templateError(err) } };
  }
  const tool = deps.tools.get(step.tool);
  if (!tool) {
    return {
      type: "failed",
      result: {
        ok: false,
        category: "tool_not_found",
        message: `tool "${step.tool}" is not configured`,
      },
    };
  }
  return { type: "ready", tool, params };
}

export function callTool(
  deps: Invoker,
  step: CompiledStep,
  prepared: Prepared,
  attempt: number,
  now: number,
  itemIndex?: number,
): Invocation {
  const controller = new AbortController();
  const suffix = itemIndex === undefined ? "" : `:${itemIndex}`;
  const toolCall: ToolCall = {
    runId: deps.runId,
    stepId: step.id,
    ...(itemIndex !== undefined && { itemIndex }),
    attempt,
    idempotencyKey: `${deps.runId}:${step.id}${suffix}`,
    timeoutMs: step.timeoutMs,
    signal: controller.signal,
    maxOutputBytes: deps.output.maxOutputBytes,
    maxOutputDepth: deps.output.maxOutputDepth,
    now,
    redirect: (url) => deps.redirects(step.tool, prepared.params, url),
  };
  if (step.tool === "callback") {
    let token = deps.callbacks.carryOver(step.index, attempt);
    if (token === undefined) {
      token = newCallbackToken(deps.runId);
      deps.callbacks.open(token, step.index, attempt, now);
    }
    toolCall.callback = {
      token,
      url: `${deps.baseUrl ?? "http://localhost"}/v1/callbacks/${token}`,
    };
  }
  const result = prepared.tool
    .invoke(prepared.params, toolCall)
    .catch((err: unknown): ToolResult => ({
      ok: false,
      category: "network",
      message: String(err),
    }));
  const watched = { stepId: step.id, attempt, startedAt: now, timeoutMs: step.timeoutMs };
  deps.calls.track(itemIndex === undefined ? watched : { ...watched, itemIndex }, result);
  return { controller, result };
}

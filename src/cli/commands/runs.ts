/** `run`, `validate`, `get`, `results`, `step`: submitting plans and reading runs. */
import type { Command } from "commander";
import type { Issue, Plan } from "../../client/index.ts";
import { action, reportError, type Context } from "../context.ts";
import { readJsonArgument, readPlan } from "../io.ts";
import { renderRun, renderValidation } from "../render/documents.ts";
import { exitCodeOf } from "../render/progress.ts";
import { watchRun } from "../watch.ts";

function warn(ctx: Context, warnings: Issue[] | undefined): void {
  for (const w of warnings ?? []) ctx.out.warn(`warning: ${w.path}: ${w.message}`);
}

/**
 * Follows the run to its end; the exit code says how it ended. A watch that fails (the Worker
 * gone for good) names the run it was following: with `--json` nothing else would.
 */
async function watched(ctx: Context, runId: string): Promise<number> {
  try {
    const run = await watchRun(ctx.client, runId, ctx.out);
    if (ctx.out.json) ctx.out.document(await ctx.client.getRun(runId));
    return exitCodeOf(run.status);
  } catch (err) {
    return reportError(err, ctx.out, runId);
  }
}

export function runCommands(program: Command): void {
  program
    .command("run")
    .description("submit a plan (a JSON file, or - for standard input)")
    .argument("<plan>", "the plan file")
    .option(
      "-i, --input <file|json>",
      "the plan's input: JSON, or a JSON file (replaces the plan's)",
    )
    .option("-w, --watch", "follow the run to its end (exit code 1 unless it completes)")
    .option(
      "--idempotency-key <key>",
      "submit under this key (default: a random one, reused on retries)",
    )
    .action(
      action(
        async (
          ctx,
          path: string,
          opts: { input?: string; watch?: boolean; idempotencyKey?: string },
        ) => {
          const plan = await readPlan(path);
          if (opts.input !== undefined) plan.input = await readJsonArgument(opts.input, "--input");
          const created = await ctx.client.submitRun(plan as Plan, {
            ...(opts.idempotencyKey !== undefined && { idempotencyKey: opts.idempotencyKey }),
          });
          warn(ctx, created.warnings);
          if (opts.watch) {
            if (!ctx.out.json)
              ctx.out.line(
                `${created.runId} ${created.created ? "submitted" : "already submitted"}`,
              );
            return watched(ctx, created.runId);
          }
          if (ctx.out.json) return ctx.out.document(created);
          ctx.out.line(
            `${created.runId} ${created.status}${created.created ? "" : " (already submitted with this key)"}`,
          );
          ctx.out.line(`follow it: edgestep get ${created.runId} --watch`);
        },
      ),
    );

  program
    .command("validate")
    .description("validate a plan without running it (exit code 3 when it is invalid)")
    .argument("<plan>", "the plan file, or - for standard input")
    .action(
      action(async (ctx, path: string) => {
        const result = await ctx.client.validatePlan((await readPlan(path)) as Plan);
        warn(ctx, result.warnings);
        if (ctx.out.json) ctx.out.document(result);
        else ctx.out.lines(renderValidation(result));
      }),
    );

  program
    .command("get")
    .description("show a run: status, progress and steps")
    .argument("<runId>")
    .option("-w, --watch", "follow the run to its end (exit code 1 unless it completes)")
    .action(
      action(async (ctx, runId: string, opts: { watch?: boolean }) => {
        if (opts.watch) return watched(ctx, runId);
        const run = await ctx.client.getRun(runId);
        if (ctx.out.json) ctx.out.document(run);
        else ctx.out.lines(renderRun(run, Date.now()));
      }),
    );

  program
    .command("results")
    .description("the run's step results, in plan order (JSON)")
    .argument("<runId>")
    .action(
      action(async (ctx, runId: string) => ctx.out.document(await ctx.client.getResults(runId))),
    );

  program
    .command("step")
    .description("one step: status, result and attempt log (JSON)")
    .argument("<runId>")
    .argument("<stepId>")
    .action(
      action(async (ctx, runId: string, stepId: string) =>
        ctx.out.document(await ctx.client.getStep(runId, stepId)),
      ),
    );
}

/** `approve`, `deny`, `cancel`, `resume`, `retry`, `replan`, `callback`: changing a run. */
import { InvalidArgumentError, type Command } from "commander";
import type { ControlResult, ReplanRequest } from "../../client/index.ts";
import { action, UsageError, type Context } from "../context.ts";
import { readJsonArgument } from "../io.ts";

/** An option parser for integers from `min` to `max`. */
export function integer(min: number, max = Infinity): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(
        max === Infinity ? `expected an integer >= ${min}` : `expected an integer ${min}-${max}`,
      );
    return n;
  };
}

const commaList = (value: string) =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

function show(ctx: Context, result: ControlResult, what: string): void {
  if (ctx.out.json) ctx.out.document(result);
  else ctx.out.line(`${result.runId} ${what}: the run is ${result.status}`);
}

export function controlCommands(program: Command): void {
  answerCommands(program);
  lifecycleCommands(program);
  repairCommands(program);
}

/** `approve` and `deny`: the risk gate, or an approval step. */
function answerCommands(program: Command): void {
  program
    .command("approve")
    .description("approve the risk gate, or an approval step (--step)")
    .argument("<runId>")
    .option("-s, --step <stepId>", "the approval step to answer (default: the only one waiting)")
    .option("--skip <ids>", "risk gate: steps to skip, comma separated", commaList)
    .option("-c, --comment <text>")
    .action(
      action(
        async (ctx, runId: string, opts: { step?: string; skip?: string[]; comment?: string }) => {
          const result = await ctx.client.approveRun(runId, {
            approved: true,
            ...(opts.step !== undefined && { stepId: opts.step }),
            ...(opts.skip !== undefined && { skipSteps: opts.skip }),
            ...(opts.comment !== undefined && { comment: opts.comment }),
          });
          show(ctx, result, "approved");
        },
      ),
    );

  program
    .command("deny")
    .description("deny the risk gate (cancels the run), or an approval step (--step: it fails)")
    .argument("<runId>")
    .option("-s, --step <stepId>", "the approval step to answer (default: the only one waiting)")
    .option("-c, --comment <text>")
    .action(
      action(async (ctx, runId: string, opts: { step?: string; comment?: string }) => {
        const result = await ctx.client.denyRun(runId, {
          ...(opts.step !== undefined && { stepId: opts.step }),
          ...(opts.comment !== undefined && { comment: opts.comment }),
        });
        show(ctx, result, "denied");
      }),
    );
}

/** `cancel`, `resume` and `retry`. */
function lifecycleCommands(program: Command): void {
  program
    .command("cancel")
    .description("cancel a run")
    .argument("<runId>")
    .action(
      action(async (ctx, runId: string) =>
        show(ctx, await ctx.client.cancelRun(runId), "cancelled"),
      ),
    );

  program
    .command("resume")
    .description("continue a paused run")
    .argument("<runId>")
    .option("-n, --iterations <n>", "more iterations (default: the plan's bound)", integer(1))
    .action(
      action(async (ctx, runId: string, opts: { iterations?: number }) => {
        const body = opts.iterations === undefined ? {} : { iterations: opts.iterations };
        show(ctx, await ctx.client.resumeRun(runId, body), "resumed");
      }),
    );

  program
    .command("retry")
    .description("redrive a failed or partial run: its failed steps run again")
    .argument("<runId>")
    .action(
      action(async (ctx, runId: string) => show(ctx, await ctx.client.retryRun(runId), "redriven")),
    );
}

/** `replan` and `callback`: answers that carry data. */
function repairCommands(program: Command): void {
  program
    .command("replan")
    .description(
      "answer a step's pending repair (replan mode human) with --steps, or give up (--give-up)",
    )
    .argument("<runId>")
    .option(
      "--steps <file|json>",
      "the repair: a list of steps (the failed step's new definition, same id, and new steps), or { steps }",
    )
    .option("--give-up [reason]", "decline the repair: the step fails (replan_declined)")
    .option("-s, --step <stepId>", "the step whose repair this is (default: the only one waiting)")
    .action(
      action(async (ctx, runId: string, opts: ReplanOptions) => {
        const result = await ctx.client.replanRun(runId, await replanBody(opts));
        show(ctx, result, opts.giveUp === undefined ? "repaired" : "repair declined");
      }),
    );

  program
    .command("callback")
    .description("complete a callback step with --output, or fail it with --error")
    .argument("<token>")
    .option("-o, --output <file|json>", "the step's data: JSON, or a JSON file")
    .option("-e, --error <message>", "fail the step with this message")
    .action(
      action(async (ctx, token: string, opts: { output?: string; error?: string }) => {
        if ((opts.output === undefined) === (opts.error === undefined)) {
          throw new UsageError("give exactly one of --output and --error");
        }
        const body =
          opts.error !== undefined
            ? { error: { message: opts.error } }
            : { output: await readJsonArgument(opts.output!, "--output") };
        const result = await ctx.client.completeCallback(token, body);
        if (ctx.out.json) ctx.out.document(result);
        else ctx.out.line("callback applied");
      }),
    );
}

interface ReplanOptions {
  steps?: string;
  giveUp?: string | true;
  step?: string;
}

/** `replan`'s request: the repair read from --steps, or --give-up with its reason. */
async function replanBody(opts: ReplanOptions): Promise<ReplanRequest> {
  if ((opts.steps === undefined) === (opts.giveUp === undefined))
    throw new UsageError("give exactly one of --steps and --give-up");
  const stepId = opts.step === undefined ? {} : { stepId: opts.step };
  if (opts.giveUp !== undefined) {
    const reason = opts.giveUp === true ? {} : { reason: opts.giveUp };
    return { giveUp: true as const, ...reason, ...stepId };
  }
  const repair = await readJsonArgument(opts.steps!, "--steps");
  const steps = Array.isArray(repair) ? repair : (repair as { steps?: unknown }).steps;
  if (!Array.isArray(steps)) throw new UsageError("--steps: expected a list of steps or { steps }");
  return { steps: steps as Extract<ReplanRequest, { steps: unknown }>["steps"], ...stepId };
}

/** `ls`, `stats`, `delete`, `logs`: finding runs, cleaning up, reading the event log. */
import type { Command } from "commander";
import type { ListRunsOptions, RunListEntry, RunState } from "../../client/index.ts";
import { action, UsageError } from "../context.ts";
import { renderRunList, renderStats } from "../render/documents.ts";
import { logLine } from "../render/events.ts";
import { integer } from "./controls.ts";

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `--tag team:payments --tag env:prod` as `{ team: "payments", env: "prod" }`. */
function tags(values: string[] | undefined): Record<string, string> | undefined {
  if (values === undefined) return undefined;
  return Object.fromEntries(
    values.map((tag) => {
      const colon = tag.indexOf(":");
      if (colon < 1) throw new UsageError(`--tag ${tag}: expected key:value`);
      return [tag.slice(0, colon), tag.slice(colon + 1)];
    }),
  );
}

interface LsOptions {
  status?: string;
  tag?: string[];
  name?: string;
  limit?: number;
  cursor?: string;
  all?: boolean;
}

export function listingCommands(program: Command): void {
  program
    .command("ls")
    .description("list your runs, newest first")
    .option("--status <list>", "comma-separated statuses, e.g. failed,partial")
    .option("--tag <key:value>", "a tag the runs carry (repeat for several)", collect)
    .option("--name <name>", "the plan's name (exact)")
    .option("-n, --limit <n>", "runs per page (1-200, default 50)", integer(1, 200))
    .option("--cursor <cursor>", "the page after a previous listing's `next`")
    .option("-a, --all", "every matching run, page after page")
    .action(
      action(async (ctx, opts: LsOptions) => {
        const query: ListRunsOptions = {
          // The Worker checks the statuses (a 400 naming query.status).
          ...(opts.status !== undefined && { status: opts.status.split(",") as RunState[] }),
          ...(opts.tag !== undefined && { tag: tags(opts.tag) }),
          ...(opts.name !== undefined && { name: opts.name }),
          ...(opts.limit !== undefined && { limit: opts.limit }),
          ...(opts.cursor !== undefined && { cursor: opts.cursor }),
        };
        let page;
        if (opts.all) {
          const runs: RunListEntry[] = [];
          for await (const run of ctx.client.iterateRuns(query)) runs.push(run);
          page = { runs, next: null };
        } else page = await ctx.client.listRuns(query);
        if (ctx.out.json) return ctx.out.document(page);
        ctx.out.lines(renderRunList(page));
        if (page.next) ctx.out.line(`more: edgestep ls --cursor ${page.next} (or --all)`);
      }),
    );

  program
    .command("stats")
    .description("count your runs by status")
    .action(
      action(async (ctx) => {
        const stats = await ctx.client.getStats();
        if (ctx.out.json) ctx.out.document(stats);
        else ctx.out.lines(renderStats(stats));
      }),
    );

  program
    .command("delete")
    .description("delete a final run and everything it stored")
    .argument("<runId>")
    .action(
      action(async (ctx, runId: string) => {
        await ctx.client.deleteRun(runId);
        if (ctx.out.json) ctx.out.document({ runId, deleted: true });
        else ctx.out.line(`${runId} deleted`);
      }),
    );

  program
    .command("logs")
    .description("the run's event log (--follow: live, until the run ends)")
    .argument("<runId>")
    .option("-f, --follow", "stream events as they happen (SSE), until the run is final")
    .option("--after <seq>", "start after this event seq", integer(0))
    .action(
      action(async (ctx, runId: string, opts: { follow?: boolean; after?: number }) => {
        const print = (e: Parameters<typeof logLine>[0]) =>
          ctx.out.json ? ctx.out.record(e) : ctx.out.line(logLine(e));
        if (opts.follow) {
          for await (const event of ctx.client.events(runId, {
            ...(opts.after !== undefined && { after: opts.after }),
          })) {
            print(event);
          }
          return;
        }
        let after: number | null = opts.after ?? 0;
        while (after !== null) {
          const page = await ctx.client.listEvents(runId, { after, limit: 1000 });
          page.events.forEach(print);
          after = page.next;
        }
      }),
    );
}

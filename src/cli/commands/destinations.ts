/** `destinations`: flow control per destination (SPEC 10). */
import type { Command } from "commander";
import { action } from "../context.ts";
import { renderDestinations } from "../render/documents.ts";

export function destinationCommands(program: Command): void {
  program
    .command("destinations")
    .description("destinations' limits, calls in flight and waiting, and pauses")
    .action(
      action(async (ctx) => {
        const destinations = await ctx.client.listDestinations();
        if (ctx.out.json) ctx.out.document(destinations);
        else ctx.out.lines(renderDestinations(destinations, Date.now()));
      }),
    );
}

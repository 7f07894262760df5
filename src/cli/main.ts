/**
 * The `edgestep` CLI (bin/edgestep.js): commander over the typed client (src/client/).
 * Global options come before or after the command: `edgestep --json ls`, `edgestep ls --json`.
 */
import { Command, CommanderError, Option } from "commander";
import { readFileSync } from "node:fs";
import { DEFAULT_URL } from "../client/index.ts";
import { runCommands } from "./commands/runs.ts";
import { controlCommands } from "./commands/controls.ts";
import { listingCommands } from "./commands/listing.ts";
import { destinationCommands } from "./commands/destinations.ts";
import { EXIT } from "./context.ts";

function version(): string {
  const packageJson = readFileSync(new URL("../../package.json", import.meta.url), "utf8");
  return (JSON.parse(packageJson) as { version: string }).version;
}

export function program(): Command {
  const cli = new Command("edgestep")
    .description("Run and follow edgestep plans (a durable plan executor on Cloudflare Workers).")
    .addOption(
      new Option("--url <url>", "the Worker's URL").env("EDGESTEP_URL").default(DEFAULT_URL),
    )
    .addOption(
      new Option("--key <key>", "an API key (when the Worker sets API_KEYS)").env(
        "EDGESTEP_API_KEY",
      ),
    )
    .option("--json", "JSON output for scripts (errors as JSON on stderr)", false)
    .version(version())
    .showHelpAfterError()
    .exitOverride();
  runCommands(cli);
  controlCommands(cli);
  listingCommands(cli);
  destinationCommands(cli);
  cli.addHelpText(
    "after",
    `
Exit codes: 0 ok; 1 a watched run ended failed, partial or cancelled; 2 bad arguments or
files; 3 the API refused the request (invalid plan, unknown run, ...); 4 the Worker is unreachable.`,
  );
  return cli;
}

export async function main(argv: string[]): Promise<void> {
  try {
    await program().parseAsync(argv);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // --help and --version end here too, with their exit code 0.
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
}

/**
 * The `edgestep` CLI (bin/edgestep.js): commander over the typed client (src/client/).
 * Global options come before or after the command: `edgestep --json ls`, `edgestep ls --json`.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
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

/**
 * `--url`: an http(s) URL, or a usage error (exit 2) rather than a failure to reach it. An
 * empty one (`EDGESTEP_URL=`, as a shell clears a variable) is the default, as unset.
 */
function workerUrl(value: string): string {
  if (value === "") return DEFAULT_URL;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new InvalidArgumentError(`not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new InvalidArgumentError(`expected an http or https URL, got ${url.protocol}`);
  return value;
}

/** `json`: the command line asked for `--json`, so even its own parse errors are JSON. */
export function program({ json = false }: { json?: boolean } = {}): Command {
  const cli = new Command("edgestep")
    .description("Run and follow edgestep plans (a durable plan executor on Cloudflare Workers).")
    .addOption(
      new Option("--url <url>", "the Worker's URL")
        .env("EDGESTEP_URL")
        .default(DEFAULT_URL)
        .argParser(workerUrl),
    )
    .addOption(
      new Option("--key <key>", "an API key (when the Worker sets API_KEYS)").env(
        "EDGESTEP_API_KEY",
      ),
    )
    .option("--json", "JSON output for scripts (errors as JSON on stderr)", false)
    .version(version())
    .showHelpAfterError(!json)
    .exitOverride();
  if (json)
    cli.configureOutput({
      outputError: (text, write) =>
        write(`${JSON.stringify({ error: { code: "usage", message: usageMessage(text) } })}\n`),
    });
  runCommands(cli);
  controlCommands(cli);
  listingCommands(cli);
  destinationCommands(cli);
  cli.addHelpText(
    "after",
    `
Exit codes: 0 ok; 1 a watched run ended failed, partial or cancelled; 2 bad arguments or
files; 3 the API refused the request (invalid plan, unknown run, ...); 4 the Worker is unreachable;
130 / 143 a watch stopped by Ctrl-C / SIGTERM (the run goes on).`,
  );
  return cli;
}

/** Commander's "error: ..." line, without its prefix and trailing newline. */
function usageMessage(text: string): string {
  return text.replace(/^error: /, "").trim();
}

export async function main(argv: string[]): Promise<void> {
  try {
    await program({ json: argv.includes("--json") }).parseAsync(argv);
  } catch (err) {
    if (!(err instanceof CommanderError)) throw err;
    // --help and --version end here too, with their exit code 0.
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
}

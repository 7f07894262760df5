/**
 * What every command shares: the global options (`--url`, `--key`, `--json`), the client they
 * make, exit codes, and how errors are told (a line and the issues, or JSON on stderr).
 */
import type { Command } from "commander";
import { EdgestepApiError, EdgestepClient } from "../client/index.ts";
import { Output } from "./output.ts";

/** Exit codes (README, CLI). */
export const EXIT = {
  ok: 0,
  /** A watched run ended failed, partial or cancelled (or something unexpected broke). */
  failed: 1,
  /** Bad arguments, or a file that cannot be read or is not JSON. */
  usage: 2,
  /** The API refused the request (invalid plan, unknown run, conflict, unauthorized, ...). */
  refused: 3,
  /** The Worker could not be reached. */
  unreachable: 4,
} as const;

/** A mistake in the command line or its files: exit code 2. */
export class UsageError extends Error {}

export interface GlobalOptions {
  url: string;
  key?: string;
  json: boolean;
}

/** How long the CLI waits for an answer to begin (a long poll's wait comes on top). */
const ANSWER_TIMEOUT_MS = 30_000;

export interface Context {
  client: EdgestepClient;
  out: Output;
}

export function contextOf(command: Command): Context {
  const options = command.optsWithGlobals<GlobalOptions>();
  return {
    client: new EdgestepClient({
      url: options.url,
      ...(options.key !== undefined && options.key !== "" && { apiKey: options.key }),
      // A server that takes the connection but never answers: a retried failure, not minutes.
      answerTimeoutMs: ANSWER_TIMEOUT_MS,
    }),
    out: new Output(options.json),
  };
}

/**
 * Tells the error on stderr; answers the exit code it stands for. `runId`: the run a failed
 * watch was following, named so that a script (`--json`) can pick it up again.
 */
export function reportError(err: unknown, out: Output, runId?: string): number {
  const about = runId === undefined ? {} : { runId };
  if (err instanceof EdgestepApiError) {
    if (out.json) {
      const { code, status, message, issues } = err;
      const error = { code, status, message, ...(issues.length > 0 && { issues }) };
      out.warn(JSON.stringify({ error, ...about }));
    } else {
      // The message of a 400 repeats its first issue: the issues alone say it all.
      out.warn(err.issues.length > 0 ? `error: ${err.code}` : `error: ${err.code}: ${err.message}`);
      for (const issue of err.issues) out.warn(`  ${issue.path || "(root)"}: ${issue.message}`);
      if (err.status === 0)
        out.warn("  is the Worker running? (npm start, or --url / EDGESTEP_URL)");
    }
    // The run itself is unharmed when the way to it failed (no answer, 429, 5xx).
    if (runId !== undefined && !out.json && err.retryable)
      out.warn(`  the run goes on without you: edgestep get ${runId} --watch`);
    return err.status === 0 ? EXIT.unreachable : EXIT.refused;
  }
  const message = err instanceof Error ? err.message : String(err);
  out.warn(
    out.json
      ? JSON.stringify({ error: { code: "usage", message }, ...about })
      : `error: ${message}`,
  );
  return err instanceof UsageError ? EXIT.usage : EXIT.failed;
}

/** A command's action: runs `handler`, then sets the exit code it answered (or its error's). */
export function action<A extends unknown[]>(
  handler: (ctx: Context, ...args: A) => Promise<number | void>,
): (...args: [...A, Command]) => Promise<void> {
  return async (...args) => {
    const command = args.at(-1) as Command;
    const ctx = contextOf(command);
    try {
      process.exitCode = (await handler(ctx, ...(args.slice(0, -1) as A))) ?? EXIT.ok;
    } catch (err) {
      ctx.out.restore();
      process.exitCode = reportError(err, ctx.out);
    }
  };
}

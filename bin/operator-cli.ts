/**
 * What the operator's CLIs (`npm run keys`, `npm run users`) share: reading the command line and
 * turning a failure into its message and exit code.
 *
 * Exit codes: 0 success, 1 failure (unknown id, bad configuration, database trouble), 2 usage
 * (unknown command or option, missing or invalid argument). Messages go to stderr, so stdout
 * carries only results and `--json` output stays machine-readable.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { ConfigError } from "../core/config.js";
import { AtelierError } from "../core/errors.js";
import { DatabaseOpenError } from "../database/postgres-pool.js";

const EXIT_FAILURE = 1;
const EXIT_USAGE = 2;

/** A mistake in how the CLI was called; answered with the message, the usage text and exit code 2. */
export class UsageError extends Error {}

/** A command that ran but could not do what was asked; exit code 1. */
export class CommandError extends Error {}

type OptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/**
 * `<command> [args…] [--options]`, strictly: an unknown option or a missing option value is a
 * {@link UsageError} rather than silently ignored.
 */
export function parseCommandLine<const O extends OptionsConfig>(argv: string[], options: O) {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, strict: true, options });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const [command, ...args] = parsed.positionals;
  return { command, args, values: parsed.values };
}

export function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** Maps a failure to its message and exit code; stack traces are for bugs, not for operators. */
function report(name: string, usage: string, error: unknown): number {
  if (error instanceof UsageError) {
    process.stderr.write(`${name}: ${error.message}\n\n${usage}`);
    return EXIT_USAGE;
  }
  if (error instanceof AtelierError && error.code === "INVALID_INPUT") {
    process.stderr.write(`${name}: ${error.message}\n`);
    return EXIT_USAGE;
  }
  if (error instanceof CommandError || error instanceof ConfigError || error instanceof AtelierError || error instanceof DatabaseOpenError) {
    process.stderr.write(`${name}: ${error.message}\n`);
    return EXIT_FAILURE;
  }
  process.stderr.write(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return EXIT_FAILURE;
}

/** Runs the CLI `name` and sets the exit code from its outcome; `usage` is shown with usage errors. */
export async function runOperatorCli(name: string, usage: string, run: () => Promise<void>): Promise<void> {
  // exitCode rather than process.exit(), so piped stdout is flushed before the process ends.
  process.exitCode = await run().then(() => 0, (error: unknown) => report(name, usage, error));
}

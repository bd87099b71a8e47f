/** One CLI command: `labphi <name> …`. Commands live in ./commands/, one file each. */
export interface Command {
  name: string;
  /** One line for `labphi --help`. */
  summary: string;
  /** Full help for `labphi <name> --help`. */
  help: string;
  /** Returns the process exit code. */
  run(args: string[], io: CliIO): Promise<number>;
}

export interface CliIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
}

/** Thrown for bad usage: printed with the command's help hint, exit code 2. */
export class UsageError extends Error {}

/** Exit code of a refused start: a bad setting (sysexits EX_CONFIG, as the service uses). */
export const EX_CONFIG = 78;

/** The settings from `io.env`, or undefined after printing the one-line error (exit with EX_CONFIG). */
export async function settingsOf(io: CliIO): Promise<import("../config.js").Config | undefined> {
  const { ConfigError, loadConfig } = await import("../config.js");
  try {
    return loadConfig(io.env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    io.stderr.write(`labphi: ${err.message}\n`);
    return undefined;
  }
}

/**
 * Runs one command with the rest of the arguments: its help for -h/--help, a usage error as
 * "labphi NAME: …" plus the help hint (exit 2), any other error as one line (exit 1).
 */
export async function runCommand(name: string, command: Command, rest: string[], io: CliIO): Promise<number> {
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout.write(`${command.help}\n`);
    return 0;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`labphi ${name}: ${err.message}\nRun 'labphi ${name} --help' for usage.\n`);
      return 2;
    }
    io.stderr.write(`labphi ${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

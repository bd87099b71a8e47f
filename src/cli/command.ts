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

import { type CliIO, type Command, runCommand } from "./command.js";

/**
 * The codec commands, apart from the rest of the CLI: `labphi compress` of a small file must not
 * pay for the service's modules (Fastify, Kysely, the payment and storage clients) that
 * commands/index.ts pulls in with the other commands (issue #24 item 3; test/cli/start.test.ts
 * checks the module graph). Each is imported when it runs. bin/labphi.mjs runs this module as one
 * CommonJS script with V8's code cache (src/threads/bundle.mjs bundleScript), main.ts otherwise.
 */
export const CODEC_COMMANDS: Record<string, () => Promise<Command>> = {
  compress: async () => (await import("./commands/compress.js")).compressCommand,
  decompress: async () => (await import("./commands/decompress.js")).decompressCommand,
  profile: async () => (await import("./commands/profile.js")).profileCommand,
  bench: async () => (await import("./commands/bench.js")).benchCommand,
};

export const isCodecCommand = (name: string | undefined): boolean =>
  name !== undefined && Object.hasOwn(CODEC_COMMANDS, name);

/** `labphi <codec command> …`: the exit code; undefined when argv[0] is not a codec command */
export async function runCodecCli(argv: string[], io: CliIO): Promise<number | undefined> {
  const [name, ...rest] = argv;
  if (name === undefined || !isCodecCommand(name)) return undefined;
  return runCommand(name, await (CODEC_COMMANDS[name] as () => Promise<Command>)(), rest, io);
}

import { type CliIO, type Command, UsageError } from "./command.js";

/**
 * The codec commands load alone: `labphi compress` of a small file must not pay for the service's
 * modules (Fastify, Kysely, the payment and storage clients) that commands/index.ts pulls in with
 * the other commands (issue #24 item 3; test/cli/start.test.ts checks the module graph).
 */
const CODEC_COMMANDS: Record<string, () => Promise<Command>> = {
  compress: async () => (await import("./commands/compress.js")).compressCommand,
  decompress: async () => (await import("./commands/decompress.js")).decompressCommand,
  profile: async () => (await import("./commands/profile.js")).profileCommand,
  bench: async () => (await import("./commands/bench.js")).benchCommand,
};

async function allCommands(): Promise<Command[]> {
  return (await import("./commands/index.js")).COMMANDS;
}

async function overview(): Promise<string> {
  const COMMANDS = await allCommands();
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `labphi: the Lab Phi command line

Usage: labphi <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}

Run 'labphi <command> --help' for a command's options.
`;
}

export async function runCli(argv: string[], io: CliIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout.write(await overview());
    return name === undefined ? 2 : 0;
  }
  const codec = Object.hasOwn(CODEC_COMMANDS, name) ? CODEC_COMMANDS[name] : undefined;
  const command = codec ? await codec() : (await allCommands()).find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`labphi: unknown command '${name}'\n\n${await overview()}`);
    return 2;
  }
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

const isMain = process.argv[1]?.replace(/\\/g, "/").endsWith("cli/main.ts");
if (isMain) {
  runCli(process.argv.slice(2), {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  }).then((code) => {
    process.exitCode = code;
  });
}

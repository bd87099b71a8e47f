import { runCodecCli } from "./codec.js";
import { type CliIO, type Command, runCommand } from "./command.js";

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
  // the codec commands load alone (codec.ts): not the service's modules the others import
  const codec = await runCodecCli(argv, io);
  if (codec !== undefined) return codec;
  const command = (await allCommands()).find((c: Command) => c.name === name);
  if (!command) {
    io.stderr.write(`labphi: unknown command '${name}'\n\n${await overview()}`);
    return 2;
  }
  return runCommand(name, command, rest, io);
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

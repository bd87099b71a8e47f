import { type CliIO, UsageError } from "./command.js";
import { COMMANDS } from "./commands/index.js";

function overview(): string {
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
    io.stdout.write(overview());
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.stderr.write(`labphi: unknown command '${name}'\n\n${overview()}`);
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

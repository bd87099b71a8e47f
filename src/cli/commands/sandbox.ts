import { type Command, EX_CONFIG, UsageError } from "../command.js";

export const sandboxCommand: Command = {
  name: "sandbox",
  summary: "Run the service on local ledgers with a funded buyer (development only)",
  help: `Usage: labphi sandbox [--port N]

Starts, on this machine only and from the project's npm dependencies (nothing is downloaded):
  - anvil (Base, chain id 8453) with an EIP-3009 USDC at the real Base USDC address,
  - LiteSVM (Solana) behind a loopback JSON-RPC, with USDC at the real mint address,
  - the service on SQLite in a fresh temporary DATA_DIR, both x402 rails settling against them,
  - a buyer wallet funded with USDC and gas on both chains,
then prints the service URL, the buyer's sandbox-only keys and the commands that buy a SKU with
'labphi agent' and with the stock @x402/fetch client. Ctrl-C (SIGINT) or SIGTERM, to this process or to
the npm of \`npm run sandbox\`, stops everything (anvil included) and removes the data.

Options:
  --port N   loopback port of the service (default 3402; 0 picks a free one)

Refused when NODE_ENV=production (exit code 78). Walk-through: docs/sandbox.md.`,
  async run(args, io) {
    if (io.env.NODE_ENV === "production") {
      io.stderr.write("labphi sandbox: refused: NODE_ENV=production (the sandbox is for development only)\n");
      return EX_CONFIG;
    }
    const port = parsePort(args);
    // The ledgers (anvil, LiteSVM, solc) are development dependencies: a plain `npm install` has them.
    let modules: [typeof import("../../sandbox/start.js"), typeof import("../../sandbox/banner.js")];
    try {
      modules = await Promise.all([import("../../sandbox/start.js"), import("../../sandbox/banner.js")]);
    } catch (err) {
      if ((err as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw err;
      io.stderr.write(
        `labphi sandbox: a local ledger package is missing (${(err as Error).message.split("\n")[0]}); run a plain \`npm install\` (with development dependencies)\n`,
      );
      return EX_CONFIG;
    }
    const [{ startSandbox }, { sandboxBanner }] = modules;
    const sandbox = await startSandbox({ port, log: (line) => io.stderr.write(`${line}\n`) });
    io.stdout.write(sandboxBanner(sandbox));
    return new Promise<number>((resolve) => {
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals) => {
        // Ctrl-C in a terminal reaches this process twice (from the terminal, and forwarded by npm): one stop
        if (stopping) return;
        stopping = true;
        io.stderr.write(`\n${signal}: stopping the service and the ledgers …\n`);
        // a stop that hangs (a ledger not answering) must not keep the sandbox up
        setTimeout(() => {
          io.stderr.write("sandbox: stopping took over 10 s; exiting (anvil is killed as this process exits)\n");
          process.exit(1);
        }, 10_000).unref();
        sandbox.stop().then(
          () => {
            process.off("SIGINT", onSignal);
            process.off("SIGTERM", onSignal);
            io.stderr.write("sandbox stopped\n");
            // Idle keep-alive sockets of the stopped service may hold the event loop for seconds.
            setTimeout(() => process.exit(0), 500).unref();
            resolve(0);
          },
          () => resolve(1),
        );
      };
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
    });
  },
};

function parsePort(args: string[]): number {
  let port = 3402;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--port" || arg?.startsWith("--port=")) {
      const value = arg === "--port" ? args[++i] : arg.slice("--port=".length);
      if (value === undefined || !/^\d{1,5}$/.test(value) || Number(value) > 65535) {
        throw new UsageError("--port needs a number from 0 to 65535");
      }
      port = Number(value);
    } else {
      throw new UsageError(`unknown argument '${arg}'`);
    }
  }
  return port;
}

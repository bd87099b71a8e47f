import type { Readable, Writable } from "node:stream";
import { type CliIO, type Command, EX_CONFIG, settingsOf, UsageError } from "../command.js";

const HELP = `Usage: labphi mcp [options]

Serves the Lab Phi MCP server over stdio (JSON-RPC on stdin/stdout; diagnostics on stderr) for an
MCP host such as Claude Desktop. It is built from the same services as the web service, on the
same settings (DATABASE_URL or DATA_DIR, BASE_URL, the x402 rail settings): no HTTP round trip.
Tools: catalog, payments, quote_suite, buy and buy_suite (paid over the x402 MCP transport),
compress, decompress, profile, bench, olympiad_register, olympiad_vote, job_status, job_upload,
job_cancel, job_download. Resources: the catalog,
the olympiad record and the standings. The same server is served over HTTP at /mcp.

Exits when stdin closes, or on SIGTERM / SIGINT.

Options:
  -h, --help   this help

Client configuration: docs/mcp.md.`;

export const mcpCommand: Command = {
  name: "mcp",
  summary: "Serve the MCP server (tools, resources, paid tools over x402) on stdio",
  help: HELP,
  async run(args: string[], io: CliIO): Promise<number> {
    if (args.length > 0) throw new UsageError(`unexpected argument ${args[0]}`);
    // Heavy modules load here, not at import time (`labphi worker` loads the command index).
    const [{ openDatabase }, { migrateToLatest }, { buildServices }, pinoMod, stdio, mcp] = await Promise.all([
      import("../../db/database.js"),
      import("../../db/migrate.js"),
      import("../../services.js"),
      import("pino"),
      import("@modelcontextprotocol/server/stdio"),
      import("../../mcp/server.js"),
    ]);
    const config = await settingsOf(io);
    if (!config) return EX_CONFIG;
    // stdout carries the protocol only: every log line goes to stderr.
    const pino = pinoMod.default;
    const log = pino({ level: io.env.LOG_LEVEL ?? "warn" }, pino.destination({ fd: 2, sync: true }));
    const db = openDatabase(config);
    await migrateToLatest(db);
    const services = await buildServices({ config, db, log: log as never, worker: { start: false } });
    // Proofs left pending (a crash, a timeout) are finished here too, as in the web service.
    await services.x402.start(config.env === "test" ? 0 : 30_000);
    const factory = mcp.mcpFactory({
      ...services,
      onError: (err) =>
        log.error({ err: err instanceof Error ? err.message : String(err) }, "mcp: unexpected tool failure"),
    });
    const transport = new stdio.StdioServerTransport(io.stdin as Readable, io.stdout as Writable);
    return new Promise<number>((resolve) => {
      let done = false;
      const finish = async (code: number) => {
        if (done) return;
        done = true;
        await handle.close().catch(() => undefined);
        await services.close().catch(() => undefined);
        await db.close().catch(() => undefined);
        resolve(code);
      };
      const handle = stdio.serveStdio(factory, {
        transport,
        onerror: (err) => log.warn({ err: err.message }, "mcp: transport error"),
      });
      // The transport closes itself when stdin ends (the host went away): so does this process.
      io.stdin.on("end", () => void finish(0));
      io.stdin.on("close", () => void finish(0));
      process.once("SIGTERM", () => void finish(0));
      process.once("SIGINT", () => void finish(130));
    });
  },
};

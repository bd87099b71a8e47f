import type { Command } from "../command.js";
import { adminCommand } from "./admin.js";
import { agentCommand } from "./agent.js";
import { backupCommand } from "./backup.js";
import { benchCommand } from "./bench.js";
import { compressCommand } from "./compress.js";
import { decompressCommand } from "./decompress.js";
import { doctorCommand } from "./doctor.js";
import { mcpCommand } from "./mcp.js";
import { profileCommand } from "./profile.js";
import { restoreCommand } from "./restore.js";
import { sandboxCommand } from "./sandbox.js";
import { serveCommand } from "./serve.js";
import { verifyReceiptCommand } from "./verify-receipt.js";
import { verifyStandingsCommand } from "./verify-standings.js";
import { workerCommand } from "./worker.js";

/** Every CLI command. Add a file in this folder, then a line here. */
export const COMMANDS: Command[] = [
  serveCommand,
  adminCommand,
  compressCommand,
  decompressCommand,
  profileCommand,
  benchCommand,
  workerCommand,
  verifyStandingsCommand,
  verifyReceiptCommand,
  mcpCommand,
  agentCommand,
  sandboxCommand,
  backupCommand,
  restoreCommand,
  doctorCommand,
];

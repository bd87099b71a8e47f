import type { Command } from "../command.js";

export const serveCommand: Command = {
  name: "serve",
  summary: "Run the HTTP service (same as npm start)",
  help: `Usage: labphi serve

Runs the HTTP service. Settings come from the environment (see .env.example):
PORT, HOST, BASE_URL, DATA_DIR, DATABASE_URL, ADMIN_TOKEN, …`,
  async run() {
    await import("../../server.js");
    return new Promise<number>(() => {
      // runs until a signal stops the process
    });
  },
};

/**
 * Prints what `labphi doctor` says about the sandbox's parts, for docs/operations.md: anvil and
 * LiteSVM (the sandbox's ledgers, LiteSVM behind the genesis front of world.ts), the Stripe
 * stand-in, s3rver, a migrated SQLite database and the service itself, all on loopback; the
 * command runs as the operator runs it, `node bin/labphi.mjs doctor`, in its own process.
 *
 *   npx tsx test/ops/doctor/example.ts [--json]
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startWorld } from "./world.js";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const world = await startWorld("sqlite");
try {
  const env = { ...world.env(), PATH: process.env.PATH ?? "" };
  for (const [label, args] of [
    ["healthy", process.argv.slice(2)],
    [
      "broken: no webhook secret, a missing bucket, gas for a million sales",
      [...process.argv.slice(2), "--settlements", "1000000"],
    ],
  ] as const) {
    // not spawnSync: the parts answering it run in this process
    const child = spawn(process.execPath, ["--no-warnings", path.join(root, "bin/labphi.mjs"), "doctor", ...args], {
      cwd: root,
      env: label === "healthy" ? env : { ...env, STRIPE_WEBHOOK_SECRET: "", S3_BUCKET: "labphi-missing" },
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += String(d);
    });
    child.stderr.on("data", (d) => {
      out += String(d);
    });
    const status = await new Promise<number | null>((r) => child.on("close", r));
    process.stdout.write(`$ labphi doctor ${args.join(" ")}   # ${label}\n${out}exit status ${status}\n\n`);
  }
} finally {
  await world.stop();
}

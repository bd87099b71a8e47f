import { writeSync } from "node:fs";

/**
 * Crash points for the fault tests (test/faults): `LABPHI_CRASH_AT=<point>` makes the process
 * kill itself with SIGKILL when it reaches that point, exactly as `kill -9` would at that moment.
 * Never available in production: the configuration refuses to load when NODE_ENV=production and
 * LABPHI_CRASH_AT is set (src/config.ts), and `crashPoint` does nothing there either.
 */

export const CRASH_POINTS = [
  "before_settle",
  "after_settle",
  "after_grant",
  // refunds (src/refunds/service.ts): the signed transaction is stored, not yet sent / sent, not yet recorded
  "refund_before_broadcast",
  "refund_after_broadcast",
] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

/** Why the environment's LABPHI_CRASH_AT cannot be accepted, or undefined when it can (or is unset). */
export function crashSettingError(env: NodeJS.ProcessEnv): string | undefined {
  const value = env.LABPHI_CRASH_AT;
  if (value === undefined || value === "") return undefined;
  if (env.NODE_ENV === "production") return "is a fault-test setting and is refused when NODE_ENV=production";
  if (!(CRASH_POINTS as readonly string[]).includes(value)) return `must be one of ${CRASH_POINTS.join(", ")}`;
  return undefined;
}

/** Kills this process (SIGKILL) when LABPHI_CRASH_AT names this point, outside production. */
export function crashPoint(point: CrashPoint, env: NodeJS.ProcessEnv = process.env): void {
  if (env.LABPHI_CRASH_AT !== point || env.NODE_ENV === "production") return;
  writeSync(2, `labphi: crash point ${point} reached; SIGKILL\n`);
  process.kill(process.pid, "SIGKILL");
}

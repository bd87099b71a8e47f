import { createHmac, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import type { Kysely } from "kysely";
import { type Config, ConfigError, RECEIPT_KEY_PROBLEM } from "./config.js";
import type { Database } from "./db/schema.js";
import { setLogRefKey } from "./http/logger.js";

/**
 * The service keys: where they come from and nowhere else.
 *
 * - From the environment when set (ACCESS_TOKEN_SECRET, IDENTITY_TOKEN_SECRET, DATASET_PRINT_SECRET,
 *   RECEIPT_SIGNING_KEY).
 * - With NODE_ENV=production, only from the environment: a missing one stops start-up (ConfigError).
 * - Otherwise (development, test) from DATA_DIR/secrets.json, generated on first start, mode 0600.
 *   A file readable by group or others is refused, not repaired: the keys in it may have leaked.
 * - Never from the database. Keys that an earlier version kept in the `settings` table are moved
 *   into the file once (so access URLs issued before keep working) and deleted from the table.
 */

export interface ServiceKeys {
  /** HMAC key deriving access tokens (access URLs). */
  accessToken: string;
  /** HMAC key of identity-token hashes. */
  identityToken: string;
  /** HMAC key of dataset prints. */
  datasetPrint: string;
  /** Ed25519 key signing receipts (src/receipts): a base64url 32-byte seed, or a PKCS#8 PEM from the setting. */
  receiptSigning: string;
}

type KeyName = keyof ServiceKeys;

interface KeySpec {
  /** The environment setting. */
  setting: string;
  /** Its name inside secrets.json. */
  field: string;
  /** The `settings` row an earlier version kept it in (none for keys that were never there). */
  legacyRow?: string;
  /** What the production refusal says about the key's form (default: an HMAC key of 32+ characters). */
  productionProblem?: string;
  fromConfig(config: Config): string | undefined;
}

export const SERVICE_KEYS: Record<KeyName, KeySpec> = {
  accessToken: {
    setting: "ACCESS_TOKEN_SECRET",
    field: "access_token_secret",
    legacyRow: "access_token_secret",
    fromConfig: (c) => c.accessTokenSecret,
  },
  identityToken: {
    setting: "IDENTITY_TOKEN_SECRET",
    field: "identity_token_secret",
    legacyRow: "identity_token_secret",
    fromConfig: (c) => c.identity.tokenSecret,
  },
  datasetPrint: {
    setting: "DATASET_PRINT_SECRET",
    field: "dataset_print_secret",
    legacyRow: "dataset_print_key",
    fromConfig: (c) => c.datasetPrintSecret,
  },
  // Generated as 32 random bytes in base64url: that is an Ed25519 seed (docs/receipts.md).
  receiptSigning: {
    setting: "RECEIPT_SIGNING_KEY",
    field: "receipt_signing_key",
    productionProblem: RECEIPT_KEY_PROBLEM,
    fromConfig: (c) => c.receipts.signingKey,
  },
};

const NAMES = Object.keys(SERVICE_KEYS) as KeyName[];
const MIN_LENGTH = 32;
export const SECRETS_FILE = "secrets.json";

const newKey = () => randomBytes(32).toString("base64url");

interface Warn {
  warn(obj: object, msg: string): void;
}

/**
 * Resolves the three service keys (see the module comment). `db` is read only for the one-time
 * move of keys kept there by an earlier version; `log` gets a line (never a key) when an old key
 * is left in the table because another key is in use.
 */
export async function serviceKeys(config: Config, db: Kysely<Database>, log?: Warn): Promise<ServiceKeys> {
  const fromEnv: Partial<ServiceKeys> = {};
  for (const name of NAMES) {
    const v = SERVICE_KEYS[name].fromConfig(config);
    if (v !== undefined) fromEnv[name] = v;
  }
  const missing = NAMES.filter((n) => fromEnv[n] === undefined);
  if (config.env === "production") {
    const first = missing[0];
    if (first) {
      const spec = SERVICE_KEYS[first];
      throw new ConfigError(spec.setting, spec.productionProblem ?? PRODUCTION_PROBLEM);
    }
  }

  const legacy = await legacyRows(db);
  let keys: ServiceKeys;
  if (missing.length === 0) {
    keys = fromEnv as ServiceKeys;
  } else {
    const file = path.join(config.dataDir, SECRETS_FILE);
    const stored = readSecretsFile(file) ?? {};
    const additions: Record<string, string> = {};
    for (const name of missing) {
      const { field, legacyRow } = SERVICE_KEYS[name];
      if (stored[field] === undefined) additions[field] = (legacyRow && legacy.get(legacyRow)) || newKey();
    }
    const onDisk = Object.keys(additions).length > 0 ? writeSecretsFile(file, stored, additions) : stored;
    keys = { ...fromEnv } as ServiceKeys;
    for (const name of missing) keys[name] = onDisk[SERVICE_KEYS[name].field] as string;
  }

  // Old keys in the table: deleted once the same value is kept where it is read now; a different
  // value (another key is in use) is left alone and reported, so nothing is lost silently.
  for (const name of NAMES) {
    const { legacyRow, setting } = SERVICE_KEYS[name];
    const old = legacyRow === undefined ? undefined : legacy.get(legacyRow);
    if (legacyRow === undefined || old === undefined) continue;
    if (old === keys[name]) {
      await db.deleteFrom("settings").where("key", "=", legacyRow).where("value", "=", old).execute();
    } else {
      log?.warn(
        { setting, settings_row: legacyRow },
        "the settings table still holds an old key that is not used; copy it to the setting if URLs or hashes made with it must keep working, otherwise delete the row",
      );
    }
  }
  setLogRefKey(logRefKeyFrom(keys));
  return keys;
}

/** The message of a production start without a key (the same as loadConfig's). */
const PRODUCTION_PROBLEM = `required when NODE_ENV=production (at least ${MIN_LENGTH} characters, e.g. \`openssl rand -base64 48\`)`;

async function legacyRows(db: Kysely<Database>): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom("settings")
    .select(["key", "value"])
    .where(
      "key",
      "in",
      NAMES.flatMap((n) => SERVICE_KEYS[n].legacyRow ?? []),
    )
    .execute();
  return new Map(rows.map((r) => [r.key, r.value]));
}

function fileProblem(file: string, problem: string): ConfigError {
  return new ConfigError("DATA_DIR", `${file} ${problem}`);
}

/** The keys in the file, or undefined when there is no file. Refuses a file others can read. */
export function readSecretsFile(file: string): Record<string, string> | undefined {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw fileProblem(file, `cannot be read: ${(err as Error).message}`);
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw fileProblem(file, "is not a regular file");
    if (process.platform !== "win32" && (st.mode & 0o077) !== 0) {
      throw fileProblem(
        file,
        `is readable or writable by group or others (mode 0${(st.mode & 0o777).toString(8)}); the keys in it may have leaked: replace them, or run chmod 600 on it if they did not`,
      );
    }
    const text = fs.readFileSync(fd, "utf8");
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw fileProblem(file, "is not valid JSON");
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw fileProblem(file, "must hold a JSON object");
    }
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v !== "string" || v.length < MIN_LENGTH) {
        throw fileProblem(file, `field ${k} must be a string of at least ${MIN_LENGTH} characters`);
      }
      out[k] = v;
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes the file with the added keys, mode 0600, atomically: a new file is linked into place
 * only if none exists (the first of two concurrent starts wins and both use its keys); adding to
 * an existing file renames a complete copy over it.
 */
function writeSecretsFile(
  file: string,
  stored: Record<string, string>,
  additions: Record<string, string>,
): Record<string, string> {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const fresh = Object.keys(stored).length === 0 && !fs.existsSync(file);
  const content = { ...stored, ...additions };
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  try {
    fs.chmodSync(tmp, 0o600);
    if (fresh) {
      try {
        fs.linkSync(tmp, file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        // Another process created it first: use its keys, adding ours only where it has none.
        const theirs = readSecretsFile(file) ?? {};
        if (Object.keys(additions).every((k) => theirs[k] !== undefined)) return theirs;
        return writeSecretsFile(file, theirs, additions);
      }
    } else {
      fs.renameSync(tmp, file);
    }
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return content;
}

/**
 * The HMAC key binding MPP challenge ids (src/payments/mpp): derived from the access-token key, so
 * it needs no setting of its own and survives restarts (a challenge lives minutes; rotating
 * ACCESS_TOKEN_SECRET only voids the challenges issued before).
 */
export function mppChallengeKey(keys: ServiceKeys): string {
  return createHmac("sha256", keys.accessToken).update("labphi:mpp-challenge:v1").digest("base64url");
}

/** A key for `logRef` derived from the service keys (stable across restarts, reveals nothing). */
function logRefKeyFrom(keys: ServiceKeys): string {
  return createHmac("sha256", keys.accessToken).update("labphi:log-ref:v1").digest("base64url");
}

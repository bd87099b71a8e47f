import { type Config, ConfigError } from "../config.js";
import { SECRETS_FILE } from "../secrets.js";
import { Receipts } from "./service.js";

/**
 * The receipt signer of the service: the key resolved by `serviceKeys` (RECEIPT_SIGNING_KEY, or
 * DATA_DIR/secrets.json outside production), the issuer BASE_URL, the retired public keys. A key
 * that is not an Ed25519 key stops start-up naming where it came from (never its value).
 */
export function receiptsFor(signingKey: string, config: Config): Receipts {
  try {
    return Receipts.fromSettings(signingKey, config.baseUrl, config.receipts.retiredKeys);
  } catch (err) {
    const fromEnv = config.receipts.signingKey !== undefined;
    throw new ConfigError(
      fromEnv ? "RECEIPT_SIGNING_KEY" : "DATA_DIR",
      fromEnv ? (err as Error).message : `${SECRETS_FILE} field receipt_signing_key ${(err as Error).message}`,
    );
  }
}

import { randomBytes } from "node:crypto";
import { address as solanaAddress } from "@solana/kit";
import type { Kysely } from "kysely";
import { getAddress, isAddress, type PublicClient } from "viem";
import { nowIso } from "../db/database.js";
import type { Database } from "../db/schema.js";
import { badRequest, Problem } from "../http/problem.js";
import { verifyWalletSignature } from "../payments/wallet-signature.js";
import type { OrderService } from "./service.js";
import type { OrderRow } from "./tables.js";

/**
 * A buyer who lost the answer to its purchase (timeout, crash, a replay refused for want of the
 * payment identifier) recovers its orders by proving control of the paying wallet: it asks for a
 * challenge, signs it (EIP-4361 "Sign-In with Ethereum" text, EIP-191; or the same text as a
 * Solana message, CAIP-122), and gets back the orders that wallet paid for on chain. Challenges are
 * single use and expire after ten minutes, so a signature that leaks opens nothing later.
 */

export type RecoveryChain = "base" | "solana";

const CHALLENGE_TTL_MS = 10 * 60 * 1000;
const SOLANA_MAINNET_REF = "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

export interface RecoveryChallenge {
  nonce: string;
  chain: RecoveryChain;
  address: string;
  message: string;
  expires_at: string;
  how: string;
}

export interface RecoveredOrder {
  order_id: string;
  sku: string;
  name: string;
  status: OrderRow["status"];
  amount_usd: string;
  rail: string;
  transaction: string | null;
  license_key: string | null;
  access_url: string | null;
  /** The signed receipt of an active order (docs/receipts.md); null otherwise. */
  receipt: string | null;
  created_at: string;
}

export interface RecoveryDeps {
  baseUrl: string;
  baseChainId: number;
  /** Base RPC client: smart-wallet (ERC-1271 / ERC-6492) signatures need it; plain keys do not. */
  evmClient: () => PublicClient | undefined;
  /** The signed receipt of an order (src/receipts/facts.ts `orderReceipts`); without it, receipt is null. */
  receipt?: (order: OrderRow) => string;
}

export class OrderRecovery {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly orders: OrderService,
    private readonly deps: RecoveryDeps,
  ) {}

  private canonical(chain: RecoveryChain, addr: string): string {
    if (chain === "base") {
      if (!isAddress(addr, { strict: false })) throw badRequest("invalid_address", "address must be a 0x EVM address.");
      return getAddress(addr);
    }
    try {
      return solanaAddress(addr);
    } catch {
      throw badRequest("invalid_address", "address must be a base58 Solana address.");
    }
  }

  /** The text to sign: EIP-4361 for Base, the same CAIP-122 shape for Solana. */
  private message(chain: RecoveryChain, addr: string, nonce: string, issued: Date, expires: Date): string {
    const host = new URL(this.deps.baseUrl).host;
    return [
      `${host} wants you to sign in with your ${chain === "base" ? "Ethereum" : "Solana"} account:`,
      addr,
      "",
      "Recover the Lab Phi orders paid by this wallet.",
      "",
      `URI: ${this.deps.baseUrl}/api/orders/recover`,
      "Version: 1",
      `Chain ID: ${chain === "base" ? this.deps.baseChainId : SOLANA_MAINNET_REF}`,
      `Nonce: ${nonce}`,
      `Issued At: ${issued.toISOString()}`,
      `Expiration Time: ${expires.toISOString()}`,
    ].join("\n");
  }

  async challenge(input: { chain: RecoveryChain; address: string }): Promise<RecoveryChallenge> {
    const addr = this.canonical(input.chain, input.address);
    const nonce = randomBytes(16).toString("hex");
    const issued = new Date();
    const expires = new Date(issued.getTime() + CHALLENGE_TTL_MS);
    const message = this.message(input.chain, addr, nonce, issued, expires);
    await this.db
      .insertInto("recovery_challenges")
      .values({
        nonce,
        chain: input.chain,
        address: addr,
        message,
        expires_at: expires.toISOString(),
        used_at: null,
        created_at: issued.toISOString(),
      })
      .execute();
    return {
      nonce,
      chain: input.chain,
      address: addr,
      message,
      expires_at: expires.toISOString(),
      how:
        input.chain === "base"
          ? "Sign `message` with the paying wallet (EIP-191 personal_sign; smart wallets via ERC-1271/ERC-6492), then POST { nonce, signature } to /api/orders/recover within ten minutes."
          : "Sign the UTF-8 bytes of `message` with the paying wallet (ed25519, signMessage), then POST { nonce, signature } (base58 or base64) to /api/orders/recover within ten minutes.",
    };
  }

  async recover(input: { nonce: string; signature: string }): Promise<{
    chain: RecoveryChain;
    address: string;
    orders: RecoveredOrder[];
  }> {
    const row = await this.db
      .selectFrom("recovery_challenges")
      .selectAll()
      .where("nonce", "=", input.nonce)
      .executeTakeFirst();
    if (!row) throw new Problem(404, "recovery_challenge_not_found", "No such recovery challenge; ask for a new one.");
    if (row.used_at !== null) {
      throw new Problem(409, "recovery_challenge_used", "This challenge was already used; ask for a new one.");
    }
    if (row.expires_at < nowIso()) {
      throw new Problem(410, "recovery_challenge_expired", "This challenge expired; ask for a new one.");
    }
    const chain = row.chain as RecoveryChain;
    // With a Base RPC, ERC-1271 and ERC-6492 smart wallets verify too; without one, plain keys.
    const ok = await verifyWalletSignature(
      chain === "base" ? "evm" : "solana",
      row.address,
      row.message,
      input.signature,
      { code: "invalid_signature_format", evmClient: this.deps.evmClient() },
    );
    if (!ok) {
      throw new Problem(
        401,
        "recovery_signature_invalid",
        `The signature is not by ${row.address} over the challenge message.`,
      );
    }
    // Single use: only the first correct signature consumes the challenge.
    const used = await this.db
      .updateTable("recovery_challenges")
      .set({ used_at: nowIso() })
      .where("nonce", "=", input.nonce)
      .where("used_at", "is", null)
      .executeTakeFirst();
    if (Number(used.numUpdatedRows) !== 1) {
      throw new Problem(409, "recovery_challenge_used", "This challenge was already used; ask for a new one.");
    }
    const orders = await this.orders.paidBy(chain === "base" ? "evm" : "solana", row.address);
    return {
      chain,
      address: row.address,
      orders: orders.map((o) => {
        const v = this.orders.view(o);
        return {
          order_id: v.order_id,
          sku: v.sku,
          name: v.name,
          status: v.status,
          amount_usd: v.amount_usd,
          rail: v.rail,
          transaction: v.transaction,
          license_key: o.status === "active" ? v.license_key : null,
          access_url: o.status === "active" ? this.orders.accessUrl(o.id) : null,
          receipt: o.status === "active" && this.deps.receipt ? this.deps.receipt(o) : null,
          created_at: v.created_at,
        };
      }),
    };
  }
}

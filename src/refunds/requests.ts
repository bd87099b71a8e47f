import { randomBytes } from "node:crypto";
import { conflict, notFound, Problem } from "../http/problem.js";
import type { OrderRow } from "../orders/tables.js";
import { verifyWalletSignature } from "../payments/wallet-signature.js";
import type { RefundDeps, RefundService } from "./service.js";
import { refundStore } from "./store.js";

/**
 * Buyer refund requests (docs/payments.md "Refunds"): within REFUND_WINDOW_HOURS of the order, the
 * paying wallet signs a single-use challenge naming the order (EIP-191 on Base, ed25519 on Solana,
 * as order recovery); the request waits for the operator, or is approved at once by the policy
 * (REFUND_AUTO_APPROVE_HOURS, orders whose access link was never opened). The money only ever goes
 * back to the payer the ledger recorded.
 */

export interface RefundChallenge {
  nonce: string;
  order_id: string;
  chain: "evm" | "solana";
  address: string;
  message: string;
  expires_at: string;
  how: string;
}

const CHALLENGE_TTL_MS = 10 * 60 * 1000;
const HOUR_MS = 3_600_000;

export class RefundRequests {
  constructor(
    private readonly deps: RefundDeps,
    private readonly refunds: RefundService,
  ) {}

  /** A buyer's refund is possible: window open, order active, no refund yet, paid by a wallet. */
  private async requestable(orderId: string) {
    const { windowHours } = this.deps.config.refunds;
    if (windowHours === 0) {
      throw new Problem(403, "refund_requests_disabled", "This service takes no refund requests from buyers.");
    }
    const order = await this.deps.orders.get(orderId);
    const age = this.refunds.clock().getTime() - Date.parse(order.created_at);
    if (age > windowHours * HOUR_MS) {
      throw new Problem(
        410,
        "refund_window_closed",
        `Refunds may be requested within ${windowHours} hours of the order.`,
        {
          order_id: orderId,
          window_hours: windowHours,
        },
      );
    }
    const existing = await refundStore.byOrder(this.deps.db, orderId);
    if (existing) throw this.refunds.exists(existing);
    if (order.status !== "active") {
      throw conflict("order_not_active", `Order ${orderId} is ${order.status}.`, { status: order.status });
    }
    const paid = await refundStore.paidWith(this.deps.db, orderId);
    const chain = paid?.network?.startsWith("eip155:") ? "evm" : paid?.network?.startsWith("solana:") ? "solana" : null;
    if (!paid?.payer || !chain) {
      throw conflict(
        "refund_request_unsupported",
        "Only orders paid by a wallet (x402, MPP) can be refunded on request; ask the operator for the others.",
      );
    }
    return { order, chain: chain as "evm" | "solana", payer: paid.payer, paid, age };
  }

  /** Step 1: the text the paying wallet must sign (single use, ten minutes). */
  async challenge(orderId: string): Promise<RefundChallenge> {
    const { order, chain, payer, paid } = await this.requestable(orderId);
    const nonce = randomBytes(16).toString("hex");
    const issued = this.refunds.clock();
    const expires = new Date(issued.getTime() + CHALLENGE_TTL_MS);
    const base = this.deps.config.baseUrl;
    const message = [
      `${new URL(base).host} asks you to sign with your ${chain === "evm" ? "Ethereum" : "Solana"} account:`,
      payer,
      "",
      `Request a refund of Lab Phi order ${order.id}: ${paid.amount_units ?? "?"} atomic units of ${paid.asset ?? "?"} on ${paid.network ?? "?"}, back to this wallet. The order's access ends when the refund is approved.`,
      "",
      `URI: ${base}/api/orders/${order.id}/refund-request`,
      `Nonce: ${nonce}`,
      `Issued At: ${issued.toISOString()}`,
      `Expiration Time: ${expires.toISOString()}`,
    ].join("\n");
    await refundStore.insertChallenge(this.deps.db, {
      nonce,
      order_id: order.id,
      chain,
      address: payer,
      message,
      expires_at: expires.toISOString(),
      used_at: null,
      created_at: issued.toISOString(),
    });
    return {
      nonce,
      order_id: order.id,
      chain,
      address: payer,
      message,
      expires_at: expires.toISOString(),
      how:
        chain === "evm"
          ? `Sign \`message\` with the paying wallet (EIP-191 personal_sign), then POST { nonce, signature } to /api/orders/${order.id}/refund-request within ten minutes.`
          : `Sign the UTF-8 bytes of \`message\` with the paying wallet (ed25519), then POST { nonce, signature } (base58 or base64) to /api/orders/${order.id}/refund-request within ten minutes.`,
    };
  }

  /**
   * Step 2: the signed request. Only the order's payer can sign it, and the money only ever goes
   * back to that payer. Auto-approved when the policy allows (REFUND_AUTO_APPROVE_HOURS, unused).
   */
  async request(orderId: string, input: { nonce: string; signature: string; reason?: string | undefined }) {
    const ch = await refundStore.challenge(this.deps.db, input.nonce);
    if (!ch || ch.order_id !== orderId) {
      throw notFound("refund_challenge_not_found", "No such refund challenge for this order; ask for a new one.");
    }
    if (ch.used_at !== null) throw conflict("refund_challenge_used", "This challenge was already used.");
    if (ch.expires_at < this.refunds.clock().toISOString()) {
      throw new Problem(410, "refund_challenge_expired", "This challenge expired; ask for a new one.");
    }
    const ok = await verifyWalletSignature(ch.chain, ch.address, ch.message, input.signature, {
      code: "invalid_signature_format",
      evmClient: this.deps.evmClient?.(),
    });
    if (!ok) {
      throw new Problem(401, "refund_signature_invalid", `The signature is not by the paying wallet ${ch.address}.`);
    }
    if (!(await refundStore.useChallenge(this.deps.db, input.nonce, this.refunds.clock().toISOString()))) {
      throw conflict("refund_challenge_used", "This challenge was already used.");
    }
    const { order, payer, age } = await this.requestable(orderId);
    if (payer !== ch.address) {
      throw new Problem(401, "refund_signature_invalid", "The order's paying wallet is not the one that signed.");
    }
    const actor = `buyer:${payer}`;
    const reason = input.reason ?? "requested by the buyer";
    const row = await this.refunds.plan(order, "buyer", actor, reason, "requested");
    if (!(await refundStore.insertIfAbsent(this.deps.db, row))) {
      throw this.refunds.exists((await refundStore.byOrder(this.deps.db, orderId)) ?? row);
    }
    await this.deps.orders.audit(actor, "refund.requested", orderId, { refund_id: row.id, reason });
    const auto = this.deps.config.refunds.autoApproveHours;
    if (auto > 0 && age <= auto * HOUR_MS && (await this.unused(order))) {
      return this.refunds.approve(row.id, "policy:auto-approve");
    }
    return this.refunds.get(row.id);
  }

  /** An entitlement nobody used: its access link never opened (access_opens). */
  private async unused(order: OrderRow): Promise<boolean> {
    return (await refundStore.firstOpen(this.deps.db, order.id)) === undefined;
  }

  /** The order an access token opens (undefined when it opens none). */
  async orderOf(token: string): Promise<string | undefined> {
    return (await this.deps.orders.open(token).catch(() => undefined))?.id;
  }

  /** Records the first opening of an access link (the hook in routes.ts calls it). */
  async recordOpen(orderId: string): Promise<void> {
    await refundStore.recordOpen(this.deps.db, orderId, this.refunds.clock().toISOString());
  }
}

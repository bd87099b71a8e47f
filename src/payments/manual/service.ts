import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import type { Catalog } from "../../catalog/service.js";
import { formatUsd } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { nowIso } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { Problem } from "../../http/problem.js";
import type { OnChainPayment } from "../../orders/fulfilment.js";
import { productItem } from "../../orders/priced-item.js";
import type { OrderService, OrderView } from "../../orders/service.js";
import { isEmail } from "../card/service.js";
import { railNotConfiguredDetail } from "../readiness.js";
import { checkTransferTx, evmPublicClient } from "../x402/evm.js";
import { centsToAtomic } from "../x402/rails.js";
import { CLAIM_RAILS, type ManualRailId, manualRails, WIRE_TERMS } from "./rails.js";
import { canonicalSender, senderChain, senderFromChain, senderProofMessage, verifySenderSignature } from "./sender.js";
import { claimStore } from "./store.js";
import type { ClaimRow } from "./tables.js";

export interface ClaimInput {
  sku: string;
  email: string;
  rail: string;
  tx?: string | null | undefined;
  company?: string | null | undefined;
  billing_address?: string | null | undefined;
  currency?: string | null | undefined;
  /** The wallet that sent the transfer (read from the chain instead where possible). */
  sender?: string | null | undefined;
  /** That wallet's signature over senderProofMessage(tx, sku): proves the claim is its own. */
  sender_signature?: string | null | undefined;
}

export interface ClaimView {
  claim_id: string;
  state: ClaimRow["state"];
  rail: string;
  sku: string;
  email: string;
  amount_cents: number;
  amount_usd: string;
  tx: string | null;
  company: string | null;
  billing_address: string | null;
  currency: string | null;
  terms: string | null;
  order_id: string | null;
  decided_by: string | null;
  decided_at: string | null;
  reason: string | null;
  created_at: string;
  sender: string | null;
  sender_source: "chain" | "claimant" | null;
  /** The claimant signed for the sending wallet. */
  sender_proven: boolean;
  /** Other claims naming the same transfer (ids), for the operator to compare. */
  same_transfer_claims?: string[];
}

export interface ClaimReceipt {
  claim_id: string;
  state: ClaimRow["state"];
  rail: string;
  sku: string;
  amount_cents: number;
  amount_usd: string;
  tx: string | null;
  terms: string | null;
  pay_to: string | null;
  network: string | null;
  asset_hint: string | null;
  next_steps: string[];
  mailto: string | null;
  status_url: string;
  sender: string | null;
  sender_source: "chain" | "claimant" | null;
  sender_proven: boolean;
  prove_sender: { message: string; how: string } | null;
}

/** Advisory on-chain check of a claim's transaction (USDC to our address on Base). */
export interface ChainCheck {
  claim_id: string;
  /** ok: an exact USDC transfer to pay_to; pending: not (enough) confirmed; failed: see reason; unavailable: cannot check. */
  status: "ok" | "pending" | "failed" | "unavailable";
  reason: string | null;
  detail: string;
  network: string | null;
  expected_amount: string | null;
  asset: string | null;
  pay_to: string | null;
}

/** Manual transfers may be claimed days later: the age limit of an on-chain check. */
export const CLAIM_TX_MAX_AGE_SECONDS = 60 * 24 * 3600;

export interface Approval {
  claim: ClaimView;
  order: OrderView;
  access_url: string;
  /** false when the claim had been approved before (idempotent replay). */
  created: boolean;
}

const TX_FORMATS: Record<string, { re: RegExp; what: string; key: (tx: string) => string }> = {
  crypto_manual_solana: {
    re: /^[1-9A-HJ-NP-Za-km-z]{64,88}$/,
    what: "a base58 Solana transaction signature",
    key: (tx) => `solana:${tx}`,
  },
  crypto_manual_evm: {
    re: /^0x[0-9a-fA-F]{64}$/,
    what: "a 0x-prefixed 32-byte transaction hash",
    key: (tx) => `evm:${tx.toLowerCase()}`,
  },
  crypto_manual_btc: { re: /^[0-9a-fA-F]{64}$/, what: "a 64-hex Bitcoin txid", key: (tx) => `btc:${tx.toLowerCase()}` },
  wire_invoice_ach: {
    re: /^[A-Za-z0-9][A-Za-z0-9 ._/-]{2,99}$/,
    what: "a wire/ACH remittance reference (3-100 letters, digits, space . _ / -)",
    key: (tx) => `wire:${tx.toUpperCase().replace(/\s+/g, " ")}`,
  },
};

/**
 * Manual rails: a payer claims a crypto transfer (by transaction reference) or asks for a
 * wire/ACH invoice; an operator approves (→ `OrderService.grant`, proof key `claim:<id>`),
 * rejects or revokes. Every transition is conditional and audited.
 */
export class ClaimService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly orders: OrderService,
    private readonly catalog: Catalog,
    private readonly config: Config,
  ) {}

  async submit(input: ClaimInput): Promise<ClaimReceipt> {
    if (!(CLAIM_RAILS as readonly string[]).includes(input.rail)) {
      throw new Problem(400, "unsupported_rail", `Claims are for the manual rails, not "${input.rail}".`, {
        rail: input.rail,
        supported: CLAIM_RAILS,
        hint: "Cards: POST /api/checkout. Agents: POST /api/x402-products.",
      });
    }
    const rail = manualRails(this.config).find((r) => r.id === input.rail);
    if (!rail) throw new Error(`no manual rail ${input.rail}`);
    const email = input.email.trim();
    if (!isEmail(email)) throw new Problem(400, "invalid_email", "email must be a valid e-mail address.");
    const product = this.catalog.resolve(input.sku);
    const wire = rail.id === "wire_invoice_ach";

    const tx = input.tx?.trim() || null;
    const format = TX_FORMATS[rail.id];
    if (!format) throw new Error(`no tx format for ${rail.id}`);
    if (!tx && !wire) {
      throw new Problem(400, "tx_required", `Claims on ${rail.id} need tx: ${format.what}.`);
    }
    if (tx && !format.re.test(tx)) throw new Problem(400, "invalid_tx", `tx must be ${format.what}.`);
    // Local checks first; only a well-formed claim can learn that the rail cannot be approved here.
    if (!rail.configured) {
      const { detail, missing } = railNotConfiguredDetail(this.config, rail.id);
      throw new Problem(503, "rail_not_configured", detail, { rail: rail.id, missing });
    }

    let company: string | null = null;
    let billing: string | null = null;
    let currency: string | null = null;
    if (wire) {
      company = input.company?.trim() || null;
      billing = input.billing_address?.trim() || null;
      if (!company) throw new Problem(400, "company_required", "A wire invoice needs the company's legal name.");
      if (!billing) throw new Problem(400, "billing_address_required", "A wire invoice needs a billing address.");
      currency = (input.currency?.trim() || "usd").toLowerCase();
      if (!/^[a-z]{3}$/.test(currency)) {
        throw new Problem(400, "invalid_currency", "currency must be a three-letter ISO 4217 code, e.g. USD or EUR.");
      }
    }

    const txKey = tx ? format.key(tx) : null;
    // Who sent it: read from the chain where we can (the claimant's word otherwise), and whether the
    // claimant proved control of that wallet. Several claims may name one transfer; the operator
    // approves the one of its payer, and an open claim never blocks anything else.
    const chain = senderChain(rail.id);
    let sender: string | null = null;
    let senderSource: ClaimRow["sender_source"] = null;
    let senderProven = false;
    if (chain && tx) {
      const stated = input.sender?.trim() ? canonicalSender(chain, input.sender.trim()) : undefined;
      const evmClient = this.evmClient();
      const onChain = await senderFromChain(chain, tx, {
        evmClient,
        solanaRpcUrl: this.config.x402.solanaRpcUrl,
        usdc: this.config.usdc.base,
        payTo: this.config.payTo.base,
      });
      sender = onChain ?? stated ?? null;
      senderSource = onChain ? "chain" : stated ? "claimant" : null;
      const signature = input.sender_signature?.trim();
      if (signature) {
        if (!sender) {
          throw new Problem(400, "sender_required", "Name the sending wallet (sender) that made the signature.");
        }
        const message = senderProofMessage(tx, product.sku);
        if (!(await verifySenderSignature(chain, sender, message, signature, evmClient))) {
          throw new Problem(
            400,
            "invalid_sender_signature",
            `sender_signature is not a signature by ${sender} over: ${message}`,
            { sender, message },
          );
        }
        senderProven = true;
      }
    } else if (input.sender || input.sender_signature) {
      throw new Problem(400, "sender_not_applicable", `Claims on ${rail.id} do not take a sender or signature.`);
    }
    const at = nowIso();
    const row: ClaimRow = {
      id: `clm_${randomBytes(16).toString("base64url")}`,
      rail: rail.id,
      sku: product.sku,
      email,
      amount_cents: product.amountCents,
      tx_ref: tx,
      tx_key: txKey,
      company,
      billing_address: billing,
      currency,
      terms: wire ? WIRE_TERMS : null,
      state: "submitted",
      order_id: null,
      decided_by: null,
      decided_at: null,
      reason: null,
      created_at: at,
      updated_at: at,
      sender,
      sender_source: senderSource,
      sender_proven: senderProven ? 1 : 0,
    };
    await this.db.transaction().execute(async (trx) => {
      await claimStore.insert(trx, row);
      await this.orders.audit(
        `buyer:${email}`,
        "claim.submitted",
        row.id,
        { rail: rail.id, sku: product.sku, tx, sender, sender_proven: senderProven },
        trx,
      );
    });
    return this.receipt(row);
  }

  private evmClient() {
    const rpc = this.config.x402.baseRpcUrl;
    return rpc ? evmPublicClient(this.config.x402.baseChainId, rpc, 10_000) : undefined;
  }

  /** The on-chain payment a claim names (the order core's reference), if it is a crypto transfer. */
  private paymentOf(claim: ClaimRow): OnChainPayment | undefined {
    if (!claim.tx_ref) return undefined;
    const chain =
      claim.rail === "crypto_manual_evm"
        ? "evm"
        : claim.rail === "crypto_manual_solana"
          ? "solana"
          : claim.rail === "crypto_manual_btc"
            ? "btc"
            : undefined;
    if (!chain) return undefined;
    return { chain, tx: claim.tx_ref, payer: claim.sender_proven ? claim.sender : null };
  }

  private receipt(row: ClaimRow): ClaimReceipt {
    const rail = manualRails(this.config).find((r) => r.id === row.rail);
    const usd = formatUsd(row.amount_cents);
    const steps =
      row.rail === "wire_invoice_ach"
        ? [
            `We issue an invoice for $${usd} (${row.sku}) to ${row.company}, payable in ${row.currency?.toUpperCase()} on ${WIRE_TERMS} terms.`,
            `Pay it by wire or ACH quoting the claim id ${row.id}.`,
            "An operator approves the claim and you receive the access URL (also at status_url).",
          ]
        : [
            row.tx_ref
              ? `Your transfer ${row.tx_ref} is recorded. It must be the exact USD-equivalent of $${usd} to ${rail?.pay_to ?? "the published address"}.`
              : `Send the exact USD-equivalent of $${usd} to ${rail?.pay_to ?? "the published address"}.`,
            "An operator checks the transfer and approves the claim; you then receive the access URL (also at status_url).",
            `Questions: reply with the claim id ${row.id}.`,
          ];
    const contact = this.config.contactEmail;
    const mailto = contact
      ? `mailto:${contact}?subject=${encodeURIComponent(`Claim ${row.id} (${row.sku})`)}&body=${encodeURIComponent(
          `claim_id: ${row.id}\nsku: ${row.sku}\nrail: ${row.rail}\n${row.tx_ref ? `tx: ${row.tx_ref}\n` : ""}${
            row.company
              ? `company: ${row.company}\nbilling_address: ${row.billing_address}\ncurrency: ${row.currency}\n`
              : ""
          }`,
        )}`
      : null;
    return {
      claim_id: row.id,
      state: row.state,
      rail: row.rail,
      sku: row.sku,
      amount_cents: row.amount_cents,
      amount_usd: usd,
      tx: row.tx_ref,
      terms: row.terms,
      pay_to: rail?.pay_to ?? null,
      network: rail?.network ?? null,
      asset_hint: rail?.asset_hint ?? null,
      next_steps: steps,
      mailto,
      status_url: `${this.config.baseUrl}/api/claims/${row.id}`,
      sender: row.sender,
      sender_source: row.sender_source,
      sender_proven: row.sender_proven === 1,
      prove_sender:
        row.tx_ref && senderChain(row.rail)
          ? {
              message: senderProofMessage(row.tx_ref, row.sku),
              how:
                senderChain(row.rail) === "evm"
                  ? "Sign the message with the sending wallet (EIP-191 personal_sign) and file the claim with sender and sender_signature: operators approve claims whose claimant proved control of the sender first."
                  : "Sign the UTF-8 bytes of the message with the sending wallet (ed25519 signMessage, base58) and file the claim with sender and sender_signature: operators approve claims whose claimant proved control of the sender first.",
            }
          : null,
    };
  }

  view(row: ClaimRow): ClaimView {
    return {
      claim_id: row.id,
      state: row.state,
      rail: row.rail,
      sku: row.sku,
      email: row.email,
      amount_cents: row.amount_cents,
      amount_usd: formatUsd(row.amount_cents),
      tx: row.tx_ref,
      company: row.company,
      billing_address: row.billing_address,
      currency: row.currency,
      terms: row.terms,
      order_id: row.order_id,
      decided_by: row.decided_by,
      decided_at: row.decided_at,
      reason: row.reason,
      created_at: row.created_at,
      sender: row.sender,
      sender_source: row.sender_source,
      sender_proven: row.sender_proven === 1,
    };
  }

  /** The operator's view of one claim: with the other claims naming the same transfer. */
  async operatorView(id: string): Promise<ClaimView> {
    const row = await this.get(id);
    const siblings = row.tx_key ? await claimStore.byTxKey(this.db, row.tx_key) : [];
    return { ...this.view(row), same_transfer_claims: siblings.filter((c) => c.id !== id).map((c) => c.id) };
  }

  async get(id: string): Promise<ClaimRow> {
    const row = await claimStore.byId(this.db, id);
    if (!row) throw new Problem(404, "claim_not_found", `No claim ${id}.`);
    return row;
  }

  /** The buyer's view (by claim id): state, and the access URL once approved. */
  async publicStatus(id: string) {
    const row = await this.get(id);
    const receipt = this.receipt(row);
    let accessUrl: string | null = null;
    let orderStatus: string | null = null;
    if (row.order_id) {
      const order = await this.orders.get(row.order_id);
      orderStatus = order.status;
      if (order.status === "active") accessUrl = this.orders.accessUrl(order.id);
    }
    return {
      ...receipt,
      order_id: row.order_id,
      order_status: orderStatus,
      access_url: accessUrl,
      reason: row.state === "rejected" ? row.reason : null,
    };
  }

  /**
   * Checks a claim's transaction on chain, for the operator before approving. Only USDC on Base
   * can be checked automatically (it reuses the x402 transaction-hash verification); an ETH payment
   * or another chain answers `failed`/`unavailable` and needs a manual look.
   */
  async chainCheck(id: string): Promise<ChainCheck> {
    const claim = await this.get(id);
    const payTo = this.config.payTo.base ?? null;
    const base = {
      claim_id: id,
      network: null as string | null,
      expected_amount: null as string | null,
      asset: null as string | null,
      pay_to: null as string | null,
    };
    if (claim.rail !== "crypto_manual_evm" || !claim.tx_ref) {
      return {
        ...base,
        status: "unavailable",
        reason: "not_checkable",
        detail: `Claims on ${claim.rail} are checked by hand.`,
      };
    }
    const rpc = this.config.x402.baseRpcUrl;
    if (!rpc || !payTo) {
      return {
        ...base,
        status: "unavailable",
        reason: "base_rpc_not_configured",
        detail: "BASE_RPC_URL and PAY_TO_BASE are needed to check Base transactions.",
      };
    }
    const chainId = this.config.x402.baseChainId;
    const q = {
      network: `eip155:${chainId}`,
      expected_amount: centsToAtomic(claim.amount_cents),
      asset: this.config.usdc.base,
      pay_to: payTo,
    };
    try {
      const check = await checkTransferTx(evmPublicClient(chainId, rpc, 10_000), {
        hash: claim.tx_ref as `0x${string}`,
        asset: q.asset,
        payTo,
        amount: q.expected_amount,
        minConfirmations: this.config.x402.minConfirmations,
        maxAgeSeconds: CLAIM_TX_MAX_AGE_SECONDS,
      });
      if (check.status === "ok") {
        return {
          claim_id: id,
          ...q,
          status: "ok",
          reason: null,
          detail: `Exact USDC transfer from ${check.from} to ${payTo} in block ${check.blockNumber}.`,
        };
      }
      if (check.status === "pending")
        return { claim_id: id, ...q, status: "pending", reason: null, detail: check.detail };
      return {
        claim_id: id,
        ...q,
        status: "failed",
        reason: check.reason,
        detail: `${check.detail} (A payment in ETH or on another chain cannot be checked here.)`,
      };
    } catch (err) {
      return {
        claim_id: id,
        ...q,
        status: "unavailable",
        reason: "rpc_error",
        detail: `The Base RPC could not be read: ${(err as Error).message.split("\n")[0]}`,
      };
    }
  }

  /** Approves a submitted claim: one order (proof key `claim:<id>`). Approving twice answers the same order. */
  async approve(id: string, actor: string, note?: string | null): Promise<Approval> {
    const at = nowIso();
    const outcome = await this.db.transaction().execute(async (trx) => {
      const claim = await claimStore.byId(trx, id);
      if (!claim) throw new Problem(404, "claim_not_found", `No claim ${id}.`);
      if (claim.state !== "submitted") return { raced: true as const };
      const won = await claimStore.transition(trx, id, "submitted", {
        state: "approved",
        decided_by: actor,
        decided_at: at,
        reason: note ?? null,
        updated_at: at,
      });
      if (!won) return { raced: true as const };
      // The claimed product, priced by the catalog; the claim states what was actually paid.
      const item = productItem(this.catalog.resolve(claim.sku), `${this.config.baseUrl}/api/claims`);
      const granted = await this.orders.grant(
        item,
        {
          proofKey: `claim:${id}`,
          rail: claim.rail,
          amountCents: claim.amount_cents,
          transactionRef: claim.tx_ref,
          email: claim.email,
          meta: { claim_id: id, company: claim.company, terms: claim.terms, approved_by: actor, sender: claim.sender },
          // One on-chain payment, one order, across every rail (the order core refuses a second one).
          onChain: this.paymentOf(claim),
        },
        trx,
      );
      await trx.updateTable("claims").set({ order_id: granted.id }).where("id", "=", id).execute();
      const closed =
        claim.tx_key && claim.rail !== "wire_invoice_ach"
          ? await claimStore.closeSiblings(
              trx,
              claim.tx_key,
              id,
              `Another claim of this transfer (${id}) was approved.`,
              at,
            )
          : [];
      await this.orders.audit(actor, "claim.approved", id, { order_id: granted.id, note: note ?? null, closed }, trx);
      return { raced: false as const, orderId: granted.id };
    });
    const claim = await this.get(id);
    if (outcome.raced && (claim.state !== "approved" || !claim.order_id)) {
      throw new Problem(
        409,
        "claim_not_pending",
        `Claim ${id} is ${claim.state}; only submitted claims can be approved.`,
        {
          state: claim.state,
        },
      );
    }
    const order = await this.orders.get(claim.order_id as string);
    return {
      claim: this.view(claim),
      order: this.orders.view(order),
      access_url: this.orders.accessUrl(order.id),
      created: !outcome.raced,
    };
  }

  /** Rejects a submitted claim (idempotent for an already rejected one). */
  async reject(id: string, actor: string, reason: string): Promise<ClaimView> {
    const at = nowIso();
    await this.db.transaction().execute(async (trx) => {
      const claim = await claimStore.byId(trx, id);
      if (!claim) throw new Problem(404, "claim_not_found", `No claim ${id}.`);
      if (claim.state === "rejected") return;
      const won = await claimStore.transition(trx, id, "submitted", {
        state: "rejected",
        decided_by: actor,
        decided_at: at,
        reason,
        updated_at: at,
      });
      if (won) await this.orders.audit(actor, "claim.rejected", id, { reason }, trx);
    });
    const claim = await this.get(id);
    if (claim.state !== "rejected") {
      throw new Problem(
        409,
        "claim_not_pending",
        `Claim ${id} is ${claim.state}; only submitted claims can be rejected.`,
        {
          state: claim.state,
        },
      );
    }
    return this.view(claim);
  }

  /** Revokes an approved claim and its order's entitlement. */
  async revoke(id: string, actor: string, reason: string): Promise<ClaimView> {
    const claim = await this.get(id);
    if (claim.state === "revoked") return this.view(claim);
    if (claim.state !== "approved" || !claim.order_id) {
      throw new Problem(
        409,
        "claim_not_approved",
        `Claim ${id} is ${claim.state}; only approved claims can be revoked.`,
        {
          state: claim.state,
        },
      );
    }
    await this.orders.revoke(claim.order_id, actor, reason);
    const at = nowIso();
    const won = await claimStore.transition(this.db, id, "approved", {
      state: "revoked",
      decided_by: actor,
      decided_at: at,
      reason,
      updated_at: at,
    });
    if (won) await this.orders.audit(actor, "claim.revoked", id, { reason, order_id: claim.order_id });
    return this.view(await this.get(id));
  }

  list(q: { limit: number; offset: number; state?: string; rail?: string; search?: string }) {
    return claimStore.list(this.db, q);
  }
}

export type { ManualRailId };

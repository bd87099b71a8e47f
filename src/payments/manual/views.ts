import { formatUsd } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { type ClaimContext, getClaim } from "./context.js";
import { manualRails, WIRE_TERMS } from "./rails.js";
import { senderChain, senderProofMessage } from "./sender.js";
import { claimStore } from "./store.js";
import type { ClaimRow } from "./tables.js";

/** A claim as the operator sees it. */
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

/** What the claimant gets back: where to pay, what happens next, how to prove the sender. */
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

export function claimView(row: ClaimRow): ClaimView {
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
export async function operatorView(ctx: ClaimContext, id: string): Promise<ClaimView> {
  const row = await getClaim(ctx, id);
  const siblings = row.tx_key ? await claimStore.byTxKey(ctx.db, row.tx_key) : [];
  return { ...claimView(row), same_transfer_claims: siblings.filter((c) => c.id !== id).map((c) => c.id) };
}

/** The buyer's view (by claim id): state, and the access URL once approved. */
export async function publicStatus(ctx: ClaimContext, id: string) {
  const row = await getClaim(ctx, id);
  const receipt = claimReceipt(ctx.config, row);
  let accessUrl: string | null = null;
  let orderStatus: string | null = null;
  let signed: string | null = null;
  if (row.order_id) {
    const order = await ctx.orders.get(row.order_id);
    orderStatus = order.status;
    if (order.status === "active") {
      accessUrl = ctx.orders.accessUrl(order.id);
      const v = await ctx.orders.fulfilmentView("product", order.id);
      signed = typeof v.receipt === "string" ? v.receipt : null;
    }
  }
  return {
    ...receipt,
    order_id: row.order_id,
    order_status: orderStatus,
    access_url: accessUrl,
    receipt: signed,
    reason: row.state === "rejected" ? row.reason : null,
  };
}

export function claimReceipt(config: Config, row: ClaimRow): ClaimReceipt {
  const rail = manualRails(config).find((r) => r.id === row.rail);
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
    mailto: claimMailto(config.contactEmail, row),
    status_url: `${config.baseUrl}/api/claims/${row.id}`,
    sender: row.sender,
    sender_source: row.sender_source,
    sender_proven: row.sender_proven === 1,
    prove_sender: proveSender(row),
  };
}

/** A mail link to the operator carrying the claim's facts; null without CONTACT_EMAIL. */
function claimMailto(contact: string | null | undefined, row: ClaimRow): string | null {
  if (!contact) return null;
  const body = `claim_id: ${row.id}\nsku: ${row.sku}\nrail: ${row.rail}\n${row.tx_ref ? `tx: ${row.tx_ref}\n` : ""}${
    row.company ? `company: ${row.company}\nbilling_address: ${row.billing_address}\ncurrency: ${row.currency}\n` : ""
  }`;
  return `mailto:${contact}?subject=${encodeURIComponent(`Claim ${row.id} (${row.sku})`)}&body=${encodeURIComponent(body)}`;
}

/** What the sending wallet signs to prove the claim is its own (crypto claims on EVM or Solana). */
function proveSender(row: ClaimRow): ClaimReceipt["prove_sender"] {
  const chain = senderChain(row.rail);
  if (!row.tx_ref || !chain) return null;
  return {
    message: senderProofMessage(row.tx_ref, row.sku),
    how:
      chain === "evm"
        ? "Sign the message with the sending wallet (EIP-191 personal_sign) and file the claim with sender and sender_signature: operators approve claims whose claimant proved control of the sender first."
        : "Sign the UTF-8 bytes of the message with the sending wallet (ed25519 signMessage, base58) and file the claim with sender and sender_signature: operators approve claims whose claimant proved control of the sender first.",
  };
}

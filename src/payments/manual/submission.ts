import { randomBytes } from "node:crypto";
import { nowIso } from "../../db/database.js";
import { Problem } from "../../http/problem.js";
import { isEmail } from "../card/service.js";
import { railNotConfiguredDetail } from "../readiness.js";
import { baseClient, type ClaimContext } from "./context.js";
import { CLAIM_RAILS, manualRails, WIRE_TERMS } from "./rails.js";
import {
  canonicalSender,
  type SenderChain,
  senderChain,
  senderFromChain,
  senderProofMessage,
  verifySenderSignature,
} from "./sender.js";
import { claimStore } from "./store.js";
import type { ClaimRow } from "./tables.js";
import { type ClaimReceipt, claimReceipt } from "./views.js";

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

/** The transaction reference each manual rail takes, and the key that finds other claims of one transfer. */
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

interface WireDetails {
  company: string | null;
  billing: string | null;
  currency: string | null;
}

interface SenderFacts {
  sender: string | null;
  senderSource: ClaimRow["sender_source"];
  senderProven: boolean;
}

/**
 * Records a claim: the rail, the e-mail, the product, the transaction reference in its rail's format
 * (required except for a wire invoice), the invoice details of a wire, and who sent the transfer.
 * Local checks come first; only a well-formed claim learns that the rail cannot be approved here.
 */
export async function submitClaim(ctx: ClaimContext, input: ClaimInput): Promise<ClaimReceipt> {
  const { config } = ctx;
  if (!(CLAIM_RAILS as readonly string[]).includes(input.rail)) {
    throw new Problem(400, "unsupported_rail", `Claims are for the manual rails, not "${input.rail}".`, {
      rail: input.rail,
      supported: CLAIM_RAILS,
      hint: "Cards: POST /api/checkout. Agents: POST /api/x402-products.",
    });
  }
  const rail = manualRails(config).find((r) => r.id === input.rail);
  if (!rail) throw new Error(`no manual rail ${input.rail}`);
  const email = input.email.trim();
  if (!isEmail(email)) throw new Problem(400, "invalid_email", "email must be a valid e-mail address.");
  const product = ctx.catalog.resolve(input.sku);
  const wire = rail.id === "wire_invoice_ach";

  const tx = input.tx?.trim() || null;
  const format = TX_FORMATS[rail.id];
  if (!format) throw new Error(`no tx format for ${rail.id}`);
  if (!tx && !wire) {
    throw new Problem(400, "tx_required", `Claims on ${rail.id} need tx: ${format.what}.`);
  }
  if (tx && !format.re.test(tx)) throw new Problem(400, "invalid_tx", `tx must be ${format.what}.`);
  if (!rail.configured) {
    const { detail, missing } = railNotConfiguredDetail(config, rail.id);
    throw new Problem(503, "rail_not_configured", detail, { rail: rail.id, missing });
  }

  const { company, billing, currency } = wire ? wireDetails(input) : { company: null, billing: null, currency: null };
  const txKey = tx ? format.key(tx) : null;
  // Who sent it: read from the chain where we can (the claimant's word otherwise), and whether the
  // claimant proved control of that wallet. Several claims may name one transfer; the operator
  // approves the one of its payer, and an open claim never blocks anything else.
  const chain = senderChain(rail.id);
  let facts: SenderFacts = { sender: null, senderSource: null, senderProven: false };
  if (chain && tx) {
    facts = await identifySender(ctx, chain, tx, product.sku, input);
  } else if (input.sender || input.sender_signature) {
    throw new Problem(400, "sender_not_applicable", `Claims on ${rail.id} do not take a sender or signature.`);
  }
  const { sender, senderSource, senderProven } = facts;
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
  await ctx.db.transaction().execute(async (trx) => {
    await claimStore.insert(trx, row);
    await ctx.orders.audit(
      `buyer:${email}`,
      "claim.submitted",
      row.id,
      { rail: rail.id, sku: product.sku, tx, sender, sender_proven: senderProven },
      trx,
    );
  });
  return claimReceipt(config, row);
}

/** A wire invoice's company, billing address and currency (ISO 4217, `usd` by default). */
function wireDetails(input: ClaimInput): WireDetails {
  const company = input.company?.trim() || null;
  const billing = input.billing_address?.trim() || null;
  if (!company) throw new Problem(400, "company_required", "A wire invoice needs the company's legal name.");
  if (!billing) throw new Problem(400, "billing_address_required", "A wire invoice needs a billing address.");
  const currency = (input.currency?.trim() || "usd").toLowerCase();
  if (!/^[a-z]{3}$/.test(currency)) {
    throw new Problem(400, "invalid_currency", "currency must be a three-letter ISO 4217 code, e.g. USD or EUR.");
  }
  return { company, billing, currency };
}

/**
 * The wallet that sent a crypto transfer: the chain's answer where it can be read, else the
 * claimant's (canonical) word; proven when the claimant's signature over senderProofMessage(tx, sku)
 * verifies for it. A signature that does not verify is refused (400), never stored.
 */
async function identifySender(
  ctx: ClaimContext,
  chain: SenderChain,
  tx: string,
  sku: string,
  input: ClaimInput,
): Promise<SenderFacts> {
  const { config } = ctx;
  const stated = input.sender?.trim() ? canonicalSender(chain, input.sender.trim()) : undefined;
  const evmClient = baseClient(config);
  const onChain = await senderFromChain(chain, tx, {
    evmClient,
    solanaRpcUrl: config.x402.solanaRpcUrl,
    usdc: config.usdc.base,
    payTo: config.payTo.base,
  });
  const sender = onChain ?? stated ?? null;
  const senderSource = onChain ? "chain" : stated ? "claimant" : null;
  let senderProven = false;
  const signature = input.sender_signature?.trim();
  if (signature) {
    if (!sender) {
      throw new Problem(400, "sender_required", "Name the sending wallet (sender) that made the signature.");
    }
    const message = senderProofMessage(tx, sku);
    if (!(await verifySenderSignature(chain, sender, message, signature, evmClient))) {
      throw new Problem(
        400,
        "invalid_sender_signature",
        `sender_signature is not a signature by ${sender} over: ${message}`,
        {
          sender,
          message,
        },
      );
    }
    senderProven = true;
  }
  return { sender, senderSource, senderProven };
}

import type { Config } from "../config.js";
import { RAIL_IDS, type RailId } from "./matrix/schemas.js";

/**
 * "Configured means it can settle": for every payment rail (and every x402 proof kind), whether
 * the current settings let the service verify a payment and turn it into an order. A pure function
 * of the configuration, and the only place that decides; the catalog, the payments matrix, the
 * 402 `accepts[]`, `/.well-known/x402`, the discovery documents, the pay pages and the start-up
 * warnings all read it.
 *
 * Rules (docs/payments.md, "When is a rail configured"):
 * - x402 proof kinds: Base EIP-3009 needs PAY_TO_BASE + BASE_RPC_URL + a facilitator (our gas key
 *   X402_EVM_FACILITATOR_KEY, or a hosted X402_FACILITATOR_URL); Base transaction hash needs
 *   PAY_TO_BASE + BASE_RPC_URL; Solana partially signed needs PAY_TO_SOLANA + SOLANA_RPC_URL + a
 *   fee payer (X402_SVM_FEE_PAYER_KEY, or X402_FACILITATOR_URL whose /supported supplies one);
 *   Solana fully signed needs PAY_TO_SOLANA + SOLANA_RPC_URL.
 * - x402 rails: what stock x402 clients pay. `x402_base_usdc` = EIP-3009, `x402_solana_usdc` =
 *   partially signed for our fee payer (stock clients need `extra.feePayer`).
 * - Manual crypto: the rail's pay-to address + CONTACT_EMAIL (where claims are answered) +
 *   ADMIN_TOKEN (an operator must be able to approve). Wire/ACH: CONTACT_EMAIL + ADMIN_TOKEN.
 * - Card checkout: STRIPE_SECRET_KEY + STRIPE_WEBHOOK_SECRET. The success page can fulfil with the
 *   key alone, but only while the buyer keeps it open; a buyer who closes the tab, a bank debit that
 *   settles days later, refunds and disputes reach us only through the signed webhook.
 * - Payment links: key + webhook secret + at least one link with its id (PAYMENT_LINK_<SKU> and
 *   PAYMENT_LINK_ID_<SKU>): link purchases are matched to their SKU by the link id, in webhooks.
 * - redirect_link_checkout: never (no provider is integrated).
 * - suite_metered: a rail that takes any amount is configured (an x402 rail or card checkout).
 *
 * Invariant: `configured` ⇔ `missing` is empty. `partial`: a setting that belongs to this rail is
 * given but the rail is still not configured (settings shared by several rails, such as
 * X402_FACILITATOR_URL, CONTACT_EMAIL or the Stripe key for links, do not make a rail partial
 * on their own, so a Solana-only deployment is not told its Base rail is half-configured).
 */

export interface Readiness {
  configured: boolean;
  /** Setting names still needed, e.g. "BASE_RPC_URL", "X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL". */
  missing: string[];
  /** Some of this rail's own settings are given, but not all: worth a start-up warning. */
  partial: boolean;
}

export type X402ProofKind = "evm_eip3009" | "evm_tx" | "svm_partial" | "svm_full";
export const X402_PROOF_KINDS: readonly X402ProofKind[] = ["evm_eip3009", "evm_tx", "svm_partial", "svm_full"];

/** One requirement: its name, whether it is met, and whether a setting owned by this rail is given. */
interface Need {
  name: string;
  met: boolean;
  own: boolean;
}

const set = (v: string | undefined): boolean => v !== undefined && v !== "";

function need(name: string, value: string | undefined, own = true): Need {
  return { name, met: set(value), own: own && set(value) };
}

function assess(needs: Need[]): Readiness {
  const missing = needs.filter((n) => !n.met).map((n) => n.name);
  const configured = missing.length === 0;
  return { configured, missing, partial: !configured && needs.some((n) => n.own) };
}

/** "zrw-pro" → "ZRW_PRO" (the env-name form of a sku). */
export function skuEnvName(sku: string): string {
  return sku.toUpperCase().replace(/-/g, "_");
}

function baseNeeds(config: Config): Need[] {
  return [need("PAY_TO_BASE", config.payTo.base), need("BASE_RPC_URL", config.x402.baseRpcUrl)];
}

function solanaNeeds(config: Config): Need[] {
  return [need("PAY_TO_SOLANA", config.payTo.solana), need("SOLANA_RPC_URL", config.x402.solanaRpcUrl)];
}

/** Whether each x402 proof kind can be verified and settled with these settings. */
export function x402ProofReadiness(config: Config): Record<X402ProofKind, Readiness> {
  const x = config.x402;
  const hosted = set(x.facilitatorUrl);
  return {
    evm_eip3009: assess([
      ...baseNeeds(config),
      {
        name: "X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL",
        met: set(x.evmFacilitatorKey) || hosted,
        own: set(x.evmFacilitatorKey),
      },
    ]),
    evm_tx: assess(baseNeeds(config)),
    svm_partial: assess([
      ...solanaNeeds(config),
      {
        name: "X402_SVM_FEE_PAYER_KEY or X402_FACILITATOR_URL",
        met: set(x.svmFeePayerKey) || hosted,
        own: set(x.svmFeePayerKey),
      },
    ]),
    svm_full: assess(solanaNeeds(config)),
  };
}

function manualNeeds(config: Config): Need[] {
  return [need("CONTACT_EMAIL", config.contactEmail, false), need("ADMIN_TOKEN", config.adminToken, false)];
}

function paymentLinkReadiness(config: Config): Readiness {
  const links = Object.keys(config.paymentLinks).sort();
  const complete = links.filter((sku) => set(config.paymentLinkIds[sku]));
  const linkNeed: Need =
    complete.length > 0
      ? { name: "PAYMENT_LINK_<SKU>", met: true, own: true }
      : links.length > 0
        ? {
            name: links.map((sku) => `PAYMENT_LINK_ID_${skuEnvName(sku)}`).join(" or "),
            met: false,
            own: true,
          }
        : { name: "PAYMENT_LINK_<SKU> and PAYMENT_LINK_ID_<SKU>", met: false, own: false };
  return assess([
    need("STRIPE_SECRET_KEY", config.stripe.secretKey, false),
    need("STRIPE_WEBHOOK_SECRET", config.stripe.webhookSecret, false),
    linkNeed,
  ]);
}

export const NO_REDIRECT_PROVIDER = "a redirect-link provider (none is integrated in this service)";

/** Readiness of every rail of the payments matrix, in the matrix's order. */
export function railReadiness(config: Config): Record<RailId, Readiness> {
  const proofs = x402ProofReadiness(config);
  const card: Readiness = assess([
    need("STRIPE_SECRET_KEY", config.stripe.secretKey),
    need("STRIPE_WEBHOOK_SECRET", config.stripe.webhookSecret),
  ]);
  const x402Base = proofs.evm_eip3009;
  const x402Solana = proofs.svm_partial;
  const anyAmount: [RailId, Readiness][] = [
    ["x402_base_usdc", x402Base],
    ["x402_solana_usdc", x402Solana],
    ["card_checkout", card],
  ];
  const metered = anyAmount.some(([, r]) => r.configured);
  const out: Record<RailId, Readiness> = {
    card_checkout: card,
    card_payment_link: paymentLinkReadiness(config),
    x402_solana_usdc: x402Solana,
    x402_base_usdc: x402Base,
    crypto_manual_solana: assess([need("PAY_TO_SOLANA", config.payTo.solana), ...manualNeeds(config)]),
    crypto_manual_evm: assess([need("PAY_TO_BASE", config.payTo.base), ...manualNeeds(config)]),
    crypto_manual_btc: assess([need("PAY_TO_BTC", config.payTo.btc), ...manualNeeds(config)]),
    redirect_link_checkout: { configured: false, missing: [NO_REDIRECT_PROVIDER], partial: false },
    wire_invoice_ach: assess([need("CONTACT_EMAIL", config.contactEmail), need("ADMIN_TOKEN", config.adminToken)]),
    suite_metered: metered
      ? { configured: true, missing: [], partial: false }
      : {
          configured: false,
          missing: [`one of ${anyAmount.map(([id]) => id).join(", ")} configured`],
          partial: false,
        },
  };
  // keep RAIL_IDS order (the matrix's) for callers that iterate
  return Object.fromEntries(RAIL_IDS.map((id) => [id, out[id]])) as Record<RailId, Readiness>;
}

/** One line per half-configured rail (`partial`), naming the rail and its missing settings. */
export function readinessWarnings(config: Config): { rail: RailId; missing: string[]; message: string }[] {
  return Object.entries(railReadiness(config))
    .filter(([, r]) => r.partial)
    .map(([id, r]) => ({
      rail: id as RailId,
      missing: r.missing,
      message: `payment rail ${id} is half-configured and stays off until these settings are given: ${r.missing.join("; ")}`,
    }));
}

/** Logs one warning per half-configured rail (called once at start-up by the composition root). */
export function warnHalfConfiguredRails(
  config: Config,
  log: { warn: (obj: Record<string, unknown>, msg: string) => void },
): void {
  for (const w of readinessWarnings(config)) log.warn({ rail: w.rail, missing: w.missing }, w.message);
}

/**
 * Problem fields for "no x402 rail can settle" (503 `x402_not_configured`): a detail naming each
 * rail's missing settings, and `missing: { rail: [settings] }`.
 */
export function x402NotConfiguredDetail(config: Config): { detail: string; missing: Record<string, string[]> } {
  const r = railReadiness(config);
  const missing: Record<string, string[]> = {
    x402_base_usdc: r.x402_base_usdc.missing,
    x402_solana_usdc: r.x402_solana_usdc.missing,
  };
  const parts = Object.entries(missing)
    .filter(([, m]) => m.length > 0)
    .map(([id, m]) => `${id} needs ${m.join(", ")}`);
  return {
    detail: `No x402 rail can settle payments on this server, so nothing can be sold to agents: ${parts.join("; ")}.`,
    missing,
  };
}

/**
 * Problem fields for a rail that cannot settle (e.g. 503 `rail_not_configured` of a claim):
 * a detail naming the missing settings, and `missing: { rail: [settings] }`.
 */
export function railNotConfiguredDetail(
  config: Config,
  rail: RailId,
): { detail: string; missing: Record<string, string[]> } {
  const m = railReadiness(config)[rail].missing;
  return {
    detail: `The rail ${rail} is not configured on this server${m.length > 0 ? `: it needs ${m.join(", ")}` : ""}.`,
    missing: { [rail]: m },
  };
}

/** A short human name of each rail (start-up lines, the pages' "cannot take payments yet" notice). */
export const RAIL_LABELS: Record<RailId, string> = {
  card_checkout: "Card checkout (Stripe)",
  card_payment_link: "Card payment links (Stripe)",
  x402_solana_usdc: "x402, USDC on Solana (agents)",
  x402_base_usdc: "x402, USDC on Base (agents)",
  crypto_manual_solana: "Manual transfer on Solana",
  crypto_manual_evm: "Manual transfer on Base / EVM",
  crypto_manual_btc: "Manual Bitcoin transfer",
  redirect_link_checkout: "Redirect-link checkout",
  wire_invoice_ach: "Wire / ACH invoice",
  suite_metered: "Metered suite jobs",
};

/**
 * The rails a buyer can choose (every rail but the two that are not chosen by a buyer:
 * `redirect_link_checkout`, which no provider backs, and `suite_metered`, which is paid through
 * an x402 rail or card checkout), in the matrix's order.
 */
export const BUYER_RAILS: readonly RailId[] = RAIL_IDS.filter(
  (id) => id !== "redirect_link_checkout" && id !== "suite_metered",
);

/** The buyer-facing rails that can settle on this server (empty: nothing can be sold here). */
export function settlingRails(config: Config): RailId[] {
  const r = railReadiness(config);
  return BUYER_RAILS.filter((id) => r[id].configured);
}

/**
 * What `npm start` prints about payments, one line per rail: whether it can settle here and, when
 * not, the settings it still needs (setting names only, never a value). Pure, for the start-up
 * banner and its test. `redirect_link_checkout` says it is not available; `suite_metered` names
 * the rails it is paid through.
 */
export function railSummaryLines(config: Config): string[] {
  const r = railReadiness(config);
  const width = Math.max(...RAIL_IDS.map((id) => id.length));
  const lines = RAIL_IDS.map((id) => {
    const name = id.padEnd(width);
    if (id === "redirect_link_checkout") return `${name}  not available: no redirect-link provider is integrated`;
    if (r[id].configured) {
      if (id === "suite_metered") {
        const via = (["x402_base_usdc", "x402_solana_usdc", "card_checkout"] as const).filter((v) => r[v].configured);
        return `${name}  can settle (paid jobs through ${via.join(", ")})`;
      }
      return `${name}  can settle`;
    }
    return `${name}  cannot settle: needs ${r[id].missing.join("; ")}${r[id].partial ? " (half-configured)" : ""}`;
  });
  const selling = settlingRails(config).length;
  const head =
    selling === 0
      ? "payment rails: none can settle, so nothing can be sold yet (try `npm run sandbox` to see a sale; `labphi doctor` checks real settings)"
      : `payment rails: ${selling} of ${BUYER_RAILS.length} can settle`;
  return [head, ...lines.map((l) => `  ${l}`)];
}

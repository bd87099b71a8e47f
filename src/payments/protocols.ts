import type { Config } from "../config.js";
import type { RailId } from "./matrix/schemas.js";
import { type Readiness, railReadiness } from "./readiness.js";

const X402_RAIL_IDS: readonly RailId[] = ["x402_base_usdc", "x402_solana_usdc"];
const CARD_RAIL_IDS: readonly RailId[] = ["card_checkout", "card_payment_link"];
const MANUAL_RAIL_IDS: readonly RailId[] = [
  "crypto_manual_solana",
  "crypto_manual_evm",
  "crypto_manual_btc",
  "wire_invoice_ach",
];

/**
 * The payment protocols, one entry each, chosen from this table by id or by the rail an order
 * records (as the x402 proof kinds are chosen in x402/proof-kinds/index.ts). Each says who it serves,
 * which order rails it writes, whether this deployment can take money with it, and how a payment it
 * took is given back. Everything that must treat protocols alike (refunds, the 402 edge, the
 * payments matrix, docs) reads this table instead of testing rail names.
 *
 * Both HTTP 402 dialects pay through one proof ledger, so an MPP payment writes the same x402 rail
 * ids as an x402 one (`meta.protocol` on the order says which dialect carried it).
 */

export type ProtocolId = "x402" | "mpp" | "card" | "claims";

/** How a payment is given back: the card processor refunds it, a refund wallet sends it back on chain, or an operator pays by hand. */
export type RefundPath = "processor" | "chain" | "hand";

export interface PaymentProtocol {
  id: ProtocolId;
  audience: "agents" | "humans";
  /** The `orders.rail` values it writes. */
  rails: readonly RailId[];
  /** Whether this deployment can take a payment with it (configured ⇔ it can settle), and what is missing. */
  readiness(config: Config): Readiness;
  refund: RefundPath;
}

/** Any of several rails ready: the protocol is; otherwise what the first still needs. */
function anyOf(config: Config, rails: readonly RailId[]): Readiness {
  const all = railReadiness(config);
  const states = rails.map((r) => all[r]);
  const ready = states.find((r) => r.configured);
  if (ready) return ready;
  return {
    configured: false,
    missing: [...new Set(states.flatMap((r) => r.missing))],
    partial: states.some((r) => r.partial),
  };
}

export const PAYMENT_PROTOCOLS: readonly PaymentProtocol[] = [
  {
    id: "x402",
    audience: "agents",
    rails: X402_RAIL_IDS,
    readiness: (config) => anyOf(config, X402_RAIL_IDS),
    refund: "chain",
  },
  {
    // MPP's evm and solana charge methods settle as the x402 rails do (same asset, payTo, settler).
    id: "mpp",
    audience: "agents",
    rails: [],
    readiness: (config) => anyOf(config, X402_RAIL_IDS),
    refund: "chain",
  },
  {
    id: "card",
    audience: "humans",
    rails: CARD_RAIL_IDS,
    readiness: (config) => anyOf(config, CARD_RAIL_IDS),
    refund: "processor",
  },
  {
    id: "claims",
    audience: "humans",
    rails: MANUAL_RAIL_IDS,
    readiness: (config) => anyOf(config, MANUAL_RAIL_IDS),
    refund: "hand",
  },
];

export function protocol(id: ProtocolId): PaymentProtocol {
  const found = PAYMENT_PROTOCOLS.find((p) => p.id === id);
  if (!found) throw new Error(`no payment protocol ${id}`);
  return found;
}

/** The protocol that wrote an order's rail (x402 for both 402 dialects), or undefined for a rail no protocol owns. */
export function protocolOfRail(rail: string): PaymentProtocol | undefined {
  return PAYMENT_PROTOCOLS.find((p) => (p.rails as readonly string[]).includes(rail));
}

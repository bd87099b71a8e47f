import { z } from "zod";
import { badRequest } from "../../http/problem.js";
import { baseNetworkNames, SOLANA_NETWORK_NAMES } from "./rails.js";

/**
 * Decoding of the payment header (PAYMENT-SIGNATURE or X-PAYMENT) into one of the three
 * proof kinds we accept. Structural checks only (size, base64, JSON, schema, version,
 * scheme, network); every failure is a 400 problem with a stable code.
 */

export const MAX_PAYMENT_HEADER_BYTES = 16 * 1024;

const hex = (bytes: number) => new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`);
const uint = z.union([z.string().regex(/^\d{1,78}$/), z.number().int().nonnegative().transform(String)]);

const eip3009Payload = z.object({
  signature: z.string().regex(/^0x[0-9a-fA-F]+$/),
  authorization: z.object({
    from: z.string().regex(hex(20)),
    to: z.string().regex(hex(20)),
    value: uint,
    validAfter: uint,
    validBefore: uint,
    nonce: z.string().regex(hex(32)),
  }),
});
const evmTxPayload = z.object({
  transaction: z.string().regex(hex(32)),
  /** The token sender's signature over txHashProofMessage() (EIP-191) or its EIP-712 form. */
  signature: z
    .string()
    .regex(/^0x[0-9a-fA-F]{2,4096}$/)
    .optional(),
});
const svmTxPayload = z.object({ transaction: z.string().min(64).max(MAX_PAYMENT_HEADER_BYTES) });

const accepted = z
  .object({
    scheme: z.string(),
    network: z.string(),
    amount: z.string().optional(),
    maxAmountRequired: z.string().optional(),
    asset: z.string().optional(),
    payTo: z.string().optional(),
  })
  .passthrough();

const v1 = z.object({ x402Version: z.literal(1), scheme: z.string(), network: z.string(), payload: z.unknown() });
const v2 = z.object({
  x402Version: z.literal(2),
  accepted,
  payload: z.unknown(),
  resource: z.unknown().optional(),
  extensions: z.unknown().optional(),
});

export type Eip3009Payload = z.infer<typeof eip3009Payload>;

/** Extensions of a v2 payload (never on chain): where the payment-identifier travels. */
type Extensions = Record<string, unknown> | undefined;

export type ParsedProof = (
  | { kind: "evm_eip3009"; chain: "base"; version: 1 | 2; payload: Eip3009Payload; accepted?: z.infer<typeof accepted> }
  | { kind: "evm_tx"; chain: "base"; version: 0 | 1 | 2; txHash: `0x${string}`; signature?: `0x${string}` }
  | { kind: "svm_tx"; chain: "solana"; version: 1 | 2; transaction: string; accepted?: z.infer<typeof accepted> }
) & { extensions?: Extensions };

export interface HeaderInput {
  "payment-signature"?: string | string[] | undefined;
  "x-payment"?: string | string[] | undefined;
}

/** The raw proof from PAYMENT-SIGNATURE (v2) or, failing that, X-PAYMENT. */
export function paymentHeader(headers: HeaderInput): { name: string; value: string } | undefined {
  for (const name of ["payment-signature", "x-payment"] as const) {
    const v = headers[name];
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined && value.trim() !== "") return { name, value: value.trim() };
  }
  return undefined;
}

function chainOf(network: string, baseChainId: number): "base" | "solana" {
  if (baseNetworkNames(baseChainId).includes(network)) return "base";
  if ((SOLANA_NETWORK_NAMES as readonly string[]).includes(network)) return "solana";
  throw badRequest("unsupported_network", `Network "${network.slice(0, 80)}" is not accepted here.`, {
    accepted_networks: [...baseNetworkNames(baseChainId), ...SOLANA_NETWORK_NAMES],
  });
}

export function parsePaymentHeader(raw: string, baseChainId: number): ParsedProof {
  if (Buffer.byteLength(raw) > MAX_PAYMENT_HEADER_BYTES) {
    throw badRequest("payment_header_too_large", `The payment header exceeds ${MAX_PAYMENT_HEADER_BYTES} bytes.`);
  }
  if (hex(32).test(raw))
    return { kind: "evm_tx", chain: "base", version: 0, txHash: raw.toLowerCase() as `0x${string}` };
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) {
    throw badRequest(
      "payment_header_not_base64",
      "The payment header must be base64-encoded JSON (or a 0x transaction hash).",
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(raw.replace(/-/g, "+").replace(/_/g, "/"), "base64").toString("utf8"));
  } catch {
    throw badRequest("payment_header_not_json", "The payment header does not decode to JSON.");
  }
  return parsePaymentPayload(json, baseChainId);
}

/**
 * The same checks for a payment payload that arrives as a JSON value rather than a header (the
 * x402 MCP transport's `_meta["x402/payment"]`): no base64 round trip, the same size limit.
 */
export function parsePaymentPayload(json: unknown, baseChainId: number): ParsedProof {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw badRequest("invalid_payload", "The payment must be a JSON object (an x402 PaymentPayload).");
  }
  if (Buffer.byteLength(JSON.stringify(json)) > (MAX_PAYMENT_HEADER_BYTES / 4) * 3) {
    throw badRequest("payment_header_too_large", `The payment exceeds ${MAX_PAYMENT_HEADER_BYTES} bytes in base64.`);
  }
  const version = (json as { x402Version?: unknown }).x402Version;
  if (version !== 1 && version !== 2) {
    throw badRequest(
      "invalid_x402_version",
      `x402Version must be 1 or 2, got ${JSON.stringify(version ?? null).slice(0, 20)}.`,
    );
  }
  let scheme: string;
  let network: string;
  let payload: unknown;
  let acc: z.infer<typeof accepted> | undefined;
  let extensions: Extensions;
  if (version === 1) {
    const p = v1.safeParse(json);
    if (!p.success)
      throw badRequest("invalid_payload", "x402 v1 payload must be { x402Version, scheme, network, payload }.");
    ({ scheme, network, payload } = p.data);
  } else {
    const p = v2.safeParse(json);
    if (!p.success) throw badRequest("invalid_payload", "x402 v2 payload must be { x402Version, accepted, payload }.");
    acc = p.data.accepted;
    const ext = p.data.extensions;
    if (ext !== undefined && (typeof ext !== "object" || ext === null || Array.isArray(ext))) {
      throw badRequest("invalid_payload", "x402 v2 extensions must be an object.");
    }
    extensions = ext as Extensions;
    scheme = acc.scheme;
    network = acc.network;
    payload = p.data.payload;
  }
  if (scheme !== "exact") {
    throw badRequest("unsupported_scheme", `Scheme "${scheme.slice(0, 40)}" is not accepted; use "exact".`);
  }
  const chain = chainOf(network, baseChainId);
  if (chain === "base") {
    const auth = eip3009Payload.safeParse(payload);
    if (auth.success) {
      return {
        kind: "evm_eip3009",
        chain,
        version,
        payload: auth.data,
        ...(acc ? { accepted: acc } : {}),
        ...(extensions ? { extensions } : {}),
      };
    }
    const tx = evmTxPayload.safeParse(payload);
    if (tx.success)
      return {
        kind: "evm_tx",
        chain,
        version,
        txHash: tx.data.transaction.toLowerCase() as `0x${string}`,
        ...(tx.data.signature ? { signature: tx.data.signature as `0x${string}` } : {}),
        ...(extensions ? { extensions } : {}),
      };
    throw badRequest(
      "invalid_payload",
      "Base payload must be an EIP-3009 { signature, authorization } or { transaction: <0x tx hash>, signature: <sender's signature> }.",
    );
  }
  const tx = svmTxPayload.safeParse(payload);
  if (!tx.success) throw badRequest("invalid_payload", "Solana payload must be { transaction: <base64 transaction> }.");
  return {
    kind: "svm_tx",
    chain,
    version,
    transaction: tx.data.transaction,
    ...(acc ? { accepted: acc } : {}),
    ...(extensions ? { extensions } : {}),
  };
}

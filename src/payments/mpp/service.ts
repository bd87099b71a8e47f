import { Challenge, Credential, evm as mppEvm, PaymentRequest, Receipt } from "mppx";
import { getAddress } from "viem";
import { z } from "zod";
import type { Config } from "../../config.js";
import { badRequest, Problem } from "../../http/problem.js";
import type { PricedItem } from "../../orders/priced-item.js";
import { solanaCluster } from "../networks.js";
import type { ParsedProof } from "../x402/proof.js";
import { MAX_TIMEOUT_SECONDS, USDC_DECIMALS } from "../x402/rails.js";
import { configuredRails } from "../x402/requirements.js";
import type { BuyerSecrets, PurchaseOutcome, X402Service } from "../x402/service.js";
import { TOKEN_PROGRAM } from "../x402/svm.js";

/**
 * MPP (the Machine Payments Protocol, `WWW-Authenticate: Payment`): the second HTTP-402 dialect,
 * beside x402, over the same ledger. Domain only (no HTTP): the challenges of a priced item (the
 * `evm` charge method on Base: an EIP-3009 authorization as mppx implements it; the `solana`
 * charge method: a signed SPL TransferChecked as @solana/mpp implements it), and the verification
 * of a credential into the same `ParsedProof` an x402 header decodes to, so one on-chain transfer
 * buys one item whichever dialect presents it (the ledger's proof key is the payment's, not the
 * dialect's). Wire formats: ./http.ts.
 *
 * Serialization and the HMAC-bound challenge id are mppx's own primitives (Challenge.from with a
 * secretKey, Challenge.verify, Credential.deserialize, Receipt.serialize, evm.challengeHash).
 */

/** How long a challenge may be paid (seconds): x402's maxTimeoutSeconds, so an EIP-3009 authorization signed until `expires` passes the same validBefore bound. */
export const MPP_CHALLENGE_TTL_SECONDS = MAX_TIMEOUT_SECONDS;
/** Larger credentials are refused before decoding (the x402 header bound). */
export const MAX_CREDENTIAL_BYTES = 16 * 1024;

export type MppMethod = "evm" | "solana";
export const MPP_METHODS: readonly MppMethod[] = ["evm", "solana"];

/** What a challenge was issued for (in its HMAC-bound `opaque`): a product sku or a quote id. */
export interface BoundItem {
  kind: "product" | "quote";
  ref: string;
}

export interface ChallengeOptions {
  /** The header the credential must come back in when `Authorization` is taken (a bearer token). */
  header?: "Payment-Authorization" | undefined;
}

const hex = (bytes: number) => new RegExp(`^0x[0-9a-fA-F]{${bytes * 2}}$`);
const atomic = z.string().regex(/^\d{1,78}$/);
const evmPayload = z.object({
  type: z.literal("authorization"),
  from: z.string().regex(hex(20)),
  to: z.string().regex(hex(20)),
  value: atomic,
  validAfter: atomic,
  validBefore: atomic,
  nonce: z.string().regex(hex(32)),
  signature: z.string().regex(/^0x[0-9a-fA-F]{2,1024}$/),
});
const solanaPayload = z.object({
  type: z.string(),
  transaction: z.string().min(64).max(MAX_CREDENTIAL_BYTES).optional(),
  signature: z.string().optional(),
});

export const mppProblem = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new Problem(402, code, detail, extra);

/** A credential whose challenge this service issued (HMAC checked), decoded into a ledger proof. */
export class VerifiedCredential {
  constructor(
    private readonly service: MppService,
    readonly method: MppMethod,
    readonly challenge: Challenge.Challenge,
    readonly proof: ParsedProof,
    readonly bound: BoundItem | undefined,
  ) {}

  /**
   * Pays `item` with this credential through the x402 ledger. A proof the ledger has already seen
   * is answered from it (replay to its buyer, 409 to anyone else, pending): the challenge may have
   * expired since. A new one must be fresh and issued for exactly this item at today's price.
   */
  async buy(
    item: PricedItem,
    input: { email?: string | null | undefined; note?: string | null | undefined },
    secrets: BuyerSecrets = {},
  ): Promise<PurchaseOutcome> {
    return this.service.buy(this, item, input, secrets);
  }
}

export class MppService {
  constructor(
    private readonly config: Config,
    private readonly x402: Pick<X402Service, "itemOfParsedProof" | "buyProof">,
    private readonly secretKey: string,
    /** The clock of challenge expiry (tests move it). */
    public now: () => Date = () => new Date(),
  ) {}

  /** The protection space of every challenge: this service's origin. */
  realm(): string {
    return new URL(this.config.baseUrl).origin;
  }

  /** MPP is offered on the rails x402 can settle (the same settings). */
  configured(): boolean {
    return configuredRails(this.config).length > 0;
  }

  /** The canonical charge request of one method for one item, or undefined when its rail is off. */
  request(method: MppMethod, item: PricedItem): Record<string, unknown> | undefined {
    const rail = configuredRails(this.config).find((r) => r.chain === (method === "evm" ? "base" : "solana"));
    if (!rail) return undefined;
    if (method === "evm") {
      return {
        amount: item.amountUnits,
        currency: getAddress(rail.asset),
        methodDetails: {
          chainId: this.config.x402.baseChainId,
          credentialTypes: ["authorization"],
          decimals: USDC_DECIMALS,
        },
        recipient: getAddress(rail.payTo),
      };
    }
    // No fee payer is offered: the buyer signs the whole transaction (and pays its network fee);
    // this service broadcasts it. (@solana/mpp orders the compute-budget instructions price-first,
    // which the x402 facilitator that co-signs for our fee payer refuses.)
    return {
      amount: item.amountUnits,
      currency: rail.asset,
      methodDetails: {
        decimals: USDC_DECIMALS,
        network: solanaCluster(rail.network) ?? "mainnet-beta",
        tokenProgram: TOKEN_PROGRAM,
      },
      recipient: rail.payTo,
    };
  }

  /** One challenge per configured method for `item` (empty when no rail is configured). */
  challenges(item: PricedItem, opts: ChallengeOptions = {}): Challenge.Challenge[] {
    const expires = new Date(this.now().getTime() + MPP_CHALLENGE_TTL_SECONDS * 1000).toISOString();
    const out: Challenge.Challenge[] = [];
    for (const method of MPP_METHODS) {
      const request = this.request(method, item);
      if (!request) continue;
      out.push(
        Challenge.from({
          realm: this.realm(),
          method,
          intent: "charge",
          request,
          description: asciiOf(item.description),
          expires,
          meta: { item: `${item.kind}:${item.ref}` },
          ...(opts.header ? { header: opts.header } : {}),
          secretKey: this.secretKey,
        }),
      );
    }
    return out;
  }

  /**
   * Decodes a `Payment <credential>` value and checks what needs no price: the challenge id is one
   * this service issued (HMAC over realm, method, intent, request, expires, header and opaque, so no
   * field of it can be changed), the method is offered, the payload decodes to a ledger proof.
   */
  verify(raw: string): VerifiedCredential {
    if (Buffer.byteLength(raw) > MAX_CREDENTIAL_BYTES + 16) {
      throw badRequest("mpp_credential_too_large", `The MPP credential exceeds ${MAX_CREDENTIAL_BYTES} bytes.`);
    }
    let credential: Credential.Credential;
    try {
      credential = Credential.deserialize(raw.trim());
    } catch {
      throw mppProblem(
        "mpp_credential_malformed",
        "The credential must be `Payment <base64url JSON { challenge, payload }>` echoing one of our challenges.",
      );
    }
    const c = credential.challenge;
    if (!Challenge.verify(c, { secretKey: this.secretKey }) || c.realm !== this.realm()) {
      throw mppProblem(
        "mpp_challenge_invalid",
        "This challenge was not issued by this service, or one of its fields (amount, recipient, expiry…) was changed. Pay one of the fresh challenges.",
      );
    }
    if (c.intent !== "charge" || !(MPP_METHODS as readonly string[]).includes(c.method)) {
      throw mppProblem("mpp_method_unsupported", `Only the evm and solana charge methods are accepted here.`);
    }
    const method = c.method as MppMethod;
    const bound = boundOf(c.meta?.item ?? metaOf(c.opaque)?.item);
    return new VerifiedCredential(this, method, c, this.proofOf(method, credential.payload), bound);
  }

  private proofOf(method: MppMethod, payload: unknown): ParsedProof {
    if (method === "evm") {
      const p = evmPayload.safeParse(payload);
      if (!p.success) {
        throw mppProblem(
          "mpp_payload_invalid",
          "The evm payload must be an EIP-3009 authorization { type: authorization, from, to, value, validAfter, validBefore, nonce, signature }.",
        );
      }
      const { signature, type: _t, ...authorization } = p.data;
      return { kind: "evm_eip3009", chain: "base", version: 2, payload: { signature, authorization } };
    }
    const p = solanaPayload.safeParse(payload);
    if (!p.success || (p.data.type === "transaction" && !p.data.transaction)) {
      throw mppProblem("mpp_payload_invalid", 'The solana payload must be { type: "transaction", transaction }.');
    }
    if (p.data.type !== "transaction" || !p.data.transaction) {
      throw mppProblem(
        "mpp_payload_unsupported",
        'Only { type: "transaction" } (a signed transaction this service broadcasts) is accepted; a transaction already sent by the payer is not a proof here.',
      );
    }
    return { kind: "svm_tx", chain: "solana", version: 2, transaction: p.data.transaction };
  }

  /** A new credential may pay `item` only if its challenge is unexpired and was issued for this item at today's price. */
  admit(v: VerifiedCredential, item: PricedItem): void {
    const expires = v.challenge.expires ? Date.parse(v.challenge.expires) : Number.NaN;
    if (!Number.isFinite(expires) || expires <= this.now().getTime()) {
      throw mppProblem("mpp_challenge_expired", "This challenge has expired; pay one of the fresh challenges.", {
        expired_at: v.challenge.expires ?? null,
      });
    }
    const expected = this.request(v.method, item);
    if (!expected) {
      throw mppProblem("mpp_method_unsupported", `The ${v.method} method is not configured here now.`);
    }
    const sameItem = v.bound !== undefined && v.bound.kind === item.kind && v.bound.ref === item.ref;
    if (!sameItem || canonical(expected) !== canonical(v.challenge.request)) {
      throw mppProblem(
        "mpp_challenge_mismatch",
        `This challenge was issued for another item or price; ${item.kind === "product" ? item.sku : `quote ${item.ref}`} costs ${item.amountUnits} atomic USDC units now. Pay one of the fresh challenges.`,
      );
    }
    if (v.proof.kind === "evm_eip3009") {
      const a = v.proof.payload.authorization;
      if (BigInt(a.value) !== BigInt(item.amountUnits)) {
        throw mppProblem(
          "mpp_amount_mismatch",
          `The authorization moves ${a.value} atomic units; this challenge asks exactly ${item.amountUnits}.`,
        );
      }
      if (getAddress(a.to) !== getAddress(String(expected.recipient))) {
        throw mppProblem("mpp_recipient_mismatch", `The authorization must pay ${String(expected.recipient)}.`);
      }
      if (a.nonce.toLowerCase() !== mppEvm.challengeHash(v.challenge).toLowerCase()) {
        throw mppProblem(
          "mpp_nonce_mismatch",
          "The authorization's nonce must be keccak256(challenge id ‖ realm): it binds the transfer to this challenge.",
        );
      }
    }
  }

  async buy(
    v: VerifiedCredential,
    item: PricedItem,
    input: { email?: string | null | undefined; note?: string | null | undefined },
    secrets: BuyerSecrets,
  ): Promise<PurchaseOutcome> {
    const seen = await this.x402.itemOfParsedProof(v.proof);
    if (!seen) this.admit(v, item);
    return this.x402.buyProof(item, { ...input, protocol: "mpp" }, v.proof, secrets);
  }

  /** The receipt of a granted purchase (mppx's Receipt shape). */
  receiptOf(v: VerifiedCredential, transaction: string): Receipt.Receipt {
    return Receipt.from({
      method: v.method,
      reference: transaction,
      status: "success",
      timestamp: this.now().toISOString(),
      ...(v.bound ? { externalId: `${v.bound.kind}:${v.bound.ref}` } : {}),
    });
  }

  /** The `Payment-Receipt` value of a granted purchase (base64url JSON). */
  receipt(v: VerifiedCredential, transaction: string): string {
    return Receipt.serialize(this.receiptOf(v, transaction));
  }

  /**
   * A credential as MPP's MCP transport carries it (`_meta["org.paymentauth/credential"]`: the
   * decoded `{ challenge, payload }` object), checked as `verify` checks the HTTP form.
   */
  verifyObject(value: unknown): VerifiedCredential {
    let raw: string;
    try {
      if (typeof value === "string") raw = value.startsWith("Payment ") ? value : `Payment ${value}`;
      else raw = Credential.serialize(value as Credential.Credential);
    } catch {
      throw mppProblem(
        "mpp_credential_malformed",
        "The credential must be an object { challenge, payload } echoing one of our challenges.",
      );
    }
    return this.verify(raw);
  }
}

/** The `opaque` of an echoed challenge (base64url JSON; the HMAC already covers it). */
function metaOf(opaque: string | undefined): Record<string, string> | undefined {
  if (!opaque) return undefined;
  try {
    const v = PaymentRequest.deserialize(opaque) as unknown;
    return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, string>) : undefined;
  } catch {
    return undefined;
  }
}

function boundOf(item: unknown): BoundItem | undefined {
  const m = typeof item === "string" ? /^(product|quote):(.{1,100})$/.exec(item) : null;
  return m?.[1] && m[2] ? { kind: m[1] as BoundItem["kind"], ref: m[2] } : undefined;
}

/** JSON with sorted keys: two requests are the same when their canonical forms are. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

/** Header parameters are Latin-1: descriptions go out in plain ASCII. */
function asciiOf(s: string): string {
  return s
    .replace(/[\u2012-\u2015]/g, "-")
    .replace(/[^\x20-\x7e]/g, "")
    .slice(0, 300);
}

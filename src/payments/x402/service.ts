import { createHash } from "node:crypto";
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import type { FastifyBaseLogger } from "fastify";
import type { Kysely } from "kysely";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { isUniqueViolation, nowIso } from "../../db/database.js";
import type { Database } from "../../db/schema.js";
import { logRef, safeError } from "../../http/logger.js";
import { badRequest, conflict, Problem, unavailable } from "../../http/problem.js";
import type { OrderService, PaymentRefInput } from "../../orders/service.js";
import type { OrderRow } from "../../orders/tables.js";
import { x402NotConfiguredDetail } from "../readiness.js";
import { type BuyerKey, buyerKey, paymentIdentifierDeclaration } from "./buyer.js";
import { authorizationOutcome, balanceOf, checkTransferTx, precheckEip3009, type Rejection } from "./evm.js";
import { type Eip3009Payload, type ParsedProof, parsePaymentHeader } from "./proof.js";
import { centsToAtomic, MAX_TIMEOUT_SECONDS, SOLANA_MAINNET_CAIP2, type X402Rail } from "./rails.js";
import { type AcceptEntry, acceptEntry, configuredRails, type V2Requirements, v2Requirements } from "./requirements.js";
import { Settlement, type SettleOutcome } from "./settlement.js";
import { proofStore } from "./store.js";
import {
  broadcastAndConfirm,
  checkSvmTransaction,
  confirmSignature,
  expectedSignature,
  signatureStatus,
  svmMessageHash,
} from "./svm.js";
import type { PaymentProofRow, ProofState } from "./tables.js";
import { type TxHashProofSubject, txHashProofRequest, verifyTxHashSignature } from "./tx-hash-proof.js";

/**
 * Agent purchases over x402: challenge, proof checks, settlement, exactly-once grant,
 * pending outcomes and reconciliation. Orders are created only through OrderService.grant,
 * inside the same transaction that marks the proof settled and granted.
 */

export interface PurchaseRequest {
  sku?: string | null | undefined;
  email?: string | null | undefined;
  note?: string | null | undefined;
}

/** Secrets that travel beside the proof (never on chain): they say who the buyer is. */
export interface BuyerSecrets {
  /** The `Idempotency-Key` header (the payment-identifier extension travels inside the proof). */
  idempotencyKey?: string | undefined;
}

/** Where a buyer who lost the answer recovers its orders by wallet signature. */
export const RECOVERY_PATH = "/api/orders/recover";

export interface Challenge {
  body: {
    x402Version: 1;
    error: string;
    accepts: AcceptEntry[];
    type: string;
    title: string;
    status: 402;
    code: string;
    detail: string;
  };
  headers: Record<string, string>;
}

export interface Purchase {
  body: {
    order_id: string;
    access_url: string;
    sku: string;
    amount_usd: string;
    rail: string;
    transaction: string;
  };
  headers: Record<string, string>;
  /** false when this was an idempotent replay of an already granted proof. */
  created: boolean;
}

export interface Pending {
  body: {
    type: string;
    title: string;
    status: 202;
    code: string;
    detail: string;
    proof_state: string;
    retry_after: number;
  };
  headers: Record<string, string>;
}

export type PurchaseOutcome =
  | { kind: "challenge"; challenge: Challenge }
  | { kind: "granted"; purchase: Purchase }
  | { kind: "pending"; pending: Pending };

const RETRY_AFTER_SECONDS = 5;
const AGENT_NOTE = /^agent:([A-Za-z0-9._:@-]{1,200})$/;

interface Ctx {
  product: Product;
  rail: X402Rail & { payTo: string };
  requirements: V2Requirements;
  request: { email: string | null; note: string | null; agent_id: string | null };
}

export interface X402TestHooks {
  /** Runs after a successful settlement, before the order is written (crash simulation). */
  afterSettle?: (proofKey: string) => Promise<void>;
}

/** x402 `bazaar` discovery extension: how to call the paid route (clients echo it). */
function bazaarExtension(sku: string) {
  return {
    info: {
      input: { type: "http", method: "POST", bodyType: "json", body: { sku } },
      output: {
        type: "json",
        example: {
          order_id: "ord_…",
          access_url: "https://…/access/…",
          sku,
          amount_usd: "1.00",
          rail: "x402_base_usdc",
          transaction: "0x…",
        },
      },
    },
    schema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      properties: {
        input: {
          type: "object",
          properties: {
            type: { const: "http" },
            method: { const: "POST" },
            bodyType: { const: "json" },
            body: {
              type: "object",
              properties: {
                sku: { type: "string" },
                email: { type: "string" },
                note: { type: "string", maxLength: 500 },
              },
              required: ["sku"],
            },
          },
          required: ["type", "method"],
        },
        output: { type: "object" },
      },
      required: ["input"],
    },
  };
}

export class X402Service {
  readonly settlement: Settlement;
  readonly hooks: X402TestHooks = {};
  private timer: NodeJS.Timeout | undefined;
  private reconciling: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly config: Config,
    private readonly catalog: Catalog,
    private readonly orders: OrderService,
    private readonly log: FastifyBaseLogger,
  ) {
    this.settlement = new Settlement(config);
  }

  /** Chain-id check (throws StartupError on a mismatch), facilitator set-up. */
  async init(): Promise<void> {
    await this.settlement.init();
  }

  /** Start-up reconciliation, then a periodic pass every `everyMs` (0 = none). */
  async start(everyMs = 30_000): Promise<void> {
    // Start-up waits for the reconciliation pass, but at most 15 s (a slow RPC must not keep the
    // service down); the pass then finishes in the background.
    const pass = this.reconcile({ startup: true }).catch((err: unknown) => {
      this.log.error({ err: safeError(err) }, "x402 start-up reconciliation failed");
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([pass, new Promise<void>((r) => (timer = setTimeout(r, 15_000)))]);
    clearTimeout(timer);
    if (everyMs > 0) {
      this.timer = setInterval(() => {
        this.reconcile({ startup: false }).catch((err: unknown) => {
          this.log.error({ err: safeError(err) }, "x402 reconciliation pass failed");
        });
      }, everyMs);
      this.timer.unref();
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.reconciling?.catch(() => {});
  }

  configured(): boolean {
    return configuredRails(this.config).length > 0;
  }

  private resourceUrl(): string {
    return `${this.config.baseUrl}/api/x402-products`;
  }

  /** The 402 challenge for one product, or catalog-wide (every SKU on every rail) without one. */
  challenge(product: Product | undefined, error?: { code: string; detail: string }): Challenge {
    const rails = configuredRails(this.config);
    if (rails.length === 0) throw notConfigured(this.config);
    const feePayer = this.settlement.feePayer();
    const products = product ? [product] : this.catalog.list();
    const ctx = { config: this.config, feePayer, resource: this.resourceUrl() };
    const accepts: AcceptEntry[] = [];
    const v2: V2Requirements[] = [];
    const headerProduct = product ?? [...products].sort((x, y) => x.amountCents - y.amountCents)[0];
    for (const p of products) {
      for (const rail of rails) {
        const entry = acceptEntry(rail, p, ctx);
        if (!product) {
          entry.description = `Send { "sku": "${p.sku}" } with this payment. ${entry.description}`;
          entry.outputSchema = {
            input: { type: "http", method: "POST", discoverable: true, bodyType: "json", body: { sku: p.sku } },
          };
        }
        accepts.push(entry);
        // The header stays small (proxies often cap response headers at 4–8 KiB): for the
        // catalog-wide challenge it carries only the cheapest product; the body lists them all.
        if (p === headerProduct) v2.push(v2Requirements(rail, entry.maxAmountRequired, feePayer));
      }
    }
    const code = error?.code ?? "payment_required";
    const detail =
      error?.detail ??
      (product
        ? `Pay ${product.amountUsd} USD (${centsToAtomic(product.amountCents)} atomic USDC units) on one of the accepted rails, then repeat this request with the proof in PAYMENT-SIGNATURE or X-PAYMENT.`
        : 'Send { "sku": "<sku or alias>" } to get the challenge for one product; every product and rail is listed in accepts.');
    const paymentRequired = {
      x402Version: 2,
      error: code,
      resource: {
        url: this.resourceUrl(),
        description: product ? `${product.name} (${product.sku})` : "Lab Phi catalog: POST { sku } to buy one product",
        mimeType: "application/json",
      },
      accepts: v2 as unknown as PaymentRequirements[],
      extensions: {
        bazaar: bazaarExtension(headerProduct?.sku ?? "gao-entry"),
        // Send an id with the payment (or an Idempotency-Key header): a replay of a settled proof
        // is answered with its order only when it carries the same one.
        "payment-identifier": paymentIdentifierDeclaration(),
      },
    };
    return {
      body: {
        x402Version: 1,
        error: code,
        accepts,
        type: `https://labphi.dev/problems/${code}`,
        title: "Payment Required",
        status: 402,
        code,
        detail,
      },
      headers: {
        "PAYMENT-REQUIRED": encodePaymentRequiredHeader(paymentRequired as never),
        "Cache-Control": "no-store",
      },
    };
  }

  /** A 402 refusal carrying the reason and the (unchanged) challenge. */
  private refusal(product: Product, r: Rejection): Problem {
    const c = this.challenge(product, { code: r.reason, detail: r.detail });
    const { type: _t, title: _ti, status: _s, code: _c, detail: _d, ...x402 } = c.body;
    return new Problem(402, r.reason, r.detail, x402, c.headers);
  }

  async purchase(
    input: PurchaseRequest,
    header: string | undefined,
    secrets: BuyerSecrets = {},
  ): Promise<PurchaseOutcome> {
    if (header === undefined) {
      const product = input.sku ? this.catalog.resolve(input.sku) : undefined;
      return { kind: "challenge", challenge: this.challenge(product) };
    }
    if (!input.sku) throw badRequest("sku_required", 'The body must name the product: { "sku": "<sku or alias>" }.');
    const product = this.catalog.resolve(input.sku);
    // Decoding is local: a malformed proof gets its 400 whatever is configured.
    const proof = parsePaymentHeader(header, this.config.x402.baseChainId);
    const buyer = buyerKey(proof, secrets.idempotencyKey);
    if (!this.configured()) throw notConfigured(this.config);
    const rail = configuredRails(this.config).find((r) => r.chain === proof.chain);
    if (!rail) {
      throw badRequest(
        "rail_not_configured",
        `The ${proof.chain} rail is not configured here; pay on one of the rails in accepts.`,
      );
    }
    await this.settlement.refresh();
    const email = input.email ?? null;
    const note = input.note ?? null;
    const agent = note ? AGENT_NOTE.exec(note) : null;
    const ctx: Ctx = {
      product,
      rail,
      requirements: v2Requirements(rail, centsToAtomic(product.amountCents), this.settlement.feePayer()),
      request: { email, note, agent_id: agent?.[1] ?? null },
    };
    const fingerprint = createHash("sha256")
      .update(JSON.stringify([product.sku, email, note]))
      .digest("hex");
    // A proof seen before is answered from the ledger first (replay, 409, in progress), before
    // any check that depends on this request's price.
    const seen = await this.seenBefore(proof);
    if (seen && (seen.request_fingerprint !== fingerprint || seen.state !== "failed")) {
      return this.existing({ ...seen, request_fingerprint: fingerprint }, product, buyer);
    }
    const prepared = await this.prepare(proof, ctx);
    if ("pending" in prepared) return { kind: "pending", pending: prepared.pending };
    if ("existing" in prepared)
      return this.existing({ ...prepared.existing, request_fingerprint: fingerprint }, product, buyer);
    if (buyer) {
      const holder = await proofStore.byBuyerKey(this.db, buyer.hash);
      if (holder && holder.proof_key !== prepared.proofKey) throw identifierReused();
    }
    const at = nowIso();
    const row: PaymentProofRow = {
      proof_key: prepared.proofKey,
      kind: proof.kind,
      rail: rail.id,
      network: ctx.requirements.network,
      sku: product.sku,
      amount_cents: product.amountCents,
      amount_units: ctx.requirements.amount,
      payer: prepared.payer,
      request_fingerprint: fingerprint,
      request: JSON.stringify(ctx.request),
      state: "reserved",
      payload: JSON.stringify(prepared.payload),
      requirements: JSON.stringify(ctx.requirements),
      expected_tx: prepared.expectedTx,
      settlement_tx: null,
      order_id: null,
      settle_response: null,
      error_reason: null,
      error_detail: null,
      attempts: 0,
      created_at: at,
      updated_at: at,
      settled_at: null,
      buyer_key_hash: buyer?.hash ?? null,
      item_kind: "product",
      item_ref: product.sku,
      resource: this.resourceUrl(),
    };
    let won: boolean;
    try {
      won = await proofStore.reserve(this.db, row);
    } catch (err) {
      if (isUniqueViolation(err)) throw identifierReused();
      throw err;
    }
    if (!won) return this.existing(row, product, buyer);
    // A transaction known before settlement (the buyer's own Base transfer, a Solana transaction
    // signature) is held for this proof at once: no other rail or proof can redeem it meanwhile.
    if (prepared.expectedTx) {
      const held = await this.orders.holdPayment(row.proof_key, row.rail, this.paymentOf(row, prepared.expectedTx));
      if (!held) {
        await proofStore.transition(this.db, row.proof_key, ["reserved"], "failed", {
          error_reason: "tx_already_used",
          error_detail: "The transaction already paid for another order.",
        });
        throw conflict(
          "tx_already_used",
          "This on-chain payment already paid for another order (or is being redeemed).",
        );
      }
    }
    return this.settleAndGrant(row, product, "live");
  }

  /** The order core's reference of a proof's on-chain payment. */
  private paymentOf(row: PaymentProofRow, tx: string, payer?: string | null): PaymentRefInput {
    return { chain: row.rail === "x402_solana_usdc" ? "solana" : "evm", tx, payer: payer || row.payer };
  }

  /** The ledger row of a proof, found from the header alone (no chain access). */
  private async seenBefore(proof: ParsedProof): Promise<PaymentProofRow | undefined> {
    const chainId = this.config.x402.baseChainId;
    if (proof.kind === "evm_eip3009") {
      const a = proof.payload.authorization;
      const key = `evm:${chainId}:${this.config.usdc.base.toLowerCase()}:${a.from.toLowerCase()}:${a.nonce.toLowerCase()}`;
      return proofStore.get(this.db, key);
    }
    if (proof.kind === "evm_tx") return proofStore.byTxHashProof(this.db, proof.txHash);
    const hash = svmMessageHash(proof.transaction);
    return hash ? proofStore.get(this.db, `svm:${SOLANA_MAINNET_CAIP2.slice(7)}:${hash}`) : undefined;
  }

  /** Kind-specific local checks; returns the proof key and what to store, or a pending answer. */
  private async prepare(
    proof: ParsedProof,
    ctx: Ctx,
  ): Promise<
    | { proofKey: string; payer: string | null; payload: unknown; expectedTx: string | null }
    | { pending: Pending }
    | { existing: PaymentProofRow }
  > {
    const { product, requirements: req } = ctx;
    const chainId = this.config.x402.baseChainId;
    const need = (kind: Parameters<Settlement["unavailable"]>[0]) => {
      const why = this.settlement.unavailable(kind);
      if (why) {
        throw unavailable(
          "settlement_unavailable",
          `Payments on this rail cannot be settled right now: ${why}. Nothing was charged; retry later.`,
          {
            retry_after: 30,
          },
        );
      }
    };
    if (proof.kind === "evm_eip3009") {
      // Local checks first: a proof that can never succeed gets its 4xx even while settlement is down.
      const rejection = await precheckEip3009(proof.payload, req, chainId, proof.accepted, MAX_TIMEOUT_SECONDS);
      if (rejection) throw this.refusal(product, rejection);
      need("evm_eip3009");
      const client = this.settlement.evmClient;
      if (client) {
        const balance = await balanceOf(client, req.asset, proof.payload.authorization.from).catch(() => undefined);
        if (balance !== undefined && balance < BigInt(req.amount)) {
          throw this.refusal(product, {
            reason: "insufficient_funds",
            detail: `The payer holds ${balance} atomic units, less than the price ${req.amount}.`,
          });
        }
      }
      const a = proof.payload.authorization;
      return {
        proofKey: `evm:${chainId}:${req.asset.toLowerCase()}:${a.from.toLowerCase()}:${a.nonce.toLowerCase()}`,
        payer: a.from.toLowerCase(),
        payload: { x402Version: 2, accepted: req, payload: proof.payload },
        expectedTx: null,
      };
    }
    if (proof.kind === "evm_tx") {
      const subject: TxHashProofSubject = {
        hash: proof.txHash,
        chainId,
        resource: this.resourceUrl(),
        item: product.sku,
      };
      // A transaction hash is public: only its sender, signing for this purchase, may redeem it.
      if (!proof.signature) throw this.signatureRequired(product, subject);
      // Our own settlements (EIP-3009, Solana), pending or done, are never someone's transfer proof.
      const own = await proofStore.ownSettlement(this.db, proof.txHash);
      if (own) {
        throw conflict(
          "own_settlement_transaction",
          "This transaction is one of this service's own settlements of an x402 payment; it belongs to that payment's buyer and is not a proof of payment.",
        );
      }
      need("evm_tx");
      const client = this.settlement.evmClient;
      if (!client) throw unavailable("settlement_unavailable", "BASE_RPC_URL is not configured.");
      let check: Awaited<ReturnType<typeof checkTransferTx>>;
      let signed = false;
      try {
        check = await checkTransferTx(client, {
          hash: proof.txHash,
          asset: req.asset,
          payTo: req.payTo,
          amount: req.amount,
          minConfirmations: this.config.x402.minConfirmations,
          maxAgeSeconds: this.config.x402.txMaxAgeSeconds,
          plainTransferOnly: true,
        });
        if (check.status === "ok") signed = await verifyTxHashSignature(client, check.from, subject, proof.signature);
      } catch (err) {
        throw unavailable(
          "settlement_unavailable",
          `The Base RPC could not be read: ${(err as Error).message.split("\n")[0]}`,
        );
      }
      if (check.status === "pending")
        return { pending: this.pendingAnswer("transaction_not_confirmed", check.detail, "unconfirmed") };
      if (check.status === "failed") throw this.refusal(product, check);
      if (!signed) {
        throw this.signatureRequired(product, subject, {
          reason: "invalid_transaction_proof_signature",
          detail: `The signature is not by the transfer's sender ${check.from}. The sender signs the statement below (EIP-191 or EIP-712).`,
        });
      }
      return {
        proofKey: `evm:${chainId}:tx:${proof.txHash}:${check.logIndex}`,
        payer: check.from.toLowerCase(),
        payload: { txHash: proof.txHash, logIndex: check.logIndex },
        expectedTx: proof.txHash,
      };
    }
    const checked = await checkSvmTransaction(proof.transaction, req, this.settlement.feePayer(), {
      maxComputeUnits: this.config.x402.svmMaxComputeUnits,
      maxComputeUnitPrice: this.config.x402.svmMaxComputeUnitPrice,
    });
    if ("rejection" in checked) throw this.refusal(product, checked.rejection);
    need(checked.tx.fullySigned ? "svm_full" : "svm_partial");
    const expectedTx = await expectedSignature(checked.tx, this.settlement.svmFeePayer);
    const proofKey = `svm:${SOLANA_MAINNET_CAIP2.slice(7)}:${checked.tx.messageHash}`;
    if (checked.tx.fullySigned && expectedTx) {
      // Only transactions we send: a signature the cluster already knows was sent by someone else
      // (read back from the chain, or the payer's own broadcast). Ours in flight has a ledger row.
      const url = this.config.x402.solanaRpcUrl;
      let known: Awaited<ReturnType<typeof signatureStatus>>;
      try {
        known = url ? await signatureStatus(url, expectedTx, this.settlement.rpcTimeoutMs) : null;
      } catch (err) {
        throw unavailable(
          "settlement_unavailable",
          `The Solana RPC could not be read: ${(err as Error).message.split("\n")[0]}. Nothing was charged; retry later.`,
          { retry_after: 30 },
        );
      }
      if (known) {
        const mine = await proofStore.get(this.db, proofKey);
        if (mine) return { existing: mine };
        throw conflict(
          "transaction_already_submitted",
          "This transaction is already known to the Solana network: a proof must be a signed transaction that only this service submits. Sign a new transfer and send it here unsent.",
        );
      }
    }
    return {
      proofKey,
      payer: checked.tx.payer,
      payload: {
        x402Version: 2,
        accepted: req,
        payload: { transaction: proof.transaction },
        fullySigned: checked.tx.fullySigned,
      },
      expectedTx: expectedTx ?? null,
    };
  }

  private pendingAnswer(code: string, detail: string, state: string): Pending {
    return {
      body: {
        type: `https://labphi.dev/problems/${code}`,
        title: "Accepted",
        status: 202,
        code,
        detail: `${detail} Retry the same request with the SAME proof after ${RETRY_AFTER_SECONDS} seconds; do not pay again.`,
        proof_state: state,
        retry_after: RETRY_AFTER_SECONDS,
      },
      headers: { "Retry-After": String(RETRY_AFTER_SECONDS), "Cache-Control": "no-store" },
    };
  }

  /** 402 for a transaction-hash proof without (or with a wrong) signature: says what to sign. */
  private signatureRequired(product: Product, subject: TxHashProofSubject, why?: Rejection): Problem {
    const c = this.challenge(product, {
      code: why?.reason ?? "transaction_proof_signature_required",
      detail:
        why?.detail ??
        "A transaction hash is public, so it proves nothing on its own: the wallet that sent the USDC transfer must sign the statement in `sign` (EIP-191 personal_sign of eip191_message, or the EIP-712 typed data) and send { transaction, signature } as the payload.",
    });
    const { type: _t, title: _ti, status: _s, code: _c, detail: _d, ...x402 } = c.body;
    return new Problem(402, c.body.code, c.body.detail, { ...x402, sign: txHashProofRequest(subject) }, c.headers);
  }

  /** 409 for a settled proof replayed without the buyer's secret: no order data at all. */
  private redeemed(row: PaymentProofRow): Problem {
    return conflict(
      "payment_already_redeemed",
      `This payment was already redeemed, and its order is given only to its buyer. Repeat the request with the payment identifier (x402 payment-identifier extension) or Idempotency-Key sent with the first attempt, or recover the order by signing with the paying wallet at POST ${this.config.baseUrl}${RECOVERY_PATH}/challenge.`,
      { proof_state: row.state, recover: `${this.config.baseUrl}${RECOVERY_PATH}/challenge` },
    );
  }

  private isBuyer(row: PaymentProofRow, buyer: BuyerKey | undefined): boolean {
    return row.buyer_key_hash !== null && buyer !== undefined && row.buyer_key_hash === buyer.hash;
  }

  /** The proof key was already reserved: replay, conflict, retry or in-progress. */
  private async existing(
    mine: PaymentProofRow,
    product: Product,
    buyer: BuyerKey | undefined,
  ): Promise<PurchaseOutcome> {
    const row = await proofStore.get(this.db, mine.proof_key);
    if (!row) throw new Error("x402: reserved proof vanished");
    if (row.request_fingerprint !== mine.request_fingerprint) {
      throw conflict(
        "payment_proof_already_used",
        "This payment proof was already used for another purchase (different sku or body); a proof buys one order only.",
        { proof_state: row.state },
      );
    }
    switch (row.state) {
      case "granted":
        if (!this.isBuyer(row, buyer)) throw this.redeemed(row);
        return { kind: "granted", purchase: await this.replay(row) };
      case "failed": {
        // A failed proof may be retried (e.g. after a settlement outage) by its buyer, or, when it
        // carried no buyer secret, as long as it never reached the chain (so nobody else can hold it).
        const mayRetry = row.buyer_key_hash
          ? this.isBuyer(row, buyer)
          : !(await proofStore.everBroadcast(this.db, row.proof_key));
        if (!mayRetry) {
          throw conflict(
            "payment_proof_already_used",
            "This payment proof failed earlier and can be retried only with the payment identifier or Idempotency-Key of its first attempt. Sign a new payment instead.",
            { proof_state: row.state },
          );
        }
        // Retry of a failed proof with the same body (e.g. after a settlement outage): claim it again.
        const claimed = await proofStore.transition(this.db, row.proof_key, ["failed"], "reserved", {
          error_reason: null,
          error_detail: null,
          requirements: mine.requirements,
          payload: mine.payload,
          expected_tx: mine.expected_tx ?? row.expected_tx,
        });
        if (!claimed)
          return {
            kind: "pending",
            pending: this.pendingAnswer("payment_in_progress", "This payment is being settled.", row.state),
          };
        const fresh = await proofStore.get(this.db, row.proof_key);
        if (!fresh) throw new Error("x402: proof vanished");
        return this.settleAndGrant(fresh, product, "live");
      }
      case "pending_unknown": {
        await this.reconcileRow(row, "retry");
        const after = await proofStore.get(this.db, row.proof_key);
        if (after?.state === "granted") {
          if (!this.isBuyer(after, buyer)) throw this.redeemed(after);
          return { kind: "granted", purchase: await this.replay(after) };
        }
        if (after?.state === "failed") {
          throw this.refusal(product, {
            reason: after.error_reason ?? "settlement_failed",
            detail: after.error_detail ?? "Settlement failed.",
          });
        }
        return {
          kind: "pending",
          pending: this.pendingAnswer(
            "payment_settlement_pending",
            "The settlement outcome is not known yet.",
            after?.state ?? row.state,
          ),
        };
      }
      default:
        return {
          kind: "pending",
          pending: this.pendingAnswer(
            "payment_in_progress",
            "This payment proof is being settled by another request.",
            row.state,
          ),
        };
    }
  }

  private async replay(row: PaymentProofRow): Promise<Purchase> {
    if (!row.order_id) throw new Error("x402: granted proof without order");
    const order = await this.orders.get(row.order_id);
    const response = row.settle_response ? (JSON.parse(row.settle_response) as SettleResponse) : undefined;
    return this.purchaseAnswer(order, row, response, false);
  }

  private purchaseAnswer(
    order: OrderRow,
    row: PaymentProofRow,
    response: SettleResponse | undefined,
    created: boolean,
  ): Purchase {
    const settle: SettleResponse = response ?? {
      success: true,
      transaction: order.transaction_ref ?? "",
      network: row.network as never,
      payer: row.payer ?? "",
    };
    const encoded = encodePaymentResponseHeader(settle);
    return {
      body: {
        order_id: order.id,
        access_url: this.orders.accessUrl(order.id),
        sku: order.sku,
        amount_usd: this.orders.view(order).amount_usd,
        rail: order.rail,
        transaction: order.transaction_ref ?? "",
      },
      headers: {
        "PAYMENT-RESPONSE": encoded,
        "X-PAYMENT-RESPONSE": encoded,
        "Cache-Control": "private, no-store",
      },
      created,
    };
  }

  /** Runs the settlement of a reserved (or reclaimed) proof and grants on success. */
  private async settleAndGrant(
    row: PaymentProofRow,
    product: Product,
    source: "live" | "reconcile" | "retry",
  ): Promise<PurchaseOutcome> {
    const claimed = await proofStore.transition(this.db, row.proof_key, ["reserved"], "settling");
    if (!claimed) {
      return {
        kind: "pending",
        pending: this.pendingAnswer("payment_in_progress", "This payment is being settled.", "settling"),
      };
    }
    await proofStore.bumpAttempts(this.db, row.proof_key);
    const outcome = await this.runSettlement(row);
    return this.applyOutcome(row, product, outcome, source);
  }

  private async runSettlement(row: PaymentProofRow): Promise<SettleOutcome> {
    const payload = JSON.parse(row.payload) as Record<string, unknown>;
    const requirements = JSON.parse(row.requirements) as PaymentRequirements;
    if (row.kind === "evm_tx") {
      return {
        status: "success",
        transaction: row.expected_tx ?? "",
        payer: row.payer ?? "",
        response: {
          success: true,
          transaction: row.expected_tx ?? "",
          network: row.network as never,
          payer: row.payer ?? "",
        },
      };
    }
    if (row.kind === "svm_tx" && payload.fullySigned === true) {
      const url = this.config.x402.solanaRpcUrl;
      if (!url || !row.expected_tx) return { status: "unavailable", detail: "SOLANA_RPC_URL is not configured" };
      const wire = (payload.payload as { transaction: string }).transaction;
      const b = await broadcastAndConfirm(url, wire, row.expected_tx, this.settlement.settleTimeoutMs).catch(
        (err: unknown) => ({
          status: "pending" as const,
          signature: row.expected_tx ?? "",
          detail: String((err as Error).message),
        }),
      );
      if (b.status === "success") {
        return {
          status: "success",
          transaction: b.signature,
          payer: row.payer ?? "",
          response: { success: true, transaction: b.signature, network: row.network as never, payer: row.payer ?? "" },
        };
      }
      if (b.status === "failed")
        return {
          status: "failed",
          reason: b.reason,
          detail: b.detail,
          ...(b.signature ? { transaction: b.signature } : {}),
        };
      return { status: "pending", transaction: b.signature, detail: b.detail };
    }
    const p: PaymentPayload = {
      x402Version: 2,
      accepted: payload.accepted as PaymentRequirements,
      payload: payload.payload as Record<string, unknown>,
    };
    return this.settlement.settleViaFacilitator(p, requirements);
  }

  private async applyOutcome(
    row: PaymentProofRow,
    product: Product,
    outcome: SettleOutcome,
    source: "live" | "reconcile" | "retry",
  ): Promise<PurchaseOutcome> {
    let o = outcome;
    // A "failed" EIP-3009 settlement whose nonce is nevertheless used on chain was paid: recover it.
    if (o.status === "failed" && row.kind === "evm_eip3009") {
      const recovered = await this.evmOnChain(row).catch(() => undefined);
      if (recovered?.status === "success") o = recovered;
    }
    await proofStore.recordAttempt(this.db, {
      proof_key: row.proof_key,
      source,
      outcome: o.status,
      transaction: "transaction" in o ? (o.transaction ?? null) : null,
      reason: o.status === "failed" ? o.reason : null,
      detail: o.status === "success" ? null : o.detail,
    });
    switch (o.status) {
      case "success": {
        if (this.hooks.afterSettle) await this.hooks.afterSettle(row.proof_key);
        const purchase = await this.finalize(row, o.transaction, o.payer, o.response);
        return { kind: "granted", purchase };
      }
      case "failed":
        await proofStore.transition(this.db, row.proof_key, ["settling"], "failed", {
          error_reason: o.reason,
          error_detail: o.detail,
          ...(o.transaction ? { expected_tx: o.transaction } : {}),
        });
        for (const tx of new Set([row.expected_tx, o.transaction])) {
          if (tx) await this.orders.releasePayment(row.proof_key, this.paymentOf(row, tx));
        }
        throw this.refusal(product, { reason: o.reason, detail: o.detail });
      case "pending":
        await proofStore.transition(this.db, row.proof_key, ["settling"], "pending_unknown", {
          error_reason: "settlement_pending",
          error_detail: o.detail,
          ...(o.transaction ? { expected_tx: o.transaction } : {}),
        });
        // The settlement transaction is public from now on: hold it for this proof.
        if (o.transaction) await this.orders.holdPayment(row.proof_key, row.rail, this.paymentOf(row, o.transaction));
        this.log.warn(
          { proof: logRef(row.proof_key), detail: safeError(new Error(o.detail)).message },
          "x402 settlement outcome unknown; kept for reconciliation",
        );
        return {
          kind: "pending",
          pending: this.pendingAnswer(
            "payment_settlement_pending",
            "The payment was submitted but its settlement is not confirmed yet.",
            "pending_unknown",
          ),
        };
      case "unavailable":
        await proofStore.transition(this.db, row.proof_key, ["settling"], "failed", {
          error_reason: "settlement_unavailable",
          error_detail: o.detail,
        });
        throw unavailable(
          "settlement_unavailable",
          `Settlement is unavailable: ${o.detail}. Nothing was charged; retry later with the same proof.`,
          {
            retry_after: 30,
          },
        );
    }
  }

  /**
   * Marks the proof settled with its (unique) transaction, grants the order and marks the
   * proof granted — one database transaction, so a crash leaves either nothing or all of it.
   */
  private async finalize(row: PaymentProofRow, tx: string, payer: string, response: SettleResponse): Promise<Purchase> {
    const request = JSON.parse(row.request) as Ctx["request"];
    const at = nowIso();
    try {
      const result = await this.db.transaction().execute(async (trx) => {
        const current = await proofStore.get(trx, row.proof_key);
        if (current && current.state === "granted" && current.order_id) return { replay: current };
        const other = await proofStore.bySettlementTx(trx, tx);
        if (other && other.proof_key !== row.proof_key) return { duplicate: other };
        const settled = await proofStore.transition(
          trx,
          row.proof_key,
          ["settling", "pending_unknown", "reserved", "settled"],
          "settled",
          {
            settlement_tx: tx,
            settled_at: at,
            payer: payer || row.payer,
            settle_response: JSON.stringify(response),
            error_reason: null,
            error_detail: null,
            updated_at: at,
          },
        );
        if (!settled) throw new Error(`x402: proof ${row.proof_key} left the settling state`);
        const granted = await this.orders.grant(
          {
            proofKey: row.proof_key,
            sku: row.sku,
            rail: row.rail,
            amountCents: row.amount_cents,
            currency: "usd",
            transactionRef: tx,
            email: request.email,
            agentId: request.agent_id,
            payment: this.paymentOf(row, tx, payer),
            meta: {
              network: row.network,
              payer: payer || row.payer,
              amount_units: row.amount_units,
              proof_kind: row.kind,
              note: request.note,
            },
          },
          trx,
        );
        await proofStore.transition(trx, row.proof_key, ["settled"], "granted", {
          order_id: granted.order.id,
          updated_at: at,
        });
        return { order: granted.order, created: granted.created };
      });
      if ("replay" in result && result.replay) return this.replay(result.replay);
      if ("duplicate" in result && result.duplicate) return this.duplicateTx(row, tx);
      if (!("order" in result) || !result.order) throw new Error("x402: grant returned no order");
      if (result.created) {
        this.log.info(
          { order_id: result.order.id, proof: logRef(row.proof_key), rail: row.rail, transaction: tx },
          "x402 order granted",
        );
      }
      const fresh = (await proofStore.get(this.db, row.proof_key)) ?? row;
      return this.purchaseAnswer(result.order, fresh, response, result.created);
    } catch (err) {
      if (err instanceof Problem && err.code === "tx_already_used") {
        // Another rail (an approved claim) or another proof already holds this on-chain payment.
        await proofStore.transition(
          this.db,
          row.proof_key,
          ["settling", "pending_unknown", "reserved", "settled"],
          "failed",
          { error_reason: "tx_already_used", error_detail: `Transaction ${tx} already paid for another order.` },
        );
        throw err;
      }
      if (isUniqueViolation(err)) {
        const other = await proofStore.bySettlementTx(this.db, tx);
        if (other && other.proof_key !== row.proof_key) return this.duplicateTx(row, tx);
        const current = await proofStore.get(this.db, row.proof_key);
        if (current?.state === "granted") return this.replay(current);
      }
      throw err;
    }
  }

  private async duplicateTx(row: PaymentProofRow, tx: string): Promise<never> {
    await proofStore.transition(
      this.db,
      row.proof_key,
      ["settling", "pending_unknown", "reserved", "settled"],
      "failed",
      {
        error_reason: "settlement_transaction_already_used",
        error_detail: `Transaction ${tx} already paid for another order.`,
      },
    );
    throw conflict(
      "settlement_transaction_already_used",
      `Transaction ${tx} has already paid for another order; a transaction buys one order only.`,
    );
  }

  /** EVM: was the authorization's nonce used on chain, and by a transfer that paid us? */
  private async evmOnChain(row: PaymentProofRow): Promise<SettleOutcome | undefined> {
    const client = this.settlement.evmClient;
    if (!client) return undefined;
    const payload = JSON.parse(row.payload) as { payload: Eip3009Payload; accepted: V2Requirements };
    const req = JSON.parse(row.requirements) as V2Requirements;
    const a = payload.payload.authorization;
    const state = await authorizationOutcome(client, req.asset, a.from, a.nonce as `0x${string}`);
    if (!state.used) {
      if (BigInt(a.validBefore) <= BigInt(Math.floor(Date.now() / 1000))) {
        return {
          status: "failed",
          reason: "invalid_exact_evm_payload_authorization_valid_before",
          detail: "The authorization expired unused.",
        };
      }
      return undefined;
    }
    if (!state.tx)
      return { status: "pending", detail: "The authorization was used on chain but its transaction was not found." };
    const check = await checkTransferTx(client, {
      hash: state.tx,
      asset: req.asset,
      payTo: req.payTo,
      amount: req.amount,
      from: a.from,
      minConfirmations: 1,
      maxAgeSeconds: Number.MAX_SAFE_INTEGER,
    });
    if (check.status === "ok") {
      return {
        status: "success",
        transaction: state.tx,
        payer: a.from,
        response: { success: true, transaction: state.tx, network: row.network as never, payer: a.from },
      };
    }
    if (check.status === "pending") return { status: "pending", transaction: state.tx, detail: check.detail };
    return { status: "failed", reason: check.reason, detail: check.detail, transaction: state.tx };
  }

  /** Operator view of the proof ledger (no payloads: they are bearer payment authorizations). */
  async listProofs(q: { state?: ProofState; limit: number; offset: number }) {
    const { total, items } = await proofStore.list(this.db, q);
    return {
      total,
      items: items.map((r) => ({
        proof_key: r.proof_key,
        kind: r.kind,
        rail: r.rail,
        network: r.network,
        sku: r.sku,
        amount_units: r.amount_units,
        payer: r.payer,
        state: r.state,
        settlement_tx: r.settlement_tx,
        expected_tx: r.expected_tx,
        order_id: r.order_id,
        error_reason: r.error_reason,
        error_detail: r.error_detail,
        attempts: r.attempts,
        created_at: r.created_at,
        updated_at: r.updated_at,
        settled_at: r.settled_at,
      })),
    };
  }

  /**
   * Reconciles proofs whose outcome is not final (crash, timeout). At start-up every unfinished
   * row is examined; later passes only rows idle for longer than two settlement timeouts.
   */
  async reconcile(opts: { startup?: boolean } = {}): Promise<{ examined: number; granted: number; failed: number }> {
    if (this.reconciling) {
      await this.reconciling;
    }
    const run = async () => {
      const idle = opts.startup ? 0 : 2 * this.settlement.settleTimeoutMs + 5_000;
      const rows = await proofStore.unfinished(this.db, new Date(Date.now() - idle).toISOString());
      let granted = 0;
      let failed = 0;
      for (const row of rows) {
        try {
          await this.reconcileRow(row, "reconcile");
        } catch (err) {
          if (!(err instanceof Problem))
            this.log.error({ err: safeError(err), proof: logRef(row.proof_key) }, "x402 reconciliation failed");
        }
        const after = await proofStore.get(this.db, row.proof_key);
        if (after?.state === "granted") granted++;
        if (after?.state === "failed") failed++;
      }
      if (rows.length > 0) this.log.info({ examined: rows.length, granted, failed }, "x402 reconciliation pass");
      return { examined: rows.length, granted, failed };
    };
    const p = run();
    const done = p.then(
      () => {},
      () => {},
    );
    this.reconciling = done;
    void done.then(() => {
      if (this.reconciling === done) this.reconciling = undefined;
    });
    return p;
  }

  /** Decides one unfinished proof from chain state (or by re-settling the same payload). */
  private async reconcileRow(row: PaymentProofRow, source: "reconcile" | "retry"): Promise<void> {
    const claimed = await proofStore.transition(this.db, row.proof_key, [row.state], "settling");
    if (!claimed) return;
    const product = this.catalog.resolve(row.sku);
    let outcome: SettleOutcome | undefined;
    try {
      if (row.kind === "evm_eip3009") {
        outcome = await this.evmOnChain(row);
        if (!outcome && this.settlement.unavailable("evm_eip3009") === undefined)
          outcome = await this.runSettlement(row);
      } else if (row.kind === "evm_tx") {
        outcome = await this.runSettlement(row);
      } else {
        outcome = await this.svmOnChain(row);
        if (!outcome) outcome = await this.runSettlement(row);
      }
    } catch (err) {
      outcome = { status: "pending", detail: `reconciliation error: ${(err as Error).message.split("\n")[0]}` };
    }
    outcome ??= { status: "pending", detail: "settlement is unavailable; will retry" };
    if (outcome.status === "unavailable") outcome = { status: "pending", detail: outcome.detail };
    try {
      await this.applyOutcome(row, product, outcome, source);
    } catch (err) {
      if (!(err instanceof Problem)) throw err;
    }
  }

  /** Solana: the transaction id is known in advance; ask the cluster what became of it. */
  private async svmOnChain(row: PaymentProofRow): Promise<SettleOutcome | undefined> {
    const url = this.config.x402.solanaRpcUrl;
    const sig = row.expected_tx;
    if (!url || !sig) return undefined;
    const st = await signatureStatus(url, sig, 10_000);
    if (!st) return undefined;
    const c = await confirmSignature(url, sig, 1_000);
    if (c.status === "success") {
      return {
        status: "success",
        transaction: sig,
        payer: row.payer ?? "",
        response: { success: true, transaction: sig, network: row.network as never, payer: row.payer ?? "" },
      };
    }
    if (c.status === "failed") return { status: "failed", reason: c.reason, detail: c.detail, transaction: sig };
    return { status: "pending", transaction: sig, detail: c.detail };
  }
}

function identifierReused(): Problem {
  return conflict(
    "payment_identifier_reused",
    "This payment identifier (or Idempotency-Key) already belongs to another payment proof. Retry that payment with its original proof to get its order, or use a new identifier for a new payment; nothing was charged for this one.",
  );
}

/** 503 naming the settings each x402 rail still needs. */
function notConfigured(config: Config): Problem {
  const { detail, missing } = x402NotConfiguredDetail(config);
  return unavailable("x402_not_configured", detail, { missing });
}

import type { PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import type { Catalog, Product } from "../../catalog/service.js";
import type { Config } from "../../config.js";
import { conflict, Problem, unavailable } from "../../http/problem.js";
import { type PricedItem, productItem } from "../../orders/priced-item.js";
import type { OrderService } from "../../orders/service.js";
import { refundPolicy } from "../../refunds/policy.js";
import { x402NotConfiguredDetail } from "../readiness.js";
import { paymentIdentifierDeclaration } from "./buyer.js";
import type { Rejection } from "./evm.js";
import { type AcceptEntry, acceptEntry, configuredRails, type V2Requirements, v2Requirements } from "./requirements.js";
import type { Settlement } from "./settlement.js";
import type { PaymentProofRow } from "./tables.js";
import { type TxHashProofSubject, txHashProofRequest } from "./tx-hash-proof.js";

/**
 * The x402 answers, as domain values (the HTTP edge, x402/http.ts, encodes their headers): the 402 challenge (v1-style body plus the v2 PAYMENT-REQUIRED header) for
 * a product, the catalog or a suite quote; refusals that carry the challenge; the 202 for a pending
 * settlement; the 409 for a proof redeemed by someone who cannot prove to be its buyer; and the
 * 200 of a paid product (its order) or a paid quote (its job). Pure: no database, no chain.
 */

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
  /** The x402 v2 PaymentRequired (the domain value: the HTTP edge encodes it as PAYMENT-REQUIRED, MCP sends it as is). */
  paymentRequired: PaymentRequired;
}

/** A 402 refusal of a payment: the reason, with the unchanged challenge to pay again. */
export class PaymentRefused extends Problem {
  constructor(
    code: string,
    detail: string,
    readonly challenge: Challenge,
    extra: Record<string, unknown>,
  ) {
    super(402, code, detail, extra);
  }
}

/** What a paid product answers. */
export interface ProductPurchaseBody {
  order_id: string;
  access_url: string;
  sku: string;
  amount_usd: string;
  rail: string;
  transaction: string;
}

/** What a paid suite quote answers: the job it bought. */
export interface JobPurchaseBody {
  job_id: string;
  job_token: string;
  quote_id: string;
  status_url: string;
  upload_url: string;
  upload_tus: string;
  output_url: string;
  amount_units: string;
  rail: string;
  transaction: string;
}

export interface Purchase {
  body: ProductPurchaseBody | JobPurchaseBody;
  /** The settlement (x402 SettleResponse): the HTTP edge encodes it as PAYMENT-RESPONSE, MCP sends it in _meta. */
  settle: SettleResponse;
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
}

export type PurchaseOutcome =
  | { kind: "challenge"; challenge: Challenge }
  | { kind: "granted"; purchase: Purchase }
  | { kind: "pending"; pending: Pending };

export const RETRY_AFTER_SECONDS = 5;
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

export class X402Answers {
  constructor(
    private readonly config: Config,
    private readonly catalog: Catalog,
    private readonly settlement: Settlement,
    private readonly orders: Pick<OrderService, "fulfilmentView">,
  ) {}

  resourceUrl(): string {
    return `${this.config.baseUrl}/api/x402-products`;
  }

  /** The 402 challenge for one product, or catalog-wide (every SKU on every rail) without one. */
  challenge(product: Product | undefined, error?: { code: string; detail: string }): Challenge {
    if (product) return this.challengeFor(productItem(product, this.resourceUrl()), error);
    const items = this.catalog.list().map((p) => productItem(p, this.resourceUrl()));
    return this.build(items, undefined, error);
  }

  /** The 402 challenge for one priced item (a product, or a suite quote). */
  challengeFor(item: PricedItem, error?: { code: string; detail: string }): Challenge {
    return this.build([item], item, error);
  }
  build(items: PricedItem[], single: PricedItem | undefined, error?: { code: string; detail: string }): Challenge {
    const rails = configuredRails(this.config);
    if (rails.length === 0) throw notConfigured(this.config);
    const feePayer = this.settlement.feePayer();
    const ctx = { config: this.config, feePayer };
    const accepts: AcceptEntry[] = [];
    const v2: V2Requirements[] = [];
    const headerItem = single ?? [...items].sort((x, y) => (BigInt(x.amountUnits) < BigInt(y.amountUnits) ? -1 : 1))[0];
    for (const item of items) {
      for (const rail of rails) {
        const entry = acceptEntry(rail, item, ctx);
        if (!single) {
          entry.description = `Send { "sku": "${item.sku}" } with this payment. ${entry.description}`;
          entry.outputSchema = {
            input: { type: "http", method: "POST", discoverable: true, bodyType: "json", body: { sku: item.sku } },
          };
        }
        accepts.push(entry);
        // The header stays small (proxies often cap response headers at 4–8 KiB): for the
        // catalog-wide challenge it carries only the cheapest product; the body lists them all.
        if (item === headerItem) v2.push(v2Requirements(rail, entry.maxAmountRequired, feePayer));
      }
    }
    const code = error?.code ?? "payment_required";
    const detail =
      error?.detail ??
      (single
        ? `Pay ${single.amountUsd} USD (${single.amountUnits} atomic USDC units) on one of the accepted rails, then repeat this request with the proof in PAYMENT-SIGNATURE or X-PAYMENT.`
        : 'Send { "sku": "<sku or alias>" } to get the challenge for one product; every product and rail is listed in accepts.');
    const resource = single?.resource ?? this.resourceUrl();
    const refund = refundPolicy(this.config);
    const paymentRequired = {
      x402Version: 2,
      error: code,
      resource: {
        url: resource,
        description: single
          ? single.kind === "product"
            ? `${single.name} (${single.sku})`
            : single.description
          : "Lab Phi catalog: POST { sku } to buy one product",
        mimeType: "application/json",
      },
      accepts: v2 as unknown as PaymentRequirements[],
      extensions: {
        ...(single?.kind === "quote" ? {} : { bazaar: bazaarExtension(headerItem?.sku ?? "gao-entry") }),
        // Send an id with the payment (or an Idempotency-Key header): a replay of a settled proof
        // is answered with its order only when it carries the same one.
        "payment-identifier": paymentIdentifierDeclaration(),
        // The refund terms: the payer may ask within the window, signing with the paying wallet.
        ...(refund ? { refund } : {}),
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
      paymentRequired: paymentRequired as unknown as PaymentRequired,
    };
  }

  /** A 402 refusal carrying the reason and the (unchanged) challenge. */
  refusal(item: PricedItem, r: Rejection): Problem {
    const c = this.challengeFor(item, { code: r.reason, detail: r.detail });
    const { type: _t, title: _ti, status: _s, code: _c, detail: _d, ...x402 } = c.body;
    return new PaymentRefused(r.reason, r.detail, c, x402);
  }
  pending(code: string, detail: string, state: string): Pending {
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
    };
  }

  /** 402 for a transaction-hash proof without (or with a wrong) signature: says what to sign. */
  signatureRequired(item: PricedItem, subject: TxHashProofSubject, why?: Rejection): Problem {
    const c = this.challengeFor(item, {
      code: why?.reason ?? "transaction_proof_signature_required",
      detail:
        why?.detail ??
        "A transaction hash is public, so it proves nothing on its own: the wallet that sent the USDC transfer must sign the statement in `sign` (EIP-191 personal_sign of eip191_message, or the EIP-712 typed data) and send { transaction, signature } as the payload.",
    });
    const { type: _t, title: _ti, status: _s, code: _c, detail: _d, ...x402 } = c.body;
    return new PaymentRefused(c.body.code, c.body.detail, c, { ...x402, sign: txHashProofRequest(subject) });
  }

  /** 409 for a settled proof replayed without the buyer's secret: no order data at all. */
  redeemed(row: PaymentProofRow): Problem {
    return conflict(
      "payment_already_redeemed",
      `This payment was already redeemed, and its order is given only to its buyer. Repeat the request with the payment identifier (x402 payment-identifier extension) or Idempotency-Key sent with the first attempt, or recover the order by signing with the paying wallet at POST ${this.config.baseUrl}${RECOVERY_PATH}/challenge.`,
      { proof_state: row.state, recover: `${this.config.baseUrl}${RECOVERY_PATH}/challenge` },
    );
  }
  /**
   * The answer to a paid item: what its fulfiller shows (an order and its access URL; a job, its
   * token and where to upload), the rail and the settlement transaction.
   */
  async purchase(
    kind: PricedItem["kind"],
    id: string,
    row: PaymentProofRow,
    response: SettleResponse | undefined,
    created: boolean,
  ): Promise<Purchase> {
    const settle: SettleResponse = response ?? {
      success: true,
      transaction: row.settlement_tx ?? "",
      network: row.network as never,
      payer: row.payer ?? "",
    };
    const view = await this.orders.fulfilmentView(kind, id);
    return {
      body: { ...view, rail: row.rail, transaction: row.settlement_tx ?? settle.transaction } as Purchase["body"],
      settle,
      created,
    };
  }
}

export function identifierReused(): Problem {
  return conflict(
    "payment_identifier_reused",
    "This payment identifier (or Idempotency-Key) already belongs to another payment proof. Retry that payment with its original proof to get its order, or use a new identifier for a new payment; nothing was charged for this one.",
  );
}

/** 503 naming the settings each x402 rail still needs. */
export function notConfigured(config: Config): Problem {
  const { detail, missing } = x402NotConfiguredDetail(config);
  return unavailable("x402_not_configured", detail, { missing });
}

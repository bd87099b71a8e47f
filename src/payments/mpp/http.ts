import type { FastifyReply, FastifyRequest } from "fastify";
import { Challenge } from "mppx";
import { badRequest, Problem } from "../../http/problem.js";
import type { PricedItem } from "../../orders/priced-item.js";
import { type Challenge as Challenge402, PaymentRefused, type Pending, type Purchase } from "../x402/answers.js";
import { pendingHeaders, purchaseHeaders, challengeHeaders as x402ChallengeHeaders } from "../x402/http.js";
import { paymentHeader } from "../x402/proof.js";
import type { X402Service } from "../x402/service.js";
import type { ChallengeOptions, MppService, VerifiedCredential } from "./service.js";

/**
 * The HTTP edge of both 402 dialects, shared by every paid route (products, suite quotes, olympiad
 * entry): which dialect a request pays with, the MPP challenges added beside the x402 ones to every
 * 402, and the receipt header of a granted purchase. x402's own headers and bodies are left exactly
 * as the x402 answers build them.
 *
 * MPP wire (the Payment HTTP authentication scheme, as mppx 0.11 implements the draft):
 * - 402: `WWW-Authenticate: Payment id=…, realm=…, method=…, intent="charge", request=…, expires=…`
 *   (one challenge per method, comma-joined in one field value; `header="Payment-Authorization"`
 *   when the route's Authorization carries a bearer token);
 * - retry: `Authorization: Payment <credential>` or `Payment-Authorization: Payment <credential>`;
 * - 200: `Payment-Receipt: <base64url JSON receipt>`.
 */

export const MPP_HEADERS = {
  challenge: "WWW-Authenticate",
  credential: "Authorization",
  alternative: "Payment-Authorization",
  receipt: "Payment-Receipt",
} as const;

type Headers = Record<string, string | string[] | undefined>;

/** How a request pays: nothing, an x402 payment header, or an MPP credential (verified). */
export type Presented =
  | { dialect: "none" }
  | { dialect: "x402"; header: string }
  | { dialect: "mpp"; credential: VerifiedCredential };

export interface RouteOptions {
  /** The route's Authorization header carries a bearer token (olympiad actions): MPP uses Payment-Authorization. */
  bearer?: boolean;
}

const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
const PAYMENT_SCHEME = /^Payment\s+\S/i;

/** The raw `Payment …` credential of a request (Payment-Authorization first, then Authorization). */
export function mppCredentialHeader(headers: Headers, opts: RouteOptions = {}): string | undefined {
  const alt = first(headers["payment-authorization"])?.trim();
  if (alt) return alt;
  if (opts.bearer) return undefined;
  const auth = first(headers.authorization)?.trim();
  return auth && PAYMENT_SCHEME.test(auth) ? auth : undefined;
}

export class PaymentEdge {
  constructor(
    private readonly mpp: MppService,
    private readonly x402: Pick<X402Service, "challengeFor" | "configured">,
  ) {}

  /**
   * Which dialect the request pays with. Both at once is refused (400 `payment_dialect_ambiguous`):
   * one request presents one payment. An MPP credential is verified here (its challenge is ours,
   * unaltered, its method offered); whether it may pay the route's item is decided with the item.
   */
  read(request: FastifyRequest, opts: RouteOptions = {}): Presented {
    const headers = request.headers as Headers;
    const x402 = paymentHeader(headers as Record<string, string | undefined>);
    const mpp = mppCredentialHeader(headers, opts);
    if (x402 && mpp) {
      throw badRequest(
        "payment_dialect_ambiguous",
        "Send one payment: an x402 header (PAYMENT-SIGNATURE / X-PAYMENT) or an MPP credential (Authorization / Payment-Authorization: Payment …), not both.",
      );
    }
    if (x402) return { dialect: "x402", header: x402.value };
    if (mpp) return { dialect: "mpp", credential: this.mpp.verify(mpp) };
    return { dialect: "none" };
  }

  /** The `WWW-Authenticate` field of `item`'s MPP challenges (none when MPP is not configured). */
  challengeHeaders(
    item: PricedItem | undefined,
    request: FastifyRequest,
    opts: RouteOptions = {},
  ): Record<string, string> {
    if (!item || !this.mpp.configured()) return {};
    const auth = first((request.headers as Headers).authorization)?.trim();
    const header: ChallengeOptions["header"] =
      opts.bearer || (auth !== undefined && auth !== "" && !PAYMENT_SCHEME.test(auth))
        ? "Payment-Authorization"
        : undefined;
    const challenges = this.mpp.challenges(item, { header });
    if (challenges.length === 0) return {};
    return { [MPP_HEADERS.challenge]: challenges.map((c) => Challenge.serialize(c)).join(", ") };
  }

  /** Sends a 402: the x402 challenge (its body, and its PAYMENT-REQUIRED header), plus the MPP challenges of `item`. */
  send402(
    reply: FastifyReply,
    request: FastifyRequest,
    item: PricedItem | undefined,
    x402: { body: object; paymentRequired?: Challenge402["paymentRequired"] | undefined },
    opts: RouteOptions = {},
  ): FastifyReply {
    const { paymentRequired } = x402;
    const own = paymentRequired ? x402ChallengeHeaders({ paymentRequired }) : { "Cache-Control": "no-store" };
    return reply
      .code(402)
      .headers({ ...own, ...this.challengeHeaders(item, request, opts) })
      .send(x402.body as never);
  }

  /** Sends the 202 of a payment whose settlement is not known yet (Retry-After). */
  send202(reply: FastifyReply, pending: Pending): FastifyReply {
    return reply.code(202).headers(pendingHeaders(pending)).send(pending.body);
  }

  /**
   * Runs a paid step; a 402 problem it throws (a refused proof or credential) goes out with the
   * MPP challenges of `item` beside its x402 ones, so the client can pay again in either dialect.
   */
  async guard<T>(
    request: FastifyRequest,
    item: PricedItem | (() => PricedItem | undefined | Promise<PricedItem | undefined>) | undefined,
    run: () => Promise<T>,
    opts: RouteOptions = {},
  ): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof Problem) || err.status !== 402) throw err;
      throw this.withChallenges(err, typeof item === "function" ? await safely(item) : item, request, opts);
    }
  }

  /**
   * A 402 problem with fresh challenges of both dialects: x402's refusals already carry theirs (the
   * MPP ones are added); an MPP refusal gets the x402 challenge of the item too. Anything else unchanged.
   */
  withChallenges(
    err: unknown,
    item: PricedItem | undefined,
    request: FastifyRequest,
    opts: RouteOptions = {},
  ): unknown {
    if (!(err instanceof Problem) || err.status !== 402) return err;
    let extra: Record<string, string>;
    try {
      // An x402 refusal carries its challenge; an MPP refusal gets the item's x402 challenge.
      const x402 =
        err instanceof PaymentRefused
          ? x402ChallengeHeaders(err.challenge)
          : item && this.x402.configured()
            ? x402ChallengeHeaders(this.x402.challengeFor(item))
            : {};
      extra = { ...x402, ...this.challengeHeaders(item, request, opts) };
    } catch {
      return err;
    }
    if (Object.keys(extra).length === 0) return err;
    return new Problem(err.status, err.code, err.detail, err.extra, { ...err.headers, ...extra });
  }

  /** The headers of a granted purchase: x402's `PAYMENT-RESPONSE`, plus `Payment-Receipt` when MPP paid. */
  grantedHeaders(
    presented: Presented,
    purchase: Pick<Purchase, "settle">,
    transaction: string,
  ): Record<string, string> {
    const headers = purchaseHeaders(purchase);
    if (presented.dialect !== "mpp") return headers;
    return { ...headers, [MPP_HEADERS.receipt]: this.mpp.receipt(presented.credential, transaction) };
  }
}

async function safely(
  f: () => PricedItem | undefined | Promise<PricedItem | undefined>,
): Promise<PricedItem | undefined> {
  try {
    return await f();
  } catch {
    return undefined;
  }
}

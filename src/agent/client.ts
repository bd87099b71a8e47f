import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { generatePaymentId } from "@x402/extensions/payment-identifier";
import { paymentIdentifierClientExtension } from "../payments/x402/buyer.js";
import { type Budget, usd } from "./budget.js";
import { type Chain, chainOfNetwork, isUsdc, type Wallet } from "./wallets.js";

/**
 * One paid HTTP call, exactly once: POST → 402 → pick a rail we hold a key for → check the budget
 * (before signing) → sign ONE payment with the stock x402 client (payment identifier extension +
 * an Idempotency-Key header of the same value) → send it, and on a timeout, a network error or a
 * 202 (after Retry-After) send the SAME proof again, never a new one. Every step is logged.
 */

export class AgentError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status?: number,
    readonly body?: unknown,
  ) {
    super(message);
    this.name = "AgentError";
  }
}

export interface PayContext {
  budget: Budget;
  wallets: Wallet[];
  /** pay on this chain only (else: the first rail of the 402 we hold a key for) */
  network?: Chain;
  log: (line: string) => void;
  fetch: typeof globalThis.fetch;
  sleep: (ms: number) => Promise<void>;
  /** per request (default 60 s) */
  timeoutMs: number;
  /** sends of the one proof before giving up (default 12) */
  maxAttempts: number;
}

export interface PaidAnswer<T> {
  /** the 200 body */
  body: T;
  /** present when a payment was made */
  payment?: {
    chain: Chain;
    network: string;
    payer: string;
    amount_units: string;
    amount_usd: string;
    payment_id: string;
    transaction?: string;
  };
}

type Answer = { status: number; headers: Headers; text: string };

const json = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

function problemOf(a: Answer, what: string): AgentError {
  const body = json(a.text) as { code?: string; detail?: string } | undefined;
  const code = body?.code ?? `http_${a.status}`;
  return new AgentError(code, `${what}: ${a.status} ${code}${body?.detail ? ` — ${body.detail}` : ""}`, a.status, body);
}

async function send(ctx: PayContext, url: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
  const res = await ctx.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ctx.timeoutMs),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The requirement we will pay: on a chain we hold a key for, in USDC, `--network` first. */
function choose(ctx: PayContext, required: PaymentRequired): { req: PaymentRequirements; wallet: Wallet } {
  const offered = required.accepts.map((r) => `${r.network} (${r.amount} units)`).join(", ");
  for (const req of required.accepts) {
    const chain = chainOfNetwork(req.network);
    if (!chain || (ctx.network && chain !== ctx.network) || req.scheme !== "exact") continue;
    const wallet = ctx.wallets.find((w) => w.chain === chain);
    if (!wallet) continue;
    if (!isUsdc(chain, req.asset)) {
      throw new AgentError(
        "unknown_asset",
        `refused: ${req.network} asks for asset ${req.asset}, not USDC; nothing was signed.`,
      );
    }
    return { req, wallet };
  }
  const keys = ctx.wallets.map((w) => w.chain).join(", ") || "none";
  throw new AgentError(
    "no_matching_rail",
    `no offered rail matches the keys held (${keys}${ctx.network ? `, --network ${ctx.network}` : ""}); offered: ${offered}. Set LABPHI_AGENT_EVM_KEY (Base) or LABPHI_AGENT_SVM_KEY (Solana).`,
  );
}

/** Signs exactly one payment for `req` with the stock x402 client, after the budget check. */
async function sign(
  ctx: PayContext,
  required: PaymentRequired,
  req: PaymentRequirements,
  wallet: Wallet,
  paymentId: string,
): Promise<PaymentPayload> {
  const units = BigInt(req.amount);
  const client = new x402Client()
    .register(wallet.networkPattern as never, wallet.scheme)
    // Our budget is the spend control (it may be above the stock client's 1 USD default).
    .setSpendControls({ maxAmountPerPayment: false })
    .registerPolicy((_v, reqs) => reqs.filter((r) => r.network === req.network && r.amount === req.amount))
    .onBeforePaymentCreation(async ({ selectedRequirements }) => {
      // The last line before the signature: the budget holds for what is about to be signed.
      try {
        ctx.budget.check(BigInt(selectedRequirements.amount));
      } catch (err) {
        return { abort: true, reason: (err as Error).message };
      }
    });
  client.registerExtension(paymentIdentifierClientExtension(paymentId) as never);
  const payload = await client.createPaymentPayload({ ...required, accepts: [req] });
  ctx.budget.commit(units);
  return payload;
}

/** POST `body` to `url`; pays the 402 once if there is one. `what` names the call in messages. */
export async function paidPost<T>(ctx: PayContext, url: string, body: unknown, what: string): Promise<PaidAnswer<T>> {
  ctx.log(`→ POST ${url}`);
  const first = await send(ctx, url, body, {}).catch((err: Error) => {
    const cause = (err.cause as Error | undefined)?.message ?? err.message;
    throw new AgentError("service_unreachable", `${what}: cannot reach ${url} (${cause}); nothing was signed.`);
  });
  if (first.status === 200) {
    ctx.log("  200: no payment needed");
    return { body: json(first.text) as T };
  }
  if (first.status !== 402) throw problemOf(first, what);
  const header = first.headers.get("payment-required");
  if (!header)
    throw new AgentError("no_payment_required_header", `${what}: 402 without a PAYMENT-REQUIRED header`, 402);
  const required = decodePaymentRequiredHeader(header);
  ctx.log(
    `  402 challenge: ${required.accepts.map((r) => `${r.network} ${usd(BigInt(r.amount))} USD (${r.amount} units)`).join(" | ")}`,
  );
  const { req, wallet } = choose(ctx, required);
  const units = BigInt(req.amount);
  ctx.log(`  chosen: ${wallet.chain} (${req.network}), ${usd(units)} USD = ${units} units, pay to ${req.payTo}`);
  ctx.log(`  payer: ${wallet.address}`);
  ctx.budget.check(units); // refuse BEFORE signing (throws BudgetError)
  const left = ctx.budget.remaining;
  ctx.log(
    `  budget: per payment ≤ ${usd(ctx.budget.perPaymentUnits)} USD${left === undefined ? "" : `, session left ${usd(left)} USD`}: ok`,
  );
  const paymentId = generatePaymentId();
  const payload = await sign(ctx, required, req, wallet, paymentId);
  const proof = encodePaymentSignatureHeader(payload);
  const advertised = Boolean(required.extensions?.["payment-identifier"]);
  ctx.log(
    `  signed: one ${payload.accepted.scheme} payment proof (${proof.length} base64 chars), payment identifier ${paymentId.slice(0, 8)}… (${advertised ? "in the payload and " : ""}as Idempotency-Key)`,
  );
  const headers = { "PAYMENT-SIGNATURE": proof, "Idempotency-Key": paymentId };
  // A metered 402 names its persisted quote: the paid request pays exactly that quote.
  const quoteId = (json(first.text) as { quote?: { quote_id?: unknown } } | undefined)?.quote?.quote_id;
  const paidBody =
    typeof quoteId === "string" && body !== null && typeof body === "object" ? { ...body, quote_id: quoteId } : body;
  if (paidBody !== body) ctx.log(`  quote: ${quoteId}`);
  for (let attempt = 1; ; attempt++) {
    let a: Answer;
    try {
      a = await send(ctx, url, paidBody, headers);
    } catch (err) {
      if (attempt >= ctx.maxAttempts) throw lost(what, wallet, err);
      const wait = Math.min(30, 2 ** attempt);
      ctx.log(
        `  no answer (${(err as Error).name}): sending the SAME proof again in ${wait} s (attempt ${attempt + 1})`,
      );
      await ctx.sleep(wait * 1000);
      continue;
    }
    if (a.status === 202) {
      const after = Number(a.headers.get("retry-after") ?? "5");
      const wait = Number.isFinite(after) && after >= 0 ? Math.min(after, 300) : 5;
      if (attempt >= ctx.maxAttempts) throw lost(what, wallet);
      ctx.log(`  202 settlement pending: sending the SAME proof again after Retry-After ${wait} s`);
      await ctx.sleep(wait * 1000);
      continue;
    }
    if (a.status !== 200) throw problemOf(a, `${what} (paid proof refused; nothing else was signed)`);
    const settled = a.headers.get("payment-response");
    const settle = settled ? decodePaymentResponseHeader(settled) : undefined;
    const out = json(a.text) as T & { transaction?: string };
    const transaction = settle?.transaction ?? out?.transaction;
    ctx.log(`  settled: ${transaction ?? "(no transaction reported)"} on ${settle?.network ?? req.network}`);
    return {
      body: out,
      payment: {
        chain: wallet.chain,
        network: req.network,
        payer: wallet.address,
        amount_units: units.toString(),
        amount_usd: usd(units),
        payment_id: paymentId,
        ...(transaction ? { transaction } : {}),
      },
    };
  }
}

function lost(what: string, wallet: Wallet, err?: unknown): AgentError {
  return new AgentError(
    "payment_outcome_unknown",
    `${what}: the payment was signed and sent, but no final answer came${err ? ` (${(err as Error).message})` : ""}. Do not pay again: run \`labphi agent recover --network ${wallet.chain}\` to get the order by wallet signature.`,
  );
}

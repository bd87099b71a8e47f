import type { RecoveredOrder } from "../orders/recovery.js";
import { AgentError, type PayContext } from "./client.js";
import type { Chain } from "./wallets.js";

/**
 * Wallet-signature recovery of lost orders: ask for a challenge for the paying address
 * (POST /api/orders/recover/challenge), sign its message with the wallet (EIP-191 personal_sign on
 * Base, ed25519 on Solana), and trade the signature for the orders (POST /api/orders/recover).
 * Nothing is paid, and the challenge is single use.
 */

/** An order as the service's recovery answers it (the service's own type: one definition). */
export type { RecoveredOrder } from "../orders/recovery.js";

export interface Recovered {
  chain: Chain;
  address: string;
  orders: RecoveredOrder[];
}

async function postJson(ctx: PayContext, url: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const res = await ctx.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(ctx.timeoutMs),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, body: parsed };
}

export async function recoverOrders(ctx: PayContext, baseUrl: string, chain?: Chain): Promise<Recovered[]> {
  const wallets = ctx.wallets.filter((w) => chain === undefined || w.chain === chain);
  if (wallets.length === 0) {
    throw new AgentError(
      "no_wallet",
      `no key for ${chain ?? "any chain"}: set LABPHI_AGENT_EVM_KEY (Base) or LABPHI_AGENT_SVM_KEY (Solana).`,
    );
  }
  const out: Recovered[] = [];
  for (const w of wallets) {
    ctx.log(`→ POST ${baseUrl}/api/orders/recover/challenge (${w.chain} ${w.address})`);
    const c = await postJson(ctx, `${baseUrl}/api/orders/recover/challenge`, { chain: w.chain, address: w.address });
    const challenge = c.body as { nonce?: string; message?: string; expires_at?: string; code?: string };
    if (c.status !== 201 || !challenge.nonce || !challenge.message) {
      throw new AgentError(challenge?.code ?? `http_${c.status}`, `recovery challenge: ${c.status}`, c.status, c.body);
    }
    ctx.log(`  challenge ${challenge.nonce} (expires ${challenge.expires_at})`);
    const signature = await w.signMessage(challenge.message);
    ctx.log(`  signed the challenge message with ${w.address} (${w.chain === "base" ? "EIP-191" : "ed25519"})`);
    const r = await postJson(ctx, `${baseUrl}/api/orders/recover`, { nonce: challenge.nonce, signature });
    const rec = r.body as Recovered & { code?: string; detail?: string };
    if (r.status !== 200) {
      throw new AgentError(
        rec?.code ?? `http_${r.status}`,
        `recovery: ${r.status} ${rec?.code ?? ""} ${rec?.detail ?? ""}`,
        r.status,
      );
    }
    ctx.log(`  ${rec.orders.length} order(s) paid by ${rec.address}`);
    for (const o of rec.orders) {
      ctx.log(`    ${o.order_id} ${o.sku} ${o.amount_usd} USD ${o.status} ${o.access_url ?? ""}`);
    }
    out.push({ chain: rec.chain, address: rec.address, orders: rec.orders });
  }
  return out;
}

import { freeTermsText, priceJob, SUITE_PRICE, suitePricingRecord, usdOfUnits } from "../jobs/pricing.js";
import { networkTitle } from "../payments/networks.js";
import { orList, peopleWays, saleWays } from "../payments/sale-ways.js";
import { centsToAtomic } from "../payments/x402/rails.js";
import { VERSIONS } from "../versions.js";
import { type DiscoveryContext, endpoint, overClientCap } from "./context.js";
import { SERVICE_NAME } from "./documents.js";
import { caps } from "./facts.js";

/** /pricing.md: every price in Markdown, from the catalog and the suite pricing record. */

export const PRICING_PATH = "/pricing.md";

/** Who can pay here and how: only the rails that can settle on this server (issue #25 item 1). */
function payWays(ctx: DiscoveryContext): string {
  const ways = saleWays(ctx.config);
  const people = peopleWays(ways);
  const parts: string[] = [];
  if (ways.x402.length > 0) {
    const networks = ctx.x402.rails.filter((r) => ways.x402.includes(r.network)).map((r) => networkTitle(r.network));
    parts.push(
      `Agents pay with x402 in USDC (6 decimals: 1 cent = 10,000 atomic units) on ${orList(networks.length > 0 ? networks : ways.x402)}.`,
    );
  }
  if (people.length > 0) parts.push(`People pay ${orList(people)}.`);
  if (parts.length === 0) {
    parts.push("This server cannot take payments yet: no payment rail is configured (run `labphi doctor`).");
  }
  return parts.join(" ");
}

export function pricingMarkdown(ctx: DiscoveryContext): string {
  const out: string[] = [`# ${SERVICE_NAME} pricing`, ""];
  out.push(
    `Prices in USD. ${payWays(ctx)} Discovery version ${VERSIONS.discovery}.`,
    "",
    "Every paid route answers 402 in two dialects at once, for the same price: x402 (`PAYMENT-REQUIRED`; pay in `PAYMENT-SIGNATURE`) and MPP (`WWW-Authenticate: Payment`, methods `evm` and `solana`, intent `charge`; pay in `Authorization: Payment <credential>`, or `Payment-Authorization` where `Authorization` carries a bearer token). One on-chain payment buys one item whichever dialect presents it.",
    "",
  );
  out.push(
    "## Products",
    "",
    "| SKU | Product | Kind | USD | Cents | USDC atomic units |",
    "|---|---|---|---|---|---|",
  );
  for (const p of ctx.catalog.list()) {
    const cap = overClientCap(ctx, p) ? " ¹" : "";
    out.push(
      `| ${p.sku} | ${p.name} | ${p.kind} | ${p.amountUsd}${cap} | ${p.amountCents} | ${centsToAtomic(p.amountCents)} |`,
    );
  }
  const c = caps(ctx);
  out.push(
    "",
    `¹ Above the default per-payment cap of stock x402 v2 clients ($${c.default_client_cap_usd}); raise the client's cap to buy.`,
    "",
  );
  const buy = endpoint(ctx, "POST", "/api/x402-products");
  if (buy) out.push(`Buy: \`${buy}\` with \`{ "sku": "<sku>" }\` → 402, pay, retry with the proof.`, "");
  const listed = new Set(ctx.catalog.list().map((p) => p.sku));
  const aliases = Object.entries(ctx.catalog.aliasTable()).filter(([, sku]) => listed.has(sku));
  if (aliases.length > 0) {
    out.push("Aliases: " + aliases.map(([a, sku]) => `${a} → ${sku}`).join(", ") + ".", "");
  }

  const s = suitePricingRecord();
  out.push("## Suite jobs (metered)", "");
  out.push(
    "| Tier | Price |",
    "|---|---|",
    `| Free | ${freeTermsText(ctx.config.suiteFree.anonBytesPerDay)} |`,
    `| Standard | ${usdOfUnits(SUITE_PRICE.unitsPerGbAfterFree)} USD per GB (${SUITE_PRICE.unitsPerGbAfterFree} units) for the first ${SUITE_PRICE.bulkAfterBillableGb} billable GB |`,
    `| Bulk | ${usdOfUnits(SUITE_PRICE.unitsPerGbBulk)} USD per GB (${SUITE_PRICE.unitsPerGbBulk} units) beyond |`,
    `| Minimum | ${usdOfUnits(SUITE_PRICE.minPaidUnits)} USD (${SUITE_PRICE.minPaidUnits} units) per paid job |`,
    "",
    `GB = 10^9 bytes; billed per whole MB (10^6 bytes). Model \`${s.model}\`; reference first-paid egress ${s.first_paid_egress_ref_usd} USD per GB (not charged). The price does not depend on product, data class, op or level.`,
    "",
    "Examples:",
    "",
  );
  const anon = BigInt(ctx.config.suiteFree.anonBytesPerDay);
  out.push("With an identity whose month is unused, and without one (first job of the day):", "");
  for (const gb of [50n, 150n, 300n]) {
    const bytes = gb * 1_000_000_000n;
    const month = priceJob({ bytes });
    const day = priceJob({ bytes, freeRemainingBytes: anon });
    out.push(
      `- ${gb} GB: ${month.amount_usd} USD (${month.amount_units} units) with an identity; ${day.amount_usd} USD (${day.amount_units} units) without`,
    );
  }
  out.push("");
  const suite = endpoint(ctx, "POST", "/api/x402-suite");
  const quote = endpoint(ctx, "POST", "/api/ppp-quote");
  if (quote) out.push(`Quote: \`${quote}\` with \`{ product, dataClass, op, bytes }\`.`);
  if (suite) out.push(`Buy: \`${suite}\` with the same body → 200 within the free cap, else 402 with the quote.`);
  return `${out.join("\n")}\n`;
}

import type { Config } from "../../config.js";
import { BUYER_RAILS, RAIL_LABELS, type Readiness, railReadiness, settlingRails } from "../../payments/readiness.js";
import { orList, type SaleWays } from "../../payments/sale-ways.js";
import { escapeHtml as e } from "../html.js";

export { orList, peopleCanPay, peopleWays, type SaleWays, saleWays } from "../../payments/sale-ways.js";

/** "USDC on eip155:8453 or solana:5eykt…" for the x402 networks that can settle. */
export const x402Phrase = (w: SaleWays): string => `USDC on ${orList(w.x402)}`;

const needsHtml = (r: Readiness) => r.missing.map((m) => `<code>${e(m)}</code>`).join(", ");

/**
 * The one "this server cannot take payments yet" notice (on /, /pay, product pages and /jobs):
 * empty when any buyer rail can settle. Names the settings of every rail, `npm run sandbox` to see
 * a sale and `labphi doctor` to check real settings. Setting names only, never a value.
 */
export function noRailsNotice(config: Config): string {
  if (settlingRails(config).length > 0) return "";
  const r = railReadiness(config);
  const items = BUYER_RAILS.map((id) => `<li>${e(RAIL_LABELS[id])}: ${needsHtml(r[id])}</li>`).join("");
  return `<div class="notice notice-warn" role="status" id="no-rails">
<p><strong>This server cannot take payments yet.</strong> No payment rail is configured, so nothing here can be bought; everything free works (the codec demo, free suite jobs, olympiad registration).</p>
<p>The operator enables a rail with these settings (see <code>.env.example</code>):</p>
<ul class="small rail-settings">${items}</ul>
<p>To see a sale end to end on local test chains, run <code>npm run sandbox</code>. To check real settings before selling, run <code>labphi doctor</code>.</p>
</div>`;
}

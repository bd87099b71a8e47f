import { PRODUCTS } from "../catalog/products.js";
import { baseCaip2, SOLANA_MAINNET } from "../payments/networks.js";
import { BUYER_USDC, type Sandbox } from "./start.js";

/** The SKU the printed commands buy. */
export const SANDBOX_SKU = "zrw-pro";

const usd = (units: bigint) => `${units / 1_000_000n}.${(units % 1_000_000n).toString().padStart(6, "0")}`;

/**
 * What `labphi sandbox` prints once everything runs: the service URL, the buyer's sandbox-only
 * keys as `export` lines (the names `labphi agent` and examples/x402-fetch-buy.mjs read), and the
 * commands that buy a SKU. The test parses the `export NAME=value` lines and the `ready` line.
 */
export function sandboxBanner(s: Sandbox): string {
  const product = PRODUCTS.find((p) => p.sku === SANDBOX_SKU);
  const price = product ? `$${(product.amountCents / 100).toFixed(2)}` : "";
  // Per payment (--max-usd) just above the price; per session room for the two purchases shown.
  const maxUsd = product ? String(Math.ceil(product.amountCents / 100) + 1) : "1";
  const budget = product ? String(2 * (Math.ceil(product.amountCents / 100) + 1)) : "1";
  return `
Lab Phi sandbox: the service on local ledgers. Nothing here touches a real chain.

  service          ${s.url}   (SQLite in ${s.dataDir}, removed on exit)
  Base (anvil)     ${s.base.rpcUrl}   network ${baseCaip2(s.base.chainId)} (chain id ${s.base.chainId}), USDC ${s.base.usdc}
  Solana (LiteSVM) ${s.solana.rpcUrl}   network ${SOLANA_MAINNET}, USDC mint ${s.solana.mint}
  seller           Base ${s.base.seller}   Solana ${s.solana.seller}
  buyer            Base ${s.buyer.evmAddress}   Solana ${s.buyer.svmAddress}
                   ${usd(BUYER_USDC)} USDC on each chain, plus gas
  admin token      ${s.adminToken}

The buyer's keys below are SANDBOX-ONLY keys, generated for this run and worthless anywhere
else. Never put a real wallet's key in a shell like this. In another terminal:

  export LABPHI_URL=${s.url}
  export LABPHI_AGENT_EVM_KEY=${s.buyer.evmKey}
  export LABPHI_AGENT_SVM_KEY=${s.buyer.svmSecret}
  export LABPHI_AGENT_BUDGET_USD=${budget}
  export LABPHI_AGENT_BASE_RPC_URL=${s.base.rpcUrl}
  export LABPHI_AGENT_SOLANA_RPC_URL=${s.solana.rpcUrl}

Buy ${SANDBOX_SKU} (${product?.name ?? SANDBOX_SKU}, ${price}) with the paying client:

  npx labphi agent buy ${SANDBOX_SKU} --max-usd ${maxUsd} --network base
  npx labphi agent buy ${SANDBOX_SKU} --max-usd ${maxUsd} --network solana

or with the stock @x402/fetch client (examples/x402-fetch-buy.mjs):

  node examples/x402-fetch-buy.mjs ${SANDBOX_SKU}
  node examples/x402-fetch-buy.mjs ${SANDBOX_SKU} solana

Everything starts fresh on each run. Ctrl-C stops the service and both ledgers.
ready: ${s.url}
`;
}

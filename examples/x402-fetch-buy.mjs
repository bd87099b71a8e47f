// Buys one SKU from Lab Phi with the stock x402 v2 client (@x402/fetch's wrapFetchWithPayment),
// nothing of Lab Phi's own code involved. Made for `labphi sandbox` (docs/sandbox.md), which prints
// the environment it reads:
//
//   node examples/x402-fetch-buy.mjs zrw-pro          # pays on Base with LABPHI_AGENT_EVM_KEY
//   node examples/x402-fetch-buy.mjs zrw-pro solana   # pays on Solana with LABPHI_AGENT_SVM_KEY
//
// LABPHI_URL                      the service (default http://127.0.0.1:3402)
// LABPHI_AGENT_EVM_KEY            0x… private key (Base)
// LABPHI_AGENT_SVM_KEY            base58 64-byte secret key (Solana)
// LABPHI_AGENT_BUDGET_USD         the most this script pays (the stock client's default cap is $1)
// LABPHI_AGENT_BASE_RPC_URL     Base RPC (optional for Base: EIP-3009 is signed off-chain)
// LABPHI_AGENT_SOLANA_RPC_URL   Solana RPC (the client reads a recent blockhash there)
import { randomUUID } from "node:crypto";
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";

const [sku = "zrw-pro", network = "base"] = process.argv.slice(2);
const env = process.env;
const baseUrl = (env.LABPHI_URL ?? "http://127.0.0.1:3402").replace(/\/+$/, "");

function need(name) {
  const value = env[name];
  if (!value) {
    console.error(`x402-fetch-buy: set ${name} (labphi sandbox prints it)`);
    process.exit(2);
  }
  return value;
}

const client = new x402Client();
if (network === "base") {
  const account = privateKeyToAccount(need("LABPHI_AGENT_EVM_KEY"));
  const rpc = env.LABPHI_AGENT_BASE_RPC_URL;
  const publicClient = rpc ? createPublicClient({ transport: http(rpc) }) : undefined;
  client.register("eip155:*", new ExactEvmScheme(toClientEvmSigner(account, publicClient)));
  console.log(`payer (Base): ${account.address}`);
} else if (network === "solana") {
  const secret = getBase58Encoder().encode(need("LABPHI_AGENT_SVM_KEY"));
  const signer = await createKeyPairSignerFromBytes(secret);
  client.register("solana:*", new ExactSvmScheme(signer, { rpcUrl: need("LABPHI_AGENT_SOLANA_RPC_URL") }));
  console.log(`payer (Solana): ${signer.address}`);
} else {
  console.error("x402-fetch-buy: the network is base or solana");
  process.exit(2);
}
// Stock clients refuse anything above $1 unless told otherwise: the budget is the per-payment cap.
if (env.LABPHI_AGENT_BUDGET_USD) client.setSpendControls({ maxAmountPerPayment: `$${env.LABPHI_AGENT_BUDGET_USD}` });

const fetchWithPayment = wrapFetchWithPayment(fetch, client);
// The Idempotency-Key binds the order to this buyer: a retry with it gets the same order.
const res = await fetchWithPayment(`${baseUrl}/api/x402-products`, {
  method: "POST",
  headers: { "content-type": "application/json", "idempotency-key": randomUUID() },
  body: JSON.stringify({ sku, note: "agent:x402-fetch-example" }),
});
const body = await res.json();
console.log(`status: ${res.status}`);
const receipt = res.headers.get("payment-response");
if (receipt) {
  const settled = decodePaymentResponseHeader(receipt);
  console.log(`settlement: ${settled.network} ${settled.transaction}`);
}
console.log(JSON.stringify(body, null, 2));
process.exit(res.status === 200 ? 0 : 1);

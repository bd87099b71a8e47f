import {
  type Chain,
  createPublicClient,
  createWalletClient,
  defineChain,
  getAddress,
  http,
  isAddressEqual,
  type NonceManager,
  nonceManager,
  type PublicClient,
  parseAbi,
  parseAbiItem,
  recoverTypedDataAddress,
  toEventSelector,
  toFunctionSelector,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { Eip3009Payload } from "./proof.js";
import type { V2Requirements } from "./requirements.js";

/**
 * Base (EVM) side: local pre-checks of EIP-3009 authorizations, verification of
 * transaction-hash proofs from the receipt, and on-chain reconciliation helpers.
 */

export const USDC_ABI = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);
const TRANSFER_EVENT = parseAbiItem("event Transfer(address indexed from, address indexed to, uint256 value)");
const AUTH_USED_EVENT = parseAbiItem("event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)");

export const TRANSFER_WITH_AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: "from", type: "address" },
    { name: "to", type: "address" },
    { name: "value", type: "uint256" },
    { name: "validAfter", type: "uint256" },
    { name: "validBefore", type: "uint256" },
    { name: "nonce", type: "bytes32" },
  ],
} as const;

export interface Rejection {
  reason: string;
  detail: string;
}

export function evmChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: chainId === 8453 ? "Base" : `EVM ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export function evmPublicClient(chainId: number, rpcUrl: string, timeoutMs: number): PublicClient {
  return createPublicClient({
    chain: evmChain(chainId, rpcUrl),
    transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 1 }),
    pollingInterval: 250,
  }) as PublicClient;
}

export function evmWalletClient(
  chainId: number,
  rpcUrl: string,
  key: `0x${string}`,
  timeoutMs: number,
  nonces: NonceManager = nonceManager,
) {
  const account = privateKeyToAccount(key, { nonceManager: nonces });
  return createWalletClient({
    account,
    chain: evmChain(chainId, rpcUrl),
    transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 0 }),
  });
}

/** Local checks of an EIP-3009 authorization against our requirements (no network). */
export async function precheckEip3009(
  p: Eip3009Payload,
  req: V2Requirements,
  chainId: number,
  accepted: { asset?: string; payTo?: string; amount?: string; maxAmountRequired?: string } | undefined,
  maxTimeoutSeconds: number,
  nowSeconds = Math.floor(Date.now() / 1000),
): Promise<Rejection | undefined> {
  const a = p.authorization;
  if (accepted?.asset !== undefined && accepted.asset.toLowerCase() !== req.asset.toLowerCase()) {
    return { reason: "invalid_exact_evm_asset_mismatch", detail: `This rail accepts only ${req.asset}.` };
  }
  if (!isAddressEqual(a.to as `0x${string}`, req.payTo as `0x${string}`)) {
    return { reason: "invalid_exact_evm_recipient_mismatch", detail: `authorization.to must be ${req.payTo}.` };
  }
  if (BigInt(a.value) !== BigInt(req.amount)) {
    return {
      reason: "invalid_exact_evm_payload_authorization_value_mismatch",
      detail: `authorization.value must be exactly ${req.amount} atomic units, got ${a.value}.`,
    };
  }
  if (BigInt(a.validAfter) > BigInt(nowSeconds)) {
    return {
      reason: "invalid_exact_evm_payload_authorization_valid_after",
      detail: "authorization.validAfter is in the future.",
    };
  }
  if (BigInt(a.validBefore) < BigInt(nowSeconds + 6)) {
    return {
      reason: "invalid_exact_evm_payload_authorization_valid_before",
      detail: "authorization.validBefore has passed (or is less than 6 seconds away).",
    };
  }
  if (BigInt(a.validBefore) > BigInt(nowSeconds + maxTimeoutSeconds + 600)) {
    return {
      reason: "invalid_exact_evm_payload_authorization_valid_before",
      detail: `authorization.validBefore is more than maxTimeoutSeconds (${maxTimeoutSeconds}) in the future.`,
    };
  }
  let signer: `0x${string}`;
  try {
    signer = await recoverTypedDataAddress({
      domain: {
        name: req.extra.name,
        version: req.extra.version,
        chainId,
        verifyingContract: getAddress(req.asset),
      },
      types: TRANSFER_WITH_AUTHORIZATION_TYPES,
      primaryType: "TransferWithAuthorization",
      message: {
        from: getAddress(a.from),
        to: getAddress(a.to),
        value: BigInt(a.value),
        validAfter: BigInt(a.validAfter),
        validBefore: BigInt(a.validBefore),
        nonce: a.nonce as `0x${string}`,
      },
      signature: p.signature as `0x${string}`,
    });
  } catch {
    return { reason: "invalid_exact_evm_signature", detail: "The signature is malformed." };
  }
  if (!isAddressEqual(signer, a.from as `0x${string}`)) {
    return {
      reason: "invalid_exact_evm_signature",
      detail: `The EIP-712 signature (domain "${req.extra.name}" v${req.extra.version}, chain ${chainId}, token ${req.asset}) was not made by authorization.from.`,
    };
  }
  return undefined;
}

export async function balanceOf(client: PublicClient, asset: string, who: string): Promise<bigint> {
  return (await client.readContract({
    address: getAddress(asset),
    abi: USDC_ABI,
    functionName: "balanceOf",
    args: [getAddress(who)],
  })) as bigint;
}

export type TxCheck =
  | { status: "ok"; logIndex: number; from: string; blockNumber: bigint }
  | { status: "pending"; detail: string }
  | { status: "failed"; reason: string; detail: string };

/** Verifies a transaction-hash proof: a confirmed USDC Transfer of exactly `amount` to `payTo`. */
export async function checkTransferTx(
  client: PublicClient,
  q: {
    hash: `0x${string}`;
    asset: string;
    payTo: string;
    amount: string;
    minConfirmations: number;
    maxAgeSeconds: number;
    from?: string;
    /**
     * A buyer's transaction-hash proof: the transaction must be a plain transfer sent by the token
     * sender itself (never an EIP-3009 settlement, whose hash anyone can read and present).
     */
    plainTransferOnly?: boolean;
  },
): Promise<TxCheck> {
  const receipt = await client.getTransactionReceipt({ hash: q.hash }).catch((err: unknown) => {
    if (err instanceof Error && err.name === "TransactionReceiptNotFoundError") return undefined;
    throw err;
  });
  if (!receipt) {
    const tx = await client.getTransaction({ hash: q.hash }).catch(() => undefined);
    if (tx) return { status: "pending", detail: "The transaction is not mined yet." };
    return {
      status: "failed",
      reason: "invalid_transaction_not_found",
      detail: `No transaction ${q.hash} on this chain.`,
    };
  }
  if (receipt.status !== "success") {
    return { status: "failed", reason: "invalid_transaction_state", detail: "The transaction reverted." };
  }
  let sawTransferToPayTo = false;
  let match: { logIndex: number; from: string } | undefined;
  for (const log of receipt.logs) {
    if (!isAddressEqual(log.address, getAddress(q.asset))) continue;
    if (log.topics[0] !== TRANSFER_TOPIC) continue;
    const to = topicAddress(log.topics[2]);
    const from = topicAddress(log.topics[1]);
    if (!to || !from || !isAddressEqual(to, getAddress(q.payTo))) continue;
    sawTransferToPayTo = true;
    if (q.from && !isAddressEqual(from, getAddress(q.from))) continue;
    if (BigInt(log.data) === BigInt(q.amount)) {
      match = { logIndex: log.logIndex, from };
      break;
    }
  }
  if (match && q.plainTransferOnly) {
    const refusal = await plainTransferRefusal(client, q.hash, q.asset, match.from, receipt.logs);
    if (refusal) return refusal;
  }
  if (!match) {
    return sawTransferToPayTo
      ? {
          status: "failed",
          reason: "invalid_transfer_amount_mismatch",
          detail: `The transfer to payTo is not exactly ${q.amount} units.`,
        }
      : {
          status: "failed",
          reason: "invalid_transfer_not_found",
          detail: "The transaction has no USDC Transfer to payTo.",
        };
  }
  const head = await client.getBlock({ blockTag: "latest" });
  const confirmations = Number(head.number - receipt.blockNumber + 1n);
  if (confirmations < q.minConfirmations) {
    return { status: "pending", detail: `${confirmations} of ${q.minConfirmations} confirmations.` };
  }
  const block = await client.getBlock({ blockNumber: receipt.blockNumber });
  // Age on the chain's own clock (latest block time), immune to local clock skew.
  const age = Number(head.timestamp - block.timestamp);
  if (age > q.maxAgeSeconds) {
    return {
      status: "failed",
      reason: "invalid_transaction_too_old",
      detail: `The transaction is ${age}s old; proofs older than ${q.maxAgeSeconds}s are not accepted.`,
    };
  }
  return { status: "ok", logIndex: match.logIndex, from: match.from, blockNumber: receipt.blockNumber };
}

const TRANSFER_TOPIC = "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef";
const AUTHORIZATION_USED_TOPIC = toEventSelector("AuthorizationUsed(address,bytes32)");
/** EIP-3009 entry points (both signature encodings): a call to one is a settlement, not the payer's own transfer. */
const AUTHORIZATION_SELECTORS = new Set(
  [
    "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
    "transferWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
    "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,uint8,bytes32,bytes32)",
    "receiveWithAuthorization(address,address,uint256,uint256,uint256,bytes32,bytes)",
  ].map((sig) => toFunctionSelector(sig)),
);

/** Why a transaction is not the token sender's own plain transfer (or undefined when it is). */
async function plainTransferRefusal(
  client: PublicClient,
  hash: `0x${string}`,
  asset: string,
  tokenSender: string,
  logs: readonly { address: string; topics: readonly string[] }[],
): Promise<{ status: "failed"; reason: string; detail: string } | undefined> {
  const usedAuthorization = logs.some(
    (l) => isAddressEqual(l.address as `0x${string}`, getAddress(asset)) && l.topics[0] === AUTHORIZATION_USED_TOPIC,
  );
  const tx = await client.getTransaction({ hash });
  const selector = tx.input.slice(0, 10).toLowerCase();
  if (usedAuthorization || AUTHORIZATION_SELECTORS.has(selector as `0x${string}`)) {
    return {
      status: "failed",
      reason: "invalid_transaction_is_authorization_settlement",
      detail:
        "This transaction settles an EIP-3009 authorization (transferWithAuthorization); its hash is public and is not a proof of payment. The buyer of that payment redeems it with the original x402 proof.",
    };
  }
  if (!isAddressEqual(tx.from, getAddress(tokenSender))) {
    return {
      status: "failed",
      reason: "invalid_transaction_sender",
      detail:
        "The transaction was not sent by the token sender. A transaction-hash proof must be a plain USDC transfer sent by the paying wallet itself.",
    };
  }
  return undefined;
}

function topicAddress(topic: string | undefined): `0x${string}` | undefined {
  if (typeof topic !== "string" || topic.length !== 66) return undefined;
  return getAddress(`0x${topic.slice(26)}`);
}

/**
 * Reconciliation of an EIP-3009 authorization: has its nonce been used on chain, and by
 * which transaction? (FiatToken emits AuthorizationUsed(authorizer, nonce).)
 */
export async function authorizationOutcome(
  client: PublicClient,
  asset: string,
  from: string,
  nonce: `0x${string}`,
): Promise<{ used: false } | { used: true; tx: `0x${string}` | undefined }> {
  const used = (await client.readContract({
    address: getAddress(asset),
    abi: USDC_ABI,
    functionName: "authorizationState",
    args: [getAddress(from), nonce],
  })) as boolean;
  if (!used) return { used: false };
  // Bounded look-back (hosted RPCs limit log ranges): ~2.3 days of 2-second Base blocks.
  const latest = await client.getBlockNumber({ cacheTime: 0 });
  const fromBlock = latest > 100_000n ? latest - 100_000n : 0n;
  const logs = await client.getLogs({
    address: getAddress(asset),
    event: AUTH_USED_EVENT,
    args: { authorizer: getAddress(from), nonce },
    fromBlock,
  });
  return { used: true, tx: logs[0]?.transactionHash ?? undefined };
}

export { TRANSFER_EVENT };

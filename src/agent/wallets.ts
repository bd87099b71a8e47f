import {
  createKeyPairSignerFromBytes,
  getBase58Decoder,
  getBase58Encoder,
  type KeyPairSigner,
  signBytes,
} from "@solana/kit";
import type { SchemeNetworkClient } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { createPublicClient, type Hex, http, type LocalAccount } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { base } from "viem/chains";

/**
 * The agent's wallets: a Base key (0x… 32-byte private key, or any viem LocalAccount) and/or a
 * Solana key pair (base58 of the 64-byte secret key, or a KeyPairSigner). Keys stay in memory and
 * are never printed; only addresses are.
 */

export type Chain = "base" | "solana";

export interface WalletOptions {
  /** 0x-prefixed 32-byte hex private key, or a viem LocalAccount */
  evmKey?: string | LocalAccount;
  /** base58 of the 64-byte secret key (seed ‖ public key), or a KeyPairSigner */
  svmKey?: string | KeyPairSigner;
  /** Base JSON-RPC (only for reading contracts; EIP-3009 payments sign offline) */
  evmRpcUrl?: string;
  /** Solana JSON-RPC: the client reads the mint and a recent blockhash from it */
  svmRpcUrl?: string;
}

export interface Wallet {
  chain: Chain;
  address: string;
  /** the x402 `exact` scheme client of this wallet */
  scheme: SchemeNetworkClient;
  /** x402 network pattern this wallet pays on */
  networkPattern: `${string}:*`;
  /** signs a UTF-8 message: EIP-191 personal_sign (hex) or ed25519 (base58) */
  signMessage(message: string): Promise<string>;
}

export class WalletKeyError extends Error {
  override name = "WalletKeyError";
}

export const DEFAULT_SOLANA_RPC = "https://api.mainnet-beta.solana.com";

function evmAccount(key: string | LocalAccount): LocalAccount {
  if (typeof key !== "string") return key;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key.trim())) {
    throw new WalletKeyError("LABPHI_AGENT_EVM_KEY must be a 0x-prefixed 32-byte hex private key.");
  }
  return privateKeyToAccount(key.trim() as Hex);
}

async function svmSigner(key: string | KeyPairSigner): Promise<KeyPairSigner> {
  if (typeof key !== "string") return key;
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(getBase58Encoder().encode(key.trim()));
  } catch {
    throw new WalletKeyError("LABPHI_AGENT_SVM_KEY must be base58 (the 64-byte secret key).");
  }
  if (bytes.length !== 64) {
    throw new WalletKeyError(`LABPHI_AGENT_SVM_KEY must decode to 64 bytes (seed ‖ public key), not ${bytes.length}.`);
  }
  try {
    return await createKeyPairSignerFromBytes(bytes);
  } catch {
    throw new WalletKeyError("LABPHI_AGENT_SVM_KEY: the public half does not match the seed.");
  }
}

export async function loadWallets(opts: WalletOptions): Promise<Wallet[]> {
  const wallets: Wallet[] = [];
  if (opts.evmKey !== undefined && opts.evmKey !== "") {
    const account = evmAccount(opts.evmKey);
    const publicClient = opts.evmRpcUrl
      ? createPublicClient({ chain: base, transport: http(opts.evmRpcUrl) })
      : undefined;
    wallets.push({
      chain: "base",
      address: account.address,
      scheme: new ExactEvmScheme(toClientEvmSigner(account as never, publicClient as never)),
      networkPattern: "eip155:*",
      signMessage: (message) => account.signMessage({ message }),
    });
  }
  if (opts.svmKey !== undefined && opts.svmKey !== "") {
    const signer = await svmSigner(opts.svmKey);
    wallets.push({
      chain: "solana",
      address: signer.address,
      scheme: new ExactSvmScheme(signer, { rpcUrl: opts.svmRpcUrl ?? DEFAULT_SOLANA_RPC }),
      networkPattern: "solana:*",
      signMessage: async (message) =>
        getBase58Decoder().decode(await signBytes(signer.keyPair.privateKey, new TextEncoder().encode(message))),
    });
  }
  return wallets;
}

/** The chain of an x402 network id (CAIP-2), or undefined for networks we do not pay on. */
export function chainOfNetwork(network: string): Chain | undefined {
  if (network.startsWith("eip155:")) return "base";
  if (network.startsWith("solana:")) return "solana";
  return undefined;
}

/** USDC on Base and on Solana mainnet: the only assets the budget can price (6 decimals, 1 USD). */
export const USDC_ASSETS: Record<Chain, string> = {
  base: "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913",
  solana: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
};

export function isUsdc(chain: Chain, asset: string): boolean {
  return chain === "base" ? asset.toLowerCase() === USDC_ASSETS.base : asset === USDC_ASSETS.solana;
}

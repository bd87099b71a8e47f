import { generateKeyPairSigner, type KeyPairSigner } from "@solana/kit";
import type { Hex } from "viem";
import { evmKey, solanaKey } from "../../payments/x402/helpers.js";
import { type EvmChain, startAnvil } from "./evm.js";
import { type SvmChain, startLiteSvm } from "./svm.js";

/** Both local ledgers with the settings of both x402 rails: a gas key, a fee payer, a seller on each. */
export interface BothChains {
  evm: EvmChain;
  svm: SvmChain;
  gasKey: Hex;
  feePayer: { signer: KeyPairSigner; secret: string };
  solSeller: KeyPairSigner;
  evmSeller: `0x${string}`;
  /** Settings that configure both rails against these ledgers. */
  env(extra?: Record<string, string>): Record<string, string>;
  stop(): Promise<void>;
}

export async function startBothChains(): Promise<BothChains> {
  const [evm, svm] = await Promise.all([startAnvil(), startLiteSvm()]);
  const gasKey = (await evm.newBuyer(0n)).key;
  const feePayer = await solanaKey();
  svm.svm.airdrop(feePayer.signer.address, 10_000_000_000n as never);
  const solSeller = await generateKeyPairSigner();
  await svm.setUsdc(solSeller.address, 0n); // the seller's USDC ATA must exist beforehand
  const evmSeller = evmKey().address;
  return {
    evm,
    svm,
    gasKey,
    feePayer,
    solSeller,
    evmSeller,
    env: (extra = {}) => ({
      PAY_TO_BASE: evmSeller,
      BASE_RPC_URL: evm.rpcUrl,
      X402_EVM_FACILITATOR_KEY: gasKey,
      PAY_TO_SOLANA: solSeller.address,
      SOLANA_RPC_URL: svm.rpcUrl,
      X402_SVM_FEE_PAYER_KEY: feePayer.secret,
      CONTACT_EMAIL: "ops@lab.test",
      ...extra,
    }),
    stop: async () => {
      await evm.stop();
      await svm.stop();
    },
  };
}

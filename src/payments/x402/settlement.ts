import { createKeyPairSignerFromBytes, getBase58Encoder, type KeyPairSigner } from "@solana/kit";
import { x402Facilitator } from "@x402/core/facilitator";
import { FacilitatorTimeoutError, HTTPFacilitatorClient } from "@x402/core/server";
import {
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
  type SettleResponse,
  VerifyError,
  type VerifyResponse,
} from "@x402/core/types";
import { toFacilitatorEvmSigner } from "@x402/evm";
import { ExactEvmScheme as EvmFacilitatorScheme } from "@x402/evm/exact/facilitator";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme as SvmFacilitatorScheme } from "@x402/svm/exact/facilitator";
import type { PublicClient } from "viem";
import type { Config } from "../../config.js";
import { evmPublicClient, evmWalletClient } from "./evm.js";
import { withNonceRetry } from "./evm-nonce.js";
import { SOLANA_MAINNET_CAIP2 } from "./rails.js";

/**
 * Who settles: the in-process x402 facilitator (our own gas key / fee-payer key and RPC URLs)
 * or a hosted one (X402_FACILITATOR_URL) — the same verify/settle interface, chosen by
 * configuration — plus the Base RPC used for chain-id checks, tx-hash proofs and reconciliation.
 */

export type SettleOutcome =
  | { status: "success"; transaction: string; payer: string; response: SettleResponse }
  | { status: "failed"; reason: string; detail: string; transaction?: string }
  | { status: "pending"; transaction?: string; detail: string }
  | { status: "unavailable"; detail: string };

interface FacilitatorLike {
  verify(p: PaymentPayload, r: PaymentRequirements): Promise<VerifyResponse>;
  settle(p: PaymentPayload, r: PaymentRequirements): Promise<SettleResponse>;
}

export class StartupError extends Error {
  override name = "StartupError";
}

const RETRY_SUPPORTED_MS = 10_000;

export class Settlement {
  readonly settleTimeoutMs: number;
  /** X402_RPC_TIMEOUT_SECONDS: one JSON-RPC call (or a hosted facilitator's /supported). */
  readonly rpcTimeoutMs: number;
  readonly baseCaip2: `${string}:${string}`;
  evmClient: PublicClient | undefined;
  svmFeePayer: KeyPairSigner | undefined;
  private facilitator: FacilitatorLike | undefined;
  private hosted: HTTPFacilitatorClient | undefined;
  private hostedKinds: { network: string; scheme: string; extra?: Record<string, unknown> }[] | undefined;
  private hostedError: string | undefined;
  private hostedCheckedAt = 0;
  private evmChainOk: boolean | "mismatch" = false;
  private evmChainError: string | undefined;
  private evmFacilitatorReady = false;
  private chainCheckedAt = 0;

  constructor(private readonly config: Config) {
    this.settleTimeoutMs = config.x402.settleTimeoutSeconds * 1000;
    this.rpcTimeoutMs = config.x402.rpcTimeoutSeconds * 1000;
    this.baseCaip2 = `eip155:${config.x402.baseChainId}`;
  }

  /**
   * Reads the chain id from BASE_RPC_URL (refuses to start when it differs from BASE_CHAIN_ID,
   * 8453 by default), builds the in-process facilitator or loads the hosted one's /supported.
   */
  async init(): Promise<void> {
    const x = this.config.x402;
    if (x.baseRpcUrl) this.evmClient = evmPublicClient(x.baseChainId, x.baseRpcUrl, this.rpcTimeoutMs);
    if (x.baseRpcUrl && this.config.payTo.base) await this.checkChainId();
    if (x.svmFeePayerKey) {
      const bytes = getBase58Encoder().encode(x.svmFeePayerKey);
      if (bytes.length !== 64) throw new StartupError("X402_SVM_FEE_PAYER_KEY must decode to a 64-byte secret key");
      this.svmFeePayer = await createKeyPairSignerFromBytes(new Uint8Array(bytes));
    }
    if (x.facilitatorUrl) {
      this.hosted = new HTTPFacilitatorClient({ url: x.facilitatorUrl, timeoutMs: this.settleTimeoutMs });
      this.facilitator = this.hosted;
      await this.loadSupported();
      return;
    }
    const f = new x402Facilitator();
    if (x.evmFacilitatorKey && x.baseRpcUrl) {
      const publicClient = evmPublicClient(x.baseChainId, x.baseRpcUrl, this.rpcTimeoutMs);
      const wallet = evmWalletClient(
        x.baseChainId,
        x.baseRpcUrl,
        x.evmFacilitatorKey as `0x${string}`,
        this.rpcTimeoutMs,
      );
      const resetNonce = () =>
        wallet.account.nonceManager?.reset({ address: wallet.account.address, chainId: x.baseChainId });
      const signer = toFacilitatorEvmSigner(
        {
          address: wallet.account.address,
          readContract: (a) => publicClient.readContract(a as never),
          verifyTypedData: (a) => publicClient.verifyTypedData(a as never),
          // another service process may have taken the gas key's next nonce (src/payments/x402/evm-nonce.ts)
          writeContract: (a) =>
            withNonceRetry(
              () => wallet.writeContract({ ...(a as object), chain: wallet.chain, account: wallet.account } as never),
              resetNonce,
            ),
          sendTransaction: (a) =>
            withNonceRetry(
              () => wallet.sendTransaction({ ...a, chain: wallet.chain, account: wallet.account } as never),
              resetNonce,
            ),
          waitForTransactionReceipt: (a) => publicClient.waitForTransactionReceipt(a as never),
          getCode: (a) => publicClient.getCode(a),
        },
        { confirmationTimeoutMs: this.settleTimeoutMs },
      );
      f.register(this.baseCaip2 as never, new EvmFacilitatorScheme(signer));
      this.evmFacilitatorReady = true;
    }
    if (this.svmFeePayer && x.solanaRpcUrl) {
      f.register(
        SOLANA_MAINNET_CAIP2 as never,
        new SvmFacilitatorScheme(toFacilitatorSvmSigner(this.svmFeePayer, { defaultRpcUrl: x.solanaRpcUrl })),
      );
    }
    this.facilitator = f;
  }

  private async checkChainId(): Promise<void> {
    if (!this.evmClient) return;
    this.chainCheckedAt = Date.now();
    let id: number;
    try {
      id = await this.evmClient.getChainId();
    } catch (err) {
      this.evmChainOk = false;
      this.evmChainError = `BASE_RPC_URL is unreachable: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`;
      return;
    }
    if (id !== this.config.x402.baseChainId) {
      this.evmChainOk = "mismatch";
      throw new StartupError(
        `BASE_RPC_URL serves chain id ${id}, but the Base rail needs ${this.config.x402.baseChainId} (set BASE_CHAIN_ID only for a test network)`,
      );
    }
    this.evmChainOk = true;
    this.evmChainError = undefined;
  }

  private async loadSupported(): Promise<void> {
    if (!this.hosted) return;
    this.hostedCheckedAt = Date.now();
    try {
      const s = await withTimeout(this.hosted.getSupported(), this.rpcTimeoutMs, "facilitator /supported");
      this.hostedKinds = s.kinds as never;
      this.hostedError = undefined;
    } catch (err) {
      this.hostedKinds = undefined;
      this.hostedError = `the facilitator's /supported could not be loaded: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`;
    }
  }

  /** Retries what failed at start (unreachable RPC, hosted /supported) at most every 10 s. */
  async refresh(): Promise<void> {
    if (
      this.evmClient &&
      this.config.payTo.base &&
      this.evmChainOk === false &&
      Date.now() - this.chainCheckedAt > RETRY_SUPPORTED_MS
    ) {
      await this.checkChainId().catch(() => {});
    }
    if (this.hosted && !this.hostedKinds && Date.now() - this.hostedCheckedAt > RETRY_SUPPORTED_MS)
      await this.loadSupported();
  }

  /** Solana fee payer to advertise in extra.feePayer: ours, or the hosted facilitator's. */
  feePayer(): string | undefined {
    if (this.hosted) {
      const kind = this.hostedKinds?.find((k) => k.network === SOLANA_MAINNET_CAIP2 && k.scheme === "exact");
      const fp = kind?.extra?.feePayer;
      return typeof fp === "string" ? fp : undefined;
    }
    return this.svmFeePayer?.address;
  }

  /** Why a proof kind cannot be settled right now (→ 503), or undefined when it can. */
  unavailable(kind: "evm_eip3009" | "evm_tx" | "svm_partial" | "svm_full"): string | undefined {
    const x = this.config.x402;
    const baseRpc = (): string | undefined => {
      if (!x.baseRpcUrl) return "BASE_RPC_URL is not configured";
      if (this.evmChainOk !== true) return this.evmChainError ?? "the Base RPC chain id is not verified";
      return undefined;
    };
    switch (kind) {
      case "evm_eip3009":
        if (this.hosted) {
          if (!this.hostedKinds) return this.hostedError ?? "the facilitator is not reachable";
          if (!this.hostedKinds.some((k) => k.network === this.baseCaip2 && k.scheme === "exact")) {
            return `the facilitator does not support exact on ${this.baseCaip2}`;
          }
          return undefined;
        }
        if (!x.evmFacilitatorKey) return "X402_EVM_FACILITATOR_KEY (gas key) is not configured";
        return baseRpc() ?? (this.evmFacilitatorReady ? undefined : "the EVM facilitator is not ready");
      case "evm_tx":
        return baseRpc();
      case "svm_partial":
        if (this.hosted) {
          if (!this.hostedKinds) return this.hostedError ?? "the facilitator is not reachable";
          return this.feePayer() ? undefined : "the facilitator offers no Solana fee payer";
        }
        if (!this.svmFeePayer) return "X402_SVM_FEE_PAYER_KEY is not configured";
        return x.solanaRpcUrl ? undefined : "SOLANA_RPC_URL is not configured";
      case "svm_full":
        return x.solanaRpcUrl ? undefined : "SOLANA_RPC_URL is not configured";
    }
  }

  /** verify + settle through the facilitator; every outcome classified, nothing thrown. */
  async settleViaFacilitator(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleOutcome> {
    const f = this.facilitator;
    if (!f) return { status: "unavailable", detail: "no facilitator is configured" };
    // 1. verify (no chain side effect yet: any transport failure is "unavailable")
    try {
      const v = await withTimeout(f.verify(payload, requirements), this.settleTimeoutMs, "facilitator verify");
      if (!v.isValid) {
        // F14: the SVM scheme reports any error of its simulateTransaction RPC call as a failed
        // simulation; only "Simulation failed: …" is the ledger's verdict, anything else (HTTP 500,
        // an unparsable answer) means the RPC could not be read: unavailable (503), not a refusal.
        if (
          v.invalidReason === "invalid_exact_svm_transaction_simulation_failed" &&
          !/^Simulation failed/.test(v.invalidMessage ?? "")
        ) {
          return { status: "unavailable", detail: `verification unavailable: ${v.invalidMessage ?? "RPC error"}` };
        }
        return {
          status: "failed",
          reason: v.invalidReason ?? "invalid_payload",
          detail: v.invalidMessage ?? `The facilitator rejected the payment (${v.invalidReason ?? "invalid"}).`,
        };
      }
    } catch (err) {
      if (err instanceof VerifyError && err.invalidReason) {
        return { status: "failed", reason: err.invalidReason, detail: err.invalidMessage ?? err.message };
      }
      return { status: "unavailable", detail: `verification unavailable: ${errText(err)}` };
    }
    // 2. settle (may have a chain side effect: only a refused connection counts as "not sent")
    try {
      const s = await withTimeout(f.settle(payload, requirements), this.settleTimeoutMs + 2_000, "facilitator settle");
      return classifySettle(s);
    } catch (err) {
      if (err instanceof SettleError) {
        return classifySettle({
          success: false,
          errorReason: err.errorReason,
          errorMessage: err.errorMessage,
          transaction: err.transaction,
          network: err.network,
        } as SettleResponse);
      }
      if (err instanceof FacilitatorTimeoutError || err instanceof TimeoutError) {
        return { status: "pending", detail: `settlement outcome unknown: ${errText(err)}` };
      }
      if (isConnectionRefused(err)) return { status: "unavailable", detail: `settlement unavailable: ${errText(err)}` };
      return { status: "pending", detail: `settlement outcome unknown: ${errText(err)}` };
    }
  }
}

function classifySettle(s: SettleResponse): SettleOutcome {
  if (s.success && s.transaction) {
    return { status: "success", transaction: s.transaction, payer: s.payer ?? "", response: s };
  }
  if (s.errorReason === "settlement_pending") {
    return {
      status: "pending",
      ...(s.transaction ? { transaction: s.transaction } : {}),
      detail: s.errorMessage ?? "the settlement transaction is not confirmed yet",
    };
  }
  return {
    status: "failed",
    reason: s.errorReason ?? "unexpected_settle_error",
    detail: s.errorMessage ?? `Settlement failed (${s.errorReason ?? "unknown reason"}).`,
    ...(s.transaction ? { transaction: s.transaction } : {}),
  };
}

export class TimeoutError extends Error {
  override name = "TimeoutError";
}

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(`${what} timed out after ${ms} ms`)), ms);
  });
  p.catch(() => {});
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

function errText(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0]?.slice(0, 300) ?? "error";
}

function isConnectionRefused(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 4 && e; i++) {
    const code = (e as { code?: string }).code;
    if (code === "ECONNREFUSED" || code === "ENOTFOUND" || code === "EAI_AGAIN") return true;
    e = (e as { cause?: unknown }).cause;
  }
  return /ECONNREFUSED|ENOTFOUND/.test(errText(err));
}

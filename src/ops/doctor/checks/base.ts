import { HTTPFacilitatorClient } from "@x402/core/server";
import { getAddress, type PublicClient, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { evmPublicClient } from "../../../payments/x402/evm.js";
import { type Check, type DoctorContext, displayUrl, errorLine, fail, grouped, ok, skipped, units } from "../check.js";
import { facilitatorKinds } from "./facilitator.js";

/**
 * Base (x402, USDC on an EVM chain): the RPC and its chain id, the USDC contract at the configured
 * asset, the pay-to address, and the facilitator (our gas key's ETH, or a hosted facilitator).
 */

const BASE_SETTINGS = ["PAY_TO_BASE", "BASE_RPC_URL", "X402_EVM_FACILITATOR_KEY", "BASE_USDC_ADDRESS"];

/**
 * Gas one settlement (USDC `transferWithAuthorization`) uses: about 60,000-85,000 on Base mainnet
 * (cold nonce slot and balances); 100,000 leaves room for a cold payee and an L1 data fee.
 */
export const SETTLE_GAS = 100_000n;

const ERC20 = parseAbi(["function decimals() view returns (uint8)", "function symbol() view returns (string)"]);

const applies = (_c: unknown, env: NodeJS.ProcessEnv) => BASE_SETTINGS.some((n) => (env[n] ?? "").trim() !== "");
const NOT_CONFIGURED = "not configured (PAY_TO_BASE, BASE_RPC_URL and a facilitator enable USDC on Base)";

function client(ctx: DoctorContext): PublicClient {
  const x = ctx.config.x402;
  return evmPublicClient(x.baseChainId, x.baseRpcUrl ?? "", ctx.timeoutMs);
}

export const baseRpc: Check = {
  id: "base.rpc",
  part: "base",
  check: "rpc",
  applies,
  notConfigured: NOT_CONFIGURED,
  async run(ctx) {
    const x = ctx.config.x402;
    if (!x.baseRpcUrl) {
      return fail(
        "BASE_RPC_URL is not set",
        "set BASE_RPC_URL to a Base JSON-RPC endpoint (your provider's HTTPS URL)",
      );
    }
    let id: number;
    try {
      id = await client(ctx).getChainId();
    } catch (err) {
      return fail(
        `${displayUrl(x.baseRpcUrl)} does not answer eth_chainId: ${errorLine(err)}`,
        "check BASE_RPC_URL (address, API key, firewall) and that the provider is up",
      );
    }
    if (id !== x.baseChainId) {
      return fail(
        `${displayUrl(x.baseRpcUrl)} serves chain id ${id}, expected ${x.baseChainId}`,
        x.baseChainId === 8453
          ? "point BASE_RPC_URL at a Base mainnet endpoint (chain id 8453)"
          : `point BASE_RPC_URL at chain ${x.baseChainId}, or set BASE_CHAIN_ID to ${id} if that network is intended`,
      );
    }
    return ok(`${displayUrl(x.baseRpcUrl)} answers, chain id ${id}`);
  },
};

export const baseUsdc: Check = {
  id: "base.usdc",
  part: "base",
  check: "usdc contract",
  applies,
  notConfigured: NOT_CONFIGURED,
  needs: ["base.rpc"],
  async run(ctx) {
    const asset = ctx.config.usdc.base as `0x${string}`;
    const c = client(ctx);
    const fix = "set BASE_USDC_ADDRESS to the USDC contract of this chain (unset: Base mainnet USDC)";
    let code: string | undefined;
    try {
      code = await c.getCode({ address: asset });
    } catch (err) {
      return fail(`eth_getCode ${asset}: ${errorLine(err)}`, "check BASE_RPC_URL");
    }
    if (!code || code === "0x") return fail(`no contract code at ${asset}`, fix);
    let decimals: number;
    try {
      decimals = await c.readContract({ address: asset, abi: ERC20, functionName: "decimals" });
    } catch (err) {
      return fail(`${asset} does not answer decimals(): ${errorLine(err)}`, fix);
    }
    if (Number(decimals) !== 6) return fail(`${asset} has ${decimals} decimals, USDC has 6`, fix);
    let symbol: string;
    try {
      symbol = await c.readContract({ address: asset, abi: ERC20, functionName: "symbol" });
    } catch (err) {
      return fail(`${asset} does not answer symbol(): ${errorLine(err)}`, fix);
    }
    if (symbol !== "USDC") return fail(`${asset} is ${symbol}, not USDC`, fix);
    return ok(`${asset}: ${symbol}, 6 decimals, ${(code.length - 2) / 2} bytes of code`);
  },
};

export const basePayTo: Check = {
  id: "base.pay_to",
  part: "base",
  check: "pay-to address",
  applies,
  notConfigured: NOT_CONFIGURED,
  async run(ctx) {
    const raw = ctx.config.payTo.base;
    if (!raw) {
      return fail(
        "PAY_TO_BASE is not set: the Base rail stays off",
        "set PAY_TO_BASE to the address that receives USDC (or remove the other Base settings)",
      );
    }
    let checksummed: string;
    try {
      checksummed = getAddress(raw.toLowerCase());
    } catch (err) {
      return fail(`PAY_TO_BASE is not an address: ${errorLine(err)}`, "set PAY_TO_BASE to a 0x 20-byte address");
    }
    const mixed = raw !== raw.toLowerCase() && raw.slice(2) !== raw.slice(2).toUpperCase();
    if (mixed && raw !== checksummed) {
      return fail(
        `PAY_TO_BASE ${raw} fails its EIP-55 checksum (a mistyped character?)`,
        `copy the address again from the wallet that receives USDC; its checksummed form would be ${checksummed} if the characters are right`,
      );
    }
    if (/^0x0{40}$/i.test(raw)) return fail("PAY_TO_BASE is the zero address", "set PAY_TO_BASE to your wallet");
    if (raw.toLowerCase() === ctx.config.usdc.base.toLowerCase()) {
      return fail("PAY_TO_BASE is the USDC contract itself", "set PAY_TO_BASE to your wallet");
    }
    return ok(mixed ? `${checksummed} (checksum ok)` : `${checksummed} (given without checksum)`);
  },
};

export const baseFacilitator: Check = {
  id: "base.facilitator",
  part: "base",
  check: "facilitator gas",
  applies,
  notConfigured: NOT_CONFIGURED,
  needs: ["base.rpc"],
  async run(ctx) {
    const x = ctx.config.x402;
    if (x.evmFacilitatorKey) {
      const who = privateKeyToAccount(x.evmFacilitatorKey as `0x${string}`).address;
      const c = client(ctx);
      let balance: bigint;
      let gasPrice: bigint;
      try {
        [balance, gasPrice] = await Promise.all([c.getBalance({ address: who }), c.getGasPrice()]);
      } catch (err) {
        return fail(`balance of ${who}: ${errorLine(err)}`, "check BASE_RPC_URL");
      }
      const per = SETTLE_GAS * gasPrice;
      const need = per * BigInt(ctx.settlements);
      const can = per > 0n ? balance / per : undefined;
      const have = `${who} holds ${units(balance, 18)} ETH; ${grouped(ctx.settlements)} settlements at ${grouped(gasPrice)} wei/gas × ${grouped(SETTLE_GAS)} gas need ${units(need, 18)} ETH`;
      if (balance < need) {
        return fail(
          `${have} (enough for ${can === undefined ? "?" : grouped(can)})`,
          `send at least ${units(need - balance, 18)} ETH on chain ${x.baseChainId} to ${who} (the X402_EVM_FACILITATOR_KEY account)`,
        );
      }
      return ok(have);
    }
    if (x.facilitatorUrl) {
      const network = `eip155:${x.baseChainId}`;
      let kinds: Awaited<ReturnType<typeof facilitatorKinds>>;
      try {
        kinds = await facilitatorKinds(ctx, new HTTPFacilitatorClient({ url: x.facilitatorUrl }));
      } catch (err) {
        return fail(
          `${displayUrl(x.facilitatorUrl)}/supported: ${errorLine(err)}`,
          "check X402_FACILITATOR_URL and that the facilitator is up",
        );
      }
      if (!kinds.some((k) => k.network === network && k.scheme === "exact")) {
        return fail(
          `${displayUrl(x.facilitatorUrl)} does not settle exact payments on ${network}`,
          "use a facilitator that supports Base USDC (exact), or set X402_EVM_FACILITATOR_KEY to settle yourself",
        );
      }
      return ok(`hosted facilitator ${displayUrl(x.facilitatorUrl)} settles exact on ${network} (its gas)`);
    }
    return skipped(
      "no facilitator (X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL): agents can pay only with transaction hashes",
    );
  },
};

export const BASE_CHECKS: Check[] = [baseRpc, baseUsdc, basePayTo, baseFacilitator];

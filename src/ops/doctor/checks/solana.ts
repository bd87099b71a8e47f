import { address, createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { findAssociatedTokenPda } from "@solana-program/token";
import { HTTPFacilitatorClient } from "@x402/core/server";
import { SOLANA_MAINNET_CAIP2 } from "../../../payments/x402/rails.js";
import {
  LAMPORTS_PER_SIGNATURE,
  solanaRpc,
  TOKEN_2022_PROGRAM,
  TOKEN_PROGRAM,
  worstFeeLamports,
} from "../../../payments/x402/svm.js";
import { type Check, type DoctorContext, displayUrl, errorLine, fail, grouped, ok, skipped, units } from "../check.js";
import { facilitatorKinds } from "./facilitator.js";

/**
 * Solana (x402, USDC): the RPC and its genesis hash (the service sells on mainnet-beta), the USDC
 * mint at the configured asset, the pay-to key and its USDC token account, and the fee payer's SOL.
 */

const SOLANA_SETTINGS = ["PAY_TO_SOLANA", "SOLANA_RPC_URL", "X402_SVM_FEE_PAYER_KEY", "SOLANA_USDC_MINT"];
/** The first 32 characters of mainnet-beta's genesis hash (CAIP-2 `solana:<ref>`). */
const MAINNET_REF = SOLANA_MAINNET_CAIP2.split(":")[1] ?? "";

const applies = (_c: unknown, env: NodeJS.ProcessEnv) => SOLANA_SETTINGS.some((n) => (env[n] ?? "").trim() !== "");
const NOT_CONFIGURED = "not configured (PAY_TO_SOLANA, SOLANA_RPC_URL and a fee payer enable USDC on Solana)";

function rpc<T>(ctx: DoctorContext, method: string, params: unknown[] = []): Promise<T> {
  return solanaRpc<T>(ctx.config.x402.solanaRpcUrl ?? "", method, params, ctx.timeoutMs);
}

interface AccountInfo {
  value: { owner: string; lamports: number; data: [string, string] } | null;
}

/** A base58 string that decodes to exactly 32 bytes, or why not. */
function key32(v: string): string | undefined {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(getBase58Encoder().encode(v));
  } catch {
    return "is not base58";
  }
  return bytes.length === 32 ? undefined : `decodes to ${bytes.length} bytes, a public key has 32`;
}

export const solanaRpcCheck: Check = {
  id: "solana.rpc",
  part: "solana",
  check: "rpc",
  applies,
  notConfigured: NOT_CONFIGURED,
  async run(ctx) {
    const url = ctx.config.x402.solanaRpcUrl;
    if (!url) {
      return fail("SOLANA_RPC_URL is not set", "set SOLANA_RPC_URL to a Solana mainnet JSON-RPC endpoint");
    }
    let genesis: string;
    try {
      genesis = await rpc<string>(ctx, "getGenesisHash");
    } catch (err) {
      return fail(
        `${displayUrl(url)} does not answer getGenesisHash: ${errorLine(err)}`,
        "check SOLANA_RPC_URL (address, API key, firewall) and that it is a Solana JSON-RPC endpoint",
      );
    }
    if (typeof genesis !== "string" || genesis.slice(0, 32) !== MAINNET_REF) {
      return fail(
        `${displayUrl(url)} serves genesis ${String(genesis)}, not mainnet-beta (${MAINNET_REF}…)`,
        "point SOLANA_RPC_URL at a mainnet-beta endpoint (the service sells on mainnet only)",
      );
    }
    return ok(`${displayUrl(url)} answers, genesis ${genesis.slice(0, 12)}… (mainnet-beta)`);
  },
};

/** The mint's owner program, once the mint passed (the token account check derives from it). */
async function mintInfo(ctx: DoctorContext): Promise<{ owner: string; decimals: number } | { error: string }> {
  return ctx.memo("solana.mint", async () => {
    const mint = ctx.config.usdc.solana;
    let info: AccountInfo;
    try {
      info = await rpc<AccountInfo>(ctx, "getAccountInfo", [mint, { encoding: "base64", commitment: "confirmed" }]);
    } catch (err) {
      return { error: `getAccountInfo ${mint}: ${errorLine(err)}` };
    }
    if (!info.value) return { error: `no account at ${mint}` };
    const { owner, data } = info.value;
    if (owner !== TOKEN_PROGRAM && owner !== TOKEN_2022_PROGRAM) {
      return { error: `${mint} is owned by ${owner}, not the token program: not a mint` };
    }
    const bytes = Buffer.from(data[0] ?? "", "base64");
    // SPL mint layout: authority option (36) + supply (8) + decimals (1) + initialized (1) + freeze (36)
    if (bytes.length < 82 || bytes[45] !== 1) return { error: `${mint} is a token account, not an initialized mint` };
    return { owner, decimals: bytes[44] ?? -1 };
  });
}

export const solanaUsdc: Check = {
  id: "solana.usdc",
  part: "solana",
  check: "usdc mint",
  applies,
  notConfigured: NOT_CONFIGURED,
  needs: ["solana.rpc"],
  async run(ctx) {
    const mint = ctx.config.usdc.solana;
    const fix = "set SOLANA_USDC_MINT to the USDC mint (unset: mainnet USDC EPjFWdd5…)";
    const m = await mintInfo(ctx);
    if ("error" in m) return fail(m.error, fix);
    if (m.decimals !== 6) return fail(`mint ${mint} has ${m.decimals} decimals, USDC has 6`, fix);
    return ok(`${mint}: mint of ${m.owner === TOKEN_PROGRAM ? "the token program" : "Token-2022"}, 6 decimals`);
  },
};

export const solanaPayTo: Check = {
  id: "solana.pay_to",
  part: "solana",
  check: "pay-to address",
  applies,
  notConfigured: NOT_CONFIGURED,
  async run(ctx) {
    const payTo = ctx.config.payTo.solana;
    if (!payTo) {
      return fail(
        "PAY_TO_SOLANA is not set: the Solana rail stays off",
        "set PAY_TO_SOLANA to the wallet that receives USDC (or remove the other Solana settings)",
      );
    }
    const bad = key32(payTo);
    if (bad) return fail(`PAY_TO_SOLANA ${bad}`, "copy the wallet address again (base58, 32 bytes)");
    return ok(`${payTo} (32-byte key)`);
  },
};

export const solanaPayToAccount: Check = {
  id: "solana.pay_to_account",
  part: "solana",
  check: "pay-to usdc account",
  applies,
  notConfigured: NOT_CONFIGURED,
  needs: ["solana.rpc", "solana.usdc", "solana.pay_to"],
  async run(ctx) {
    const payTo = ctx.config.payTo.solana ?? "";
    const mint = ctx.config.usdc.solana;
    const m = await mintInfo(ctx);
    if ("error" in m) return skipped(m.error);
    const [ata] = await findAssociatedTokenPda({
      owner: address(payTo),
      mint: address(mint),
      tokenProgram: address(m.owner),
    });
    let info: AccountInfo;
    try {
      info = await rpc<AccountInfo>(ctx, "getAccountInfo", [ata, { encoding: "base64", commitment: "confirmed" }]);
    } catch (err) {
      return fail(`getAccountInfo ${ata}: ${errorLine(err)}`, "check SOLANA_RPC_URL");
    }
    if (!info.value) {
      return fail(
        `${payTo} has no USDC token account (${ata}): payments to it fail`,
        `create it once, e.g. \`spl-token create-account ${mint} --owner ${payTo} --fee-payer <wallet>\`, or receive any USDC in that wallet`,
      );
    }
    return ok(`USDC token account ${ata} exists`);
  },
};

export const solanaFeePayer: Check = {
  id: "solana.fee_payer",
  part: "solana",
  check: "fee payer sol",
  applies,
  notConfigured: NOT_CONFIGURED,
  needs: ["solana.rpc"],
  async run(ctx) {
    const x = ctx.config.x402;
    if (x.svmFeePayerKey) {
      const bytes = new Uint8Array(getBase58Encoder().encode(x.svmFeePayerKey));
      if (bytes.length !== 64) {
        return fail(
          `X402_SVM_FEE_PAYER_KEY decodes to ${bytes.length} bytes, a secret key has 64`,
          "set X402_SVM_FEE_PAYER_KEY to the base58 64-byte secret key (seed and public key) of the fee payer",
        );
      }
      let who: string;
      try {
        who = (await createKeyPairSignerFromBytes(bytes)).address;
      } catch (err) {
        return fail(`X402_SVM_FEE_PAYER_KEY is not a valid key pair: ${errorLine(err)}`, "export the key pair again");
      }
      let balance: bigint;
      let rent: bigint;
      try {
        const [b, r] = await Promise.all([
          rpc<{ value: number }>(ctx, "getBalance", [who, { commitment: "confirmed" }]),
          rpc<number>(ctx, "getMinimumBalanceForRentExemption", [0]),
        ]);
        balance = BigInt(b.value);
        rent = BigInt(r);
      } catch (err) {
        return fail(`balance of ${who}: ${errorLine(err)}`, "check SOLANA_RPC_URL");
      }
      // Per sale at most: 5,000 lamports per signature (up to 3) and the compute-unit price cap.
      const per = BigInt(
        worstFeeLamports({ maxComputeUnits: x.svmMaxComputeUnits, maxComputeUnitPrice: x.svmMaxComputeUnitPrice }),
      );
      const need = per * BigInt(ctx.settlements) + rent;
      const have = `${who} holds ${units(balance, 9)} SOL; ${grouped(ctx.settlements)} settlements at ≤ ${grouped(per)} lamports (${grouped(LAMPORTS_PER_SIGNATURE)} per signature + priority cap) plus ${grouped(rent)} rent reserve need ${units(need, 9)} SOL`;
      if (balance < need) {
        return fail(
          have,
          `send at least ${units(need - balance, 9)} SOL to ${who} (the X402_SVM_FEE_PAYER_KEY account)`,
        );
      }
      return ok(have);
    }
    if (x.facilitatorUrl) {
      let kinds: Awaited<ReturnType<typeof facilitatorKinds>>;
      try {
        kinds = await facilitatorKinds(ctx, new HTTPFacilitatorClient({ url: x.facilitatorUrl }));
      } catch (err) {
        return fail(
          `${displayUrl(x.facilitatorUrl)}/supported: ${errorLine(err)}`,
          "check X402_FACILITATOR_URL and that the facilitator is up",
        );
      }
      const kind = kinds.find((k) => k.network === SOLANA_MAINNET_CAIP2 && k.scheme === "exact");
      if (!kind || typeof kind.extra?.feePayer !== "string") {
        return fail(
          `${displayUrl(x.facilitatorUrl)} names no fee payer for ${SOLANA_MAINNET_CAIP2}`,
          "use a facilitator that supports Solana USDC (exact) with a fee payer, or set X402_SVM_FEE_PAYER_KEY",
        );
      }
      return ok(`hosted facilitator ${displayUrl(x.facilitatorUrl)} pays fees from ${kind.extra.feePayer}`);
    }
    return skipped(
      "no fee payer (X402_SVM_FEE_PAYER_KEY or X402_FACILITATOR_URL): agents can pay only with fully signed transactions",
    );
  },
};

export const SOLANA_CHECKS: Check[] = [solanaRpcCheck, solanaUsdc, solanaPayTo, solanaPayToAccount, solanaFeePayer];

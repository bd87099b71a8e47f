import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { lamports } from "@solana/kit";
import { buildApp } from "../app.js";
import { loadConfig } from "../config.js";
import { openDatabase } from "../db/database.js";
import { migrateToLatest } from "../db/migrate.js";
import { newEvmKey, newSolanaKey } from "./keys.js";
import { freePort, startAnvil } from "./ledgers/evm.js";
import { startLiteSvm } from "./ledgers/svm.js";

/** What the buyer wallet holds on each chain at start: 1,000.000000 USDC (atomic units). */
export const BUYER_USDC = 1_000_000_000n;
/** Gas for the buyer: 1 ETH on Base, 1 SOL on Solana (x402 never needs it from the buyer, but wallets like it). */
const BUYER_SOL = 1_000_000_000n;

export interface SandboxOptions {
  /** Loopback port of the service; 0 picks a free one. */
  port: number;
  /** Progress lines (not secrets). */
  log?: (line: string) => void;
}

/** A running sandbox: the service and both local ledgers. Every key here is for the local chains only. */
export interface Sandbox {
  url: string;
  dataDir: string;
  adminToken: string;
  base: { rpcUrl: string; chainId: number; usdc: string; seller: string };
  solana: { rpcUrl: string; mint: string; seller: string };
  buyer: { evmKey: string; evmAddress: string; svmSecret: string; svmAddress: string };
  stop(): Promise<void>;
}

/**
 * Starts anvil (Base, chain id 8453, USDC at the mainnet address), LiteSVM behind loopback
 * JSON-RPC (USDC at the mainnet mint), then the service on SQLite in a fresh temporary DATA_DIR
 * with both x402 rails settling against them (a generated, funded facilitator gas key and fee
 * payer), and funds a generated buyer wallet on both chains. `stop()` undoes all of it.
 */
export async function startSandbox(opts: SandboxOptions): Promise<Sandbox> {
  const log = opts.log ?? (() => {});
  const cleanups: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch {
        // keep stopping the rest
      }
    }
  };
  try {
    log("starting anvil (Base, chain id 8453) and compiling the local USDC with solc …");
    const anvil = await startAnvil();
    cleanups.push(() => anvil.stop());
    log("starting LiteSVM (Solana) behind a loopback JSON-RPC …");
    const svm = await startLiteSvm();
    cleanups.push(() => svm.stop());

    // The service's own keys and addresses, generated for this run.
    const gas = await anvil.newBuyer(0n); // 1 ETH, pays for transferWithAuthorization
    const feePayer = await newSolanaKey();
    svm.svm.airdrop(feePayer.signer.address, lamports(10_000_000_000n));
    const sellerBase = newEvmKey().address;
    const sellerSol = (await newSolanaKey()).signer.address;
    await svm.setUsdc(sellerSol, 0n); // the seller's USDC account must exist before a payment

    // The buyer: USDC and gas on both chains (anvil.newBuyer also gives 1 ETH).
    const buyerEvm = await anvil.newBuyer(BUYER_USDC);
    const buyerSol = await newSolanaKey();
    svm.svm.airdrop(buyerSol.signer.address, lamports(BUYER_SOL));
    await svm.setUsdc(buyerSol.signer.address, BUYER_USDC);

    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-sandbox-"));
    cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
    const port = opts.port === 0 ? await freePort() : opts.port;
    const adminToken = `sandbox-${newEvmKey().key.slice(2, 34)}`;
    const config = loadConfig({
      NODE_ENV: "development",
      LOG_LEVEL: "warn",
      HOST: "127.0.0.1",
      PORT: String(port),
      BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: dataDir,
      ADMIN_TOKEN: adminToken,
      CONTACT_EMAIL: "ops@sandbox.invalid",
      PAY_TO_BASE: sellerBase,
      BASE_RPC_URL: anvil.rpcUrl,
      X402_EVM_FACILITATOR_KEY: gas.key,
      PAY_TO_SOLANA: sellerSol,
      SOLANA_RPC_URL: svm.rpcUrl,
      X402_SVM_FEE_PAYER_KEY: feePayer.secret,
    });
    log(`starting the service (SQLite in ${dataDir}) …`);
    const db = openDatabase(config);
    cleanups.push(() => db.close());
    await migrateToLatest(db);
    const app = await buildApp({ config, db });
    cleanups.push(() => app.close());
    const url = await app.listen({ port, host: "127.0.0.1" });

    return {
      url,
      dataDir,
      adminToken,
      base: { rpcUrl: anvil.rpcUrl, chainId: anvil.chainId, usdc: anvil.usdc, seller: sellerBase },
      solana: { rpcUrl: svm.rpcUrl, mint: svm.mint, seller: sellerSol },
      buyer: {
        evmKey: buyerEvm.key,
        evmAddress: buyerEvm.address,
        svmSecret: buyerSol.secret,
        svmAddress: buyerSol.signer.address,
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

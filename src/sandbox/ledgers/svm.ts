import http from "node:http";
import type { AddressInfo } from "node:net";
import {
  type Address,
  address,
  generateKeyPairSigner,
  getAddressEncoder,
  getBase58Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  type KeyPairSigner,
  lamports,
} from "@solana/kit";
import {
  AccountState,
  findAssociatedTokenPda,
  getMintEncoder,
  getTokenDecoder,
  getTokenEncoder,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import { FailedTransactionMetadata, LiteSVM } from "litesvm";

/**
 * A real Solana runtime for the sandbox and the tests: LiteSVM (SPL Token, ATA, Memo, ComputeBudget built in)
 * with a USDC mint at the real mainnet USDC address, behind a small loopback JSON-RPC
 * server so production code talks to it over plain HTTP exactly as it would to a real
 * RPC endpoint (getSignatureStatuses polling; no websockets).
 */

export const USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

export interface SvmChain {
  rpcUrl: string;
  svm: LiteSVM;
  mint: Address;
  newFunded(usdc: bigint, sol?: bigint): Promise<KeyPairSigner>;
  /** Creates (or overwrites) owner's USDC associated token account with a balance. */
  setUsdc(owner: Address, amount: bigint): Promise<Address>;
  usdcBalance(owner: Address): Promise<bigint>;
  ata(owner: Address): Promise<Address>;
  /** Number of transactions the RPC accepted through sendTransaction that landed successfully. */
  landed(): number;
  /** A landed transaction read back as base64 wire bytes (what getTransaction returns to anyone). */
  readBack(signature: string): string | undefined;
  /** Sends a fully signed base64 transaction to the cluster directly (as its payer could). */
  broadcast(wireBase64: string): string;
  /** While held, sendTransaction queues transactions without executing them (unconfirmed). */
  hold(on: boolean): void;
  /** Executes queued transactions. */
  release(): void;
  stop(): Promise<void>;
}

type Json = Record<string, unknown>;

export async function startLiteSvm(): Promise<SvmChain> {
  const svm = new LiteSVM();
  const mint = address(USDC_MINT);
  const mintAuthority = await generateKeyPairSigner();
  const mintData = getMintEncoder().encode({
    mintAuthority: mintAuthority.address,
    supply: 1_000_000_000_000n,
    decimals: 6,
    isInitialized: true,
    freezeAuthority: null,
  });
  const rentFor = (len: number) => svm.minimumBalanceForRentExemption(BigInt(len));
  svm.setAccount({
    address: mint,
    data: new Uint8Array(mintData),
    executable: false,
    lamports: lamports(rentFor(mintData.length)),
    programAddress: TOKEN_PROGRAM_ADDRESS,
    space: BigInt(mintData.length),
  } as never);

  const ata = async (owner: Address) =>
    (await findAssociatedTokenPda({ owner, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

  const setUsdc = async (owner: Address, amount: bigint) => {
    const where = await ata(owner);
    const data = getTokenEncoder().encode({
      mint,
      owner,
      amount,
      delegate: null,
      state: AccountState.Initialized,
      isNative: null,
      delegatedAmount: 0n,
      closeAuthority: null,
    });
    svm.setAccount({
      address: where,
      data: new Uint8Array(data),
      executable: false,
      lamports: lamports(rentFor(data.length)),
      programAddress: TOKEN_PROGRAM_ADDRESS,
      space: BigInt(data.length),
    } as never);
    return where;
  };

  const usdcBalance = async (owner: Address) => {
    const acc = svm.getAccount(await ata(owner));
    if (!acc.exists) return 0n;
    return getTokenDecoder().decode(acc.data).amount;
  };

  const statuses = new Map<string, { slot: number; err: unknown }>();
  /** Wire bytes of every executed transaction, by signature: what getTransaction reads back. */
  const wires = new Map<string, Uint8Array>();
  let held = false;
  const queue: Uint8Array[] = [];
  let landed = 0;
  const b58 = getBase58Decoder();
  const decodeTx = (b64: string) => getTransactionDecoder().decode(getBase64Encoder().encode(b64));

  const execute = (wire: Uint8Array) => {
    const tx = getTransactionDecoder().decode(wire);
    const firstSig = Object.values(tx.signatures)[0];
    const sig = firstSig ? b58.decode(firstSig) : "";
    const res = svm.sendTransaction(tx as never);
    const slot = Number(svm.getClock().slot);
    wires.set(sig, wire);
    if (res instanceof FailedTransactionMetadata) {
      statuses.set(sig, { slot, err: { InstructionError: [0, String(res.err())] } });
    } else {
      landed++;
      statuses.set(sig, { slot, err: null });
    }
    // advance a slot and a fresh blockhash, as a real cluster would
    svm.warpToSlot(BigInt(slot + 1));
    svm.expireBlockhash();
  };

  const context = () => ({ slot: Number(svm.getClock().slot) });

  const methods: Record<string, (params: unknown[]) => unknown> = {
    getLatestBlockhash: () => ({
      context: context(),
      value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: Number(svm.getClock().slot) + 150 },
    }),
    getSlot: () => Number(svm.getClock().slot),
    // the sandbox stands in for mainnet-beta (USDC at the mainnet mint), so it answers with its genesis hash
    getGenesisHash: () => "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
    getBlockHeight: () => Number(svm.getClock().slot),
    getMinimumBalanceForRentExemption: (p) => Number(rentFor(Number(p[0]))),
    getBalance: (p) => ({ context: context(), value: Number(svm.getBalance(address(String(p[0]))) ?? 0n) }),
    getAccountInfo: (p) => {
      const acc = svm.getAccount(address(String(p[0])));
      const cfg = (p[1] ?? {}) as Json;
      if (!acc.exists) return { context: context(), value: null };
      const base = {
        lamports: Number(acc.lamports),
        owner: acc.programAddress,
        executable: acc.executable,
        rentEpoch: 0,
        space: acc.data.length,
      };
      if (cfg.encoding === "jsonParsed" && acc.programAddress === TOKEN_PROGRAM_ADDRESS && acc.data.length === 165) {
        const t = getTokenDecoder().decode(acc.data);
        return {
          context: context(),
          value: {
            ...base,
            data: {
              program: "spl-token",
              space: 165,
              parsed: {
                type: "account",
                info: {
                  mint: t.mint,
                  owner: t.owner,
                  tokenAmount: { amount: t.amount.toString(), decimals: 6, uiAmountString: "" },
                },
              },
            },
          },
        };
      }
      return { context: context(), value: { ...base, data: [Buffer.from(acc.data).toString("base64"), "base64"] } };
    },
    simulateTransaction: (p) => {
      const cfg = (p[1] ?? {}) as Json;
      const tx = decodeTx(String(p[0]));
      const verify = cfg.sigVerify === true;
      svm.withSigverify(verify);
      try {
        const res = svm.simulateTransaction(tx as never);
        if (res instanceof FailedTransactionMetadata) {
          return {
            context: context(),
            value: { err: { InstructionError: [0, String(res.err())] }, logs: res.meta().logs(), accounts: null },
          };
        }
        return {
          context: context(),
          value: {
            err: null,
            logs: res.meta().logs(),
            accounts: null,
            unitsConsumed: Number(res.meta().computeUnitsConsumed()),
          },
        };
      } finally {
        svm.withSigverify(true);
      }
    },
    sendTransaction: (p) => {
      const wire = new Uint8Array(getBase64Encoder().encode(String(p[0])));
      const tx = getTransactionDecoder().decode(wire);
      const firstSig = Object.values(tx.signatures)[0];
      if (!firstSig) throw Object.assign(new Error("transaction is not signed"), { rpcCode: -32602 });
      const sig = b58.decode(firstSig);
      if (statuses.has(sig)) return sig; // a real cluster dedups identical transactions
      if (held) queue.push(wire);
      else execute(wire);
      return sig;
    },
    getTransaction: (p) => {
      const wire = wires.get(String(p[0]));
      const st = statuses.get(String(p[0]));
      if (!wire || !st) return null;
      const tx = getTransactionDecoder().decode(wire);
      return {
        slot: st.slot,
        transaction: [Buffer.from(wire).toString("base64"), "base64"],
        meta: { err: st.err, fee: 5000 * Object.keys(tx.signatures).length },
      };
    },
    getSignatureStatuses: (p) => {
      const sigs = (p[0] ?? []) as string[];
      return {
        context: context(),
        value: sigs.map((s) => {
          const st = statuses.get(s);
          return st
            ? {
                slot: st.slot,
                confirmations: null,
                err: st.err,
                status: st.err ? { Err: st.err } : { Ok: null },
                confirmationStatus: "finalized",
              }
            : null;
        }),
      };
    },
  };

  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += String(d);
    });
    req.on("end", () => {
      let id: unknown = null;
      try {
        const msg = JSON.parse(body) as { id: unknown; method: string; params?: unknown[] };
        id = msg.id;
        const fn = methods[msg.method];
        if (!fn) throw Object.assign(new Error(`method not found: ${msg.method}`), { rpcCode: -32601 });
        const result = fn(msg.params ?? []);
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ jsonrpc: "2.0", id, result }, (_k, v) => (typeof v === "bigint" ? Number(v) : v)));
      } catch (err) {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            jsonrpc: "2.0",
            id,
            error: { code: (err as { rpcCode?: number }).rpcCode ?? -32603, message: String((err as Error).message) },
          }),
        );
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;

  return {
    rpcUrl: `http://127.0.0.1:${port}`,
    svm,
    mint,
    async newFunded(usdc, sol = 1_000_000_000n) {
      const signer = await generateKeyPairSigner();
      svm.airdrop(signer.address, lamports(sol));
      if (usdc > 0n) await setUsdc(signer.address, usdc);
      return signer;
    },
    setUsdc,
    usdcBalance,
    ata,
    landed: () => landed,
    readBack(signature) {
      const wire = wires.get(signature);
      return wire ? Buffer.from(wire).toString("base64") : undefined;
    },
    broadcast(wireBase64) {
      const fn = methods.sendTransaction;
      if (!fn) throw new Error("no sendTransaction");
      return String(fn([wireBase64]));
    },
    hold(on) {
      held = on;
    },
    release() {
      while (queue.length > 0) {
        const wire = queue.shift();
        if (wire) execute(wire);
      }
    },
    stop: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** 32 bytes of an address, for tests that build raw accounts. */
export const addressBytes = (a: string) => getAddressEncoder().encode(address(a));

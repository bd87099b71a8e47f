import { getBase58Decoder, type KeyPairSigner, signBytes } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { ExactEvmScheme } from "@x402/evm/exact/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { decodeFunctionData, type Hex, parseAbi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../../src/db/database.js";
import type { App } from "../../../src/http/types.js";
import { senderProofMessage } from "../../../src/payments/manual/sender.js";
import { paymentIdentifierClientExtension } from "../../../src/payments/x402/buyer.js";
import { type BothChains, startBothChains } from "../../support/chains/both.js";
import type { EvmChain } from "../../support/chains/evm.js";
import type { SvmChain } from "../../support/chains/svm.js";
import { buildSvmTx } from "../../support/chains/svm-tx.js";
import { ENGINES, freshDatabase } from "../../support/databases.js";
import {
  appOn,
  b64json,
  countRows,
  evmKey,
  expectNoOrderData,
  paymentId,
  paymentRequired,
  signedTxHeader,
} from "./helpers.js";

/**
 * "Who may redeem": attacks by a stranger who reads only public data (the chain, a transaction
 * hash) against the payer's entitlement. Each test failed on the code before issue #9's fix:
 * there, every replay below answered 200 with the buyer's order_id and access_url.
 */

const ADMIN = { authorization: "Bearer admin-token-0123456789" };
const SOL_CAIP2 = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const AUTH_ABI = parseAbi([
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)",
  "function transferWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);

let chains: BothChains;
let evm: EvmChain;
let svm: SvmChain;
let feePayer: BothChains["feePayer"];
let solSeller: KeyPairSigner;
let evmSeller: `0x${string}`;

beforeAll(async () => {
  chains = await startBothChains();
  ({ evm, svm, feePayer, solSeller, evmSeller } = chains);
});
afterAll(async () => chains?.stop());

const env = (extra: Record<string, string> = {}) => chains.env(extra);

const post = (app: App, body: unknown, headers: Record<string, string> = {}) =>
  app.inject({ method: "POST", url: "/api/x402-products", headers, payload: body as object });

async function evmPay(app: App, key: Hex, body: unknown, id?: string): Promise<string> {
  const challenge = await post(app, body);
  const client = new x402Client().register(
    "eip155:*",
    new ExactEvmScheme(toClientEvmSigner(privateKeyToAccount(key), evm.publicClient as never)),
  );
  if (id) client.registerExtension(paymentIdentifierClientExtension(id) as never);
  return encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
}

async function svmPay(app: App, buyer: KeyPairSigner, body: unknown, id?: string): Promise<string> {
  const challenge = await post(app, body);
  const client = new x402Client().register("solana:*", new ExactSvmScheme(buyer, { rpcUrl: svm.rpcUrl }));
  if (id) client.registerExtension(paymentIdentifierClientExtension(id) as never);
  return encodePaymentSignatureHeader(await client.createPaymentPayload(paymentRequired(challenge.headers)));
}

const svmHeader = (transaction: string) =>
  b64json({
    x402Version: 2,
    accepted: {
      scheme: "exact",
      network: SOL_CAIP2,
      amount: "1000000",
      asset: svm.mint,
      payTo: solSeller.address,
      maxTimeoutSeconds: 300,
      extra: { feePayer: feePayer.signer.address },
    },
    payload: { transaction },
  });

async function recoverEvm(app: App, key: Hex) {
  const account = privateKeyToAccount(key);
  const c = await app.inject({
    method: "POST",
    url: "/api/orders/recover/challenge",
    payload: { chain: "base", address: account.address },
  });
  expect(c.statusCode, c.body).toBe(201);
  const signature = await account.signMessage({ message: c.json().message });
  return app.inject({ method: "POST", url: "/api/orders/recover", payload: { nonce: c.json().nonce, signature } });
}

async function recoverSolana(app: App, wallet: KeyPairSigner) {
  const c = await app.inject({
    method: "POST",
    url: "/api/orders/recover/challenge",
    payload: { chain: "solana", address: wallet.address },
  });
  expect(c.statusCode, c.body).toBe(201);
  const sig = await signBytes(wallet.keyPair.privateKey, new TextEncoder().encode(c.json().message));
  return app.inject({
    method: "POST",
    url: "/api/orders/recover",
    payload: { nonce: c.json().nonce, signature: getBase58Decoder().decode(sig) },
  });
}

describe("a stranger with public chain data gets no order data; the buyer recovers by wallet signature", () => {
  let app: App;
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, env());
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("Base: a proof rebuilt from the AuthorizationUsed log (zero signature) or the settlement calldata gets 409 and nothing else", async () => {
    const buyer = await evm.newBuyer(5_000_000n);
    const paid = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": await evmPay(app, buyer.key, { sku: "gao" }) });
    expect(paid.statusCode).toBe(200);
    // What anyone reads from the chain: the AuthorizationUsed log and the settlement's calldata.
    const [log] = await evm.publicClient.getContractEvents({
      address: evm.usdc,
      abi: AUTH_ABI,
      eventName: "AuthorizationUsed",
      args: { authorizer: buyer.address },
      fromBlock: 0n,
    });
    if (!log) throw new Error("no AuthorizationUsed log");
    const { authorizer, nonce } = log.args as { authorizer: `0x${string}`; nonce: Hex };
    const now = Math.floor(Date.now() / 1000);
    const rebuilt = b64json({
      x402Version: 2,
      accepted: { scheme: "exact", network: "eip155:8453" },
      payload: {
        signature: `0x${"00".repeat(65)}`,
        authorization: {
          from: authorizer,
          to: evmSeller,
          value: "1000000",
          validAfter: "0",
          validBefore: String(now + 200),
          nonce,
        },
      },
    });
    const r1 = await post(app, { sku: "gao" }, { "X-PAYMENT": rebuilt });
    expect(r1.statusCode).toBe(409);
    expect(r1.json().code).toBe("payment_already_redeemed");
    expectNoOrderData(r1.body);

    const tx = await evm.publicClient.getTransaction({ hash: paid.json().transaction });
    const call = decodeFunctionData({ abi: AUTH_ABI, data: tx.input });
    const [from, to, value, validAfter, validBefore, n, ...sig] = call.args as unknown as unknown[];
    const signature =
      sig.length === 1
        ? (sig[0] as Hex)
        : (`0x${(sig[1] as string).slice(2)}${(sig[2] as string).slice(2)}${Number(sig[0]).toString(16)}` as Hex);
    const exact = b64json({
      x402Version: 2,
      accepted: { scheme: "exact", network: "eip155:8453" },
      payload: {
        signature,
        authorization: {
          from,
          to,
          value: String(value),
          validAfter: String(validAfter),
          validBefore: String(validBefore),
          nonce: n,
        },
      },
    });
    // even with the stranger's own Idempotency-Key: the secret must be the buyer's
    const r2 = await post(app, { sku: "gao" }, { "X-PAYMENT": exact, "Idempotency-Key": paymentId() });
    expect(r2.statusCode).toBe(409);
    expectNoOrderData(r2.body);

    // The buyer (a stock client that sent no identifier) recovers its order by signing with its wallet.
    const rec = await recoverEvm(app, buyer.key);
    expect(rec.statusCode, rec.body).toBe(200);
    expect(rec.json().orders.map((o: { order_id: string }) => o.order_id)).toContain(paid.json().order_id);
    const mine = rec.json().orders.find((o: { order_id: string }) => o.order_id === paid.json().order_id);
    expect(mine.access_url).toBe(paid.json().access_url);
  });

  it("Solana: a landed transaction read back with getTransaction gets 409 and nothing else", async () => {
    const buyer = await svm.newFunded(5_000_000n);
    const paid = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": await svmPay(app, buyer, { sku: "gao" }) });
    expect(paid.statusCode, paid.body).toBe(200);
    const landed = svm.readBack(paid.json().transaction);
    expect(landed).toBeTruthy();
    const res = await post(app, { sku: "gao" }, { "X-PAYMENT": svmHeader(landed as string) });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe("payment_already_redeemed");
    expectNoOrderData(res.body);
    const rec = await recoverSolana(app, buyer);
    expect(rec.statusCode, rec.body).toBe(200);
    expect(rec.json().orders.map((o: { order_id: string }) => o.order_id)).toEqual([paid.json().order_id]);
  });

  it("recovery: another wallet's signature → 401, a used challenge → 409, unknown → 404; a wallet with no orders gets none", async () => {
    const owner = privateKeyToAccount((await evm.newBuyer(0n)).key);
    const c = await app.inject({
      method: "POST",
      url: "/api/orders/recover/challenge",
      payload: { chain: "base", address: owner.address },
    });
    const other = privateKeyToAccount(evmKey().key);
    const forged = await app.inject({
      method: "POST",
      url: "/api/orders/recover",
      payload: { nonce: c.json().nonce, signature: await other.signMessage({ message: c.json().message }) },
    });
    expect(forged.statusCode).toBe(401);
    expect(forged.json().code).toBe("recovery_signature_invalid");
    const signature = await owner.signMessage({ message: c.json().message });
    const ok = await app.inject({
      method: "POST",
      url: "/api/orders/recover",
      payload: { nonce: c.json().nonce, signature },
    });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().orders).toEqual([]);
    const again = await app.inject({
      method: "POST",
      url: "/api/orders/recover",
      payload: { nonce: c.json().nonce, signature },
    });
    expect(again.statusCode).toBe(409);
    const unknown = await app.inject({
      method: "POST",
      url: "/api/orders/recover",
      payload: { nonce: "0".repeat(32), signature },
    });
    expect(unknown.statusCode).toBe(404);
  });

  it("a retry after 202 ends with the order when it carries the payment identifier; without it, 409 and wallet recovery", async () => {
    const slow = await appOn(db, env({ X402_SETTLE_TIMEOUT_SECONDS: "1" }));
    try {
      const withId = await evm.newBuyer(5_000_000n);
      const without = await evm.newBuyer(5_000_000n);
      const h1 = await evmPay(slow, withId.key, { sku: "gao" }, paymentId());
      const h2 = await evmPay(slow, without.key, { sku: "gao" });
      await evm.setAutomine(false);
      try {
        expect((await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": h1 })).statusCode).toBe(202);
        expect((await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": h2 })).statusCode).toBe(202);
      } finally {
        await evm.setAutomine(true);
      }
      await evm.mine(1);
      const r1 = await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": h1 });
      expect(r1.statusCode, r1.body).toBe(200);
      const r2 = await post(slow, { sku: "gao" }, { "PAYMENT-SIGNATURE": h2 });
      expect(r2.statusCode, r2.body).toBe(409);
      expectNoOrderData(r2.body);
      const rec = await recoverEvm(slow, without.key);
      expect(rec.json().orders).toHaveLength(1);
      // each paid once
      expect(await evm.balanceOf(withId.address)).toBe(4_000_000n);
      expect(await evm.balanceOf(without.address)).toBe(4_000_000n);
    } finally {
      await slow.close();
    }
  });

  it("a payment identifier already used for another proof → 409 before anything is settled", async () => {
    const buyer = await evm.newBuyer(5_000_000n);
    const id = paymentId();
    expect(
      (await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": await evmPay(app, buyer.key, { sku: "gao" }, id) }))
        .statusCode,
    ).toBe(200);
    const second = await post(
      app,
      { sku: "gao" },
      { "PAYMENT-SIGNATURE": await evmPay(app, buyer.key, { sku: "gao" }, id) },
    );
    expect(second.statusCode).toBe(409);
    expect(second.json().code).toBe("payment_identifier_reused");
    expect(await evm.balanceOf(buyer.address)).toBe(4_000_000n);
    const bad = await post(
      app,
      { sku: "gao" },
      { "PAYMENT-SIGNATURE": await evmPay(app, buyer.key, { sku: "gao" }), "Idempotency-Key": "short" },
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe("invalid_idempotency_key");
  });
});

describe("a transaction hash belongs to its payer (Base)", () => {
  let app: App;
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, env({ X402_SETTLE_TIMEOUT_SECONDS: "1" }));
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("the facilitator's settlement hash, presented by a third party while the buyer's settlement is pending, is refused; the buyer still gets the order", async () => {
    const buyer = await evm.newBuyer(5_000_000n);
    const thief = await evm.newBuyer(0n);
    const header = await evmPay(app, buyer.key, { sku: "gao" }, paymentId());
    await evm.setAutomine(false);
    let pendingHash: Hex | undefined;
    try {
      expect((await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": header })).statusCode).toBe(202);
      // The thief reads the settlement from the mempool.
      const block = (await evm.rpc("eth_getBlockByNumber", ["pending", false])) as { transactions: Hex[] };
      pendingHash = block.transactions.at(-1);
      expect(pendingHash).toBeTruthy();
      const early = await post(
        app,
        { sku: "gao" },
        { "X-PAYMENT": await signedTxHeader(thief.key, pendingHash as Hex, "gao-entry") },
      );
      expect(early.statusCode).not.toBe(200);
      expectNoOrderData(early.body);
    } finally {
      await evm.setAutomine(true);
    }
    await evm.mine(1);
    for (const proof of [pendingHash as Hex, await signedTxHeader(thief.key, pendingHash as Hex, "gao-entry")]) {
      const late = await post(app, { sku: "gao" }, { "X-PAYMENT": proof });
      expect([402, 409]).toContain(late.statusCode);
      expectNoOrderData(late.body);
    }
    const mine = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": header });
    expect(mine.statusCode, mine.body).toBe(200);
    expect(mine.json().transaction).toBe(pendingHash);
    expect(await countRows(app, "orders")).toBe(1);
  });

  it("a third party presenting a buyer's transfer hash first gets nothing; the buyer then buys with it", async () => {
    const buyer = await evm.newBuyer(2_000_000n);
    const thief = await evm.newBuyer(0n);
    const hash = await evm.transfer(buyer.key, evmSeller, 1_000_000n);
    const bare = await post(app, { sku: "gao" }, { "X-PAYMENT": hash, "Idempotency-Key": paymentId() });
    expect(bare.statusCode).toBe(402);
    expect(bare.json().code).toBe("transaction_proof_signature_required");
    const forged = await post(app, { sku: "gao" }, { "X-PAYMENT": await signedTxHeader(thief.key, hash, "gao-entry") });
    expect(forged.statusCode).toBe(402);
    expect(forged.json().code).toBe("invalid_transaction_proof_signature");
    expectNoOrderData(forged.body);
    const res = await post(app, { sku: "gao" }, { "X-PAYMENT": await signedTxHeader(buyer.key, hash, "gao-entry") });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().transaction).toBe(hash);
  });

  it("a transfer sent by someone else on the buyer's behalf (transaction sender ≠ token sender) is refused", async () => {
    // transferFrom by a spender: the Transfer's `from` is the owner, the transaction's sender is not.
    const owner = await evm.newBuyer(2_000_000n);
    const spender = await evm.newBuyer(0n);
    const ownerAccount = privateKeyToAccount(owner.key);
    const approve = await evm.wallet.writeContract({
      address: evm.usdc,
      abi: evm.abi,
      functionName: "approve",
      args: [privateKeyToAccount(spender.key).address, 1_000_000n],
      account: ownerAccount,
      chain: evm.wallet.chain,
    });
    await evm.publicClient.waitForTransactionReceipt({ hash: approve });
    const hash = await evm.wallet.writeContract({
      address: evm.usdc,
      abi: evm.abi,
      functionName: "transferFrom",
      args: [owner.address, evmSeller, 1_000_000n],
      account: privateKeyToAccount(spender.key),
      chain: evm.wallet.chain,
    });
    await evm.publicClient.waitForTransactionReceipt({ hash });
    const res = await post(app, { sku: "gao" }, { "X-PAYMENT": await signedTxHeader(owner.key, hash, "gao-entry") });
    expect(res.statusCode).toBe(402);
    expect(res.json().code).toBe("invalid_transaction_sender");
  });
});

describe("Solana: only transactions we send, within the fee caps", () => {
  let app: App;
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, env());
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  it("an already-landed transfer is refused (409), nothing granted", async () => {
    const buyer = await svm.newFunded(5_000_000n);
    const tx = await buildSvmTx(svm, buyer, solSeller.address);
    svm.broadcast(tx); // the payer (or anyone holding it) sent it to the cluster itself
    expect(await svm.usdcBalance(buyer.address)).toBe(4_000_000n);
    const res = await post(app, { sku: "gao" }, { "X-PAYMENT": svmHeader(tx) });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json().code).toBe("transaction_already_submitted");
    expect(await countRows(app, "orders")).toBe(0);
  });

  it("a 1.4M compute-unit limit (or a price above the cap) is refused with the caps, nothing sent", async () => {
    const buyer = await svm.newFunded(5_000_000n);
    const landed = svm.landed();
    const big = await post(
      app,
      { sku: "gao" },
      {
        "X-PAYMENT": svmHeader(
          await buildSvmTx(svm, buyer, solSeller.address, { feePayer: feePayer.signer.address, units: 1_400_000 }),
        ),
      },
    );
    expect(big.statusCode).toBe(402);
    expect(big.json().code).toBe("invalid_exact_svm_payload_transaction_instructions_compute_limit_too_high");
    expect(big.json().detail).toContain("40000");
    const pricey = await post(
      app,
      { sku: "gao" },
      {
        "X-PAYMENT": svmHeader(
          await buildSvmTx(svm, buyer, solSeller.address, {
            feePayer: feePayer.signer.address,
            microLamports: 500_001n,
          }),
        ),
      },
    );
    expect(pricey.statusCode).toBe(402);
    expect(pricey.json().code).toBe(
      "invalid_exact_svm_payload_transaction_instructions_compute_price_instruction_too_high",
    );
    expect(svm.landed()).toBe(landed);
  });
});

describe.each(ENGINES)("one on-chain payment, one order, across every rail — %s", (engine) => {
  let app: App;
  let db: Db;
  beforeAll(async () => {
    db = (await freshDatabase(engine)).db;
    app = await appOn(db, env());
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
  });

  const claim = (payload: Record<string, unknown>) => app.inject({ method: "POST", url: "/api/claims", payload });
  const approve = (id: string) =>
    app.inject({ method: "POST", url: `/api/admin/claims/${id}/approve`, headers: ADMIN, payload: {} });

  it("Base hash: claim + approve, then x402 with the same hash → refused; the reverse too", async () => {
    const buyer = await evm.newBuyer(4_000_000n);
    const h1 = await evm.transfer(buyer.key, evmSeller, 1_000_000n);
    const c1 = await claim({ sku: "gao", email: "b@example.com", rail: "crypto_manual_evm", tx: h1 });
    expect(c1.statusCode, c1.body).toBe(201);
    expect((await approve(c1.json().claim_id)).statusCode).toBe(200);
    const x = await post(app, { sku: "gao" }, { "X-PAYMENT": await signedTxHeader(buyer.key, h1, "gao-entry") });
    expect(x.statusCode, x.body).toBe(409);
    expect(x.json().code).toBe("tx_already_used");

    const h2 = await evm.transfer(buyer.key, evmSeller, 1_000_000n);
    const y = await post(app, { sku: "gao" }, { "X-PAYMENT": await signedTxHeader(buyer.key, h2, "gao-entry") });
    expect(y.statusCode, y.body).toBe(200);
    const c2 = await claim({ sku: "gao", email: "b@example.com", rail: "crypto_manual_evm", tx: h2 });
    expect(c2.statusCode).toBe(201);
    const a2 = await approve(c2.json().claim_id);
    expect(a2.statusCode).toBe(409);
    expect(a2.json().code).toBe("tx_already_used");
    for (const h of [h1, h2]) {
      const rows = await db.kysely
        .selectFrom("orders")
        .select("id")
        .where("transaction_ref", "in", [h, h.toLowerCase()])
        .execute();
      expect(rows).toHaveLength(1);
    }
  });

  it("Solana signature: claim + approve, then x402 with that transaction → refused, nothing sent; the reverse too", async () => {
    const buyer = await svm.newFunded(5_000_000n);
    const tx = await buildSvmTx(svm, buyer, solSeller.address); // fully signed by the payer, not sent
    const { getTransactionDecoder, getBase64Encoder } = await import("@solana/kit");
    const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(tx));
    const sig = getBase58Decoder().decode(Object.values(decoded.signatures)[0] as Uint8Array);
    const c1 = await claim({ sku: "gao", email: "s@example.com", rail: "crypto_manual_solana", tx: sig });
    expect(c1.statusCode, c1.body).toBe(201);
    expect((await approve(c1.json().claim_id)).statusCode).toBe(200);
    const landed = svm.landed();
    const x = await post(app, { sku: "gao" }, { "X-PAYMENT": svmHeader(tx) });
    expect(x.statusCode, x.body).toBe(409);
    expect(x.json().code).toBe("tx_already_used");
    expect(svm.landed()).toBe(landed);

    const paid = await post(app, { sku: "gao" }, { "PAYMENT-SIGNATURE": await svmPay(app, buyer, { sku: "gao" }) });
    expect(paid.statusCode, paid.body).toBe(200);
    const c2 = await claim({
      sku: "gao",
      email: "s@example.com",
      rail: "crypto_manual_solana",
      tx: paid.json().transaction,
    });
    expect(c2.statusCode).toBe(201);
    const a2 = await approve(c2.json().claim_id);
    expect(a2.statusCode).toBe(409);
    expect(a2.json().code).toBe("tx_already_used");
  });

  it("claims are bound to their payer: several claims of one transfer, the sender shown, approving one closes the others", async () => {
    const buyer = await evm.newBuyer(2_000_000n);
    const hash = await evm.transfer(buyer.key, evmSeller, 1_000_000n);
    const stranger = await claim({ sku: "gao", email: "thief@example.com", rail: "crypto_manual_evm", tx: hash });
    expect(stranger.statusCode, stranger.body).toBe(201);
    expect(stranger.json().sender).toBe(buyer.address.toLowerCase());
    expect(stranger.json().sender_source).toBe("chain");
    expect(stranger.json().sender_proven).toBe(false);
    const message = senderProofMessage(hash, "gao-entry");
    expect(stranger.json().prove_sender.message).toBe(message);
    // a signature by someone else than the sender is refused
    const forged = await claim({
      sku: "gao",
      email: "thief@example.com",
      rail: "crypto_manual_evm",
      tx: hash,
      sender: buyer.address,
      sender_signature: await privateKeyToAccount(evmKey().key).signMessage({ message }),
    });
    expect(forged.statusCode).toBe(400);
    expect(forged.json().code).toBe("invalid_sender_signature");
    // the payer's own claim is never blocked by the open one
    const own = await claim({
      sku: "gao",
      email: "buyer@example.com",
      rail: "crypto_manual_evm",
      tx: hash,
      sender: buyer.address,
      sender_signature: await privateKeyToAccount(buyer.key).signMessage({ message }),
    });
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json().sender_proven).toBe(true);
    const view = await app.inject({ method: "GET", url: `/api/admin/claims/${own.json().claim_id}`, headers: ADMIN });
    expect(view.json()).toMatchObject({ sender: buyer.address.toLowerCase(), sender_proven: true });
    expect(view.json().same_transfer_claims).toContain(stranger.json().claim_id);
    expect((await approve(own.json().claim_id)).statusCode).toBe(200);
    const closed = await app.inject({ method: "GET", url: `/api/claims/${stranger.json().claim_id}` });
    expect(closed.json().state).toBe("closed");
    expect(closed.json().access_url).toBeNull();
    const mine = await app.inject({ method: "GET", url: `/api/claims/${own.json().claim_id}` });
    expect(mine.json().access_url).toMatch(/\/access\//);
    expect((await approve(stranger.json().claim_id)).statusCode).toBe(409);
  });
});

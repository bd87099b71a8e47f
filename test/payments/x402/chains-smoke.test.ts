import { generateKeyPairSigner } from "@solana/kit";
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme as SvmClient } from "@x402/svm/exact/client";
import { ExactSvmScheme as SvmFacilitator } from "@x402/svm/exact/facilitator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EvmChain, startAnvil } from "../../support/chains/evm.js";
import { type SvmChain, startLiteSvm } from "../../support/chains/svm.js";

describe("anvil + UsdcLike", () => {
  let chain: EvmChain;
  beforeAll(async () => {
    chain = await startAnvil();
  });
  afterAll(async () => chain?.stop());
  it("deploys and mints", async () => {
    const b = await chain.newBuyer(5_000_000n);
    expect(await chain.balanceOf(b.address)).toBe(5_000_000n);
    expect(await chain.publicClient.getChainId()).toBe(8453);
  });
});

describe("litesvm rpc", () => {
  let chain: SvmChain;
  beforeAll(async () => {
    chain = await startLiteSvm();
  });
  afterAll(async () => chain?.stop());
  it("stock client + in-process facilitator", async () => {
    const feePayer = await generateKeyPairSigner();
    chain.svm.airdrop(feePayer.address, 1_000_000_000n as never);
    const buyer = await chain.newFunded(5_000_000n);
    const seller = await generateKeyPairSigner();
    await chain.setUsdc(seller.address, 0n);
    const fac = new x402Facilitator().register(
      "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      new SvmFacilitator(toFacilitatorSvmSigner(feePayer, { defaultRpcUrl: chain.rpcUrl })),
    );
    const req = {
      scheme: "exact",
      network: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp" as const,
      amount: "1000000",
      asset: chain.mint,
      payTo: seller.address,
      maxTimeoutSeconds: 300,
      extra: { feePayer: feePayer.address },
    };
    const client = new x402Client().register("solana:*", new SvmClient(buyer, { rpcUrl: chain.rpcUrl }));
    const payload = await client.createPaymentPayload({
      x402Version: 2,
      resource: { url: "http://x/y" },
      accepts: [req],
    });
    const v = await fac.verify(payload, req);
    expect(v.isValid).toBe(true);
    const s = await fac.settle(payload, req);
    expect(s.success).toBe(true);
    expect(await chain.usdcBalance(seller.address)).toBe(1_000_000n);
  });
});

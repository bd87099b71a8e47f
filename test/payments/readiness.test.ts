import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { testConfig } from "../../src/config.js";
import { cardRailsConfigured, cardReadiness } from "../../src/payments/card/rails.js";
import { manualRails } from "../../src/payments/manual/rails.js";
import { RAIL_IDS, type RailId } from "../../src/payments/matrix/schemas.js";
import { configuredFlags } from "../../src/payments/matrix/service.js";
import {
  railNotConfiguredDetail,
  railReadiness,
  readinessWarnings,
  warnHalfConfiguredRails,
  x402NotConfiguredDetail,
  x402ProofReadiness,
} from "../../src/payments/readiness.js";
import { x402Rails } from "../../src/payments/x402/rails.js";
import { configuredRails } from "../../src/payments/x402/requirements.js";
import { appOn } from "../support/app.js";
import { freshDatabase } from "../support/databases.js";
import { BASE_SETTLEMENT, MANUAL_SETTLEMENT, SOLANA_SETTLEMENT } from "../support/rails.js";

const PAY_TO_BASE = "0x1111111111111111111111111111111111111111";
const PAY_TO_SOLANA = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM";
const HOSTED = { X402_FACILITATOR_URL: "http://127.0.0.1:9" };
const STRIPE = { STRIPE_SECRET_KEY: "sk_test_x", STRIPE_WEBHOOK_SECRET: "whsec_x" };
const LINK = { PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/z", PAYMENT_LINK_ID_ZRW_PRO: "plink_1" };

/** Every setting of every rail: each rail is configured. */
const COMPLETE: Record<string, string> = {
  PAY_TO_BASE,
  PAY_TO_SOLANA,
  PAY_TO_BTC: "bc1qexampleaddress",
  ...BASE_SETTLEMENT,
  ...SOLANA_SETTLEMENT,
  ...MANUAL_SETTLEMENT,
  ...STRIPE,
  ...LINK,
};

/** Each rail, the settings it needs (one line each: drop it and the rail turns off, naming it). */
const NEEDS: [RailId, [string, string][]][] = [
  [
    "card_checkout",
    [
      ["STRIPE_SECRET_KEY", "STRIPE_SECRET_KEY"],
      ["STRIPE_WEBHOOK_SECRET", "STRIPE_WEBHOOK_SECRET"],
    ],
  ],
  [
    "card_payment_link",
    [
      ["STRIPE_SECRET_KEY", "STRIPE_SECRET_KEY"],
      ["STRIPE_WEBHOOK_SECRET", "STRIPE_WEBHOOK_SECRET"],
      ["PAYMENT_LINK_ID_ZRW_PRO", "PAYMENT_LINK_ID_ZRW_PRO"],
    ],
  ],
  [
    "x402_solana_usdc",
    [
      ["PAY_TO_SOLANA", "PAY_TO_SOLANA"],
      ["SOLANA_RPC_URL", "SOLANA_RPC_URL"],
      ["X402_SVM_FEE_PAYER_KEY", "X402_SVM_FEE_PAYER_KEY or X402_FACILITATOR_URL"],
    ],
  ],
  [
    "x402_base_usdc",
    [
      ["PAY_TO_BASE", "PAY_TO_BASE"],
      ["BASE_RPC_URL", "BASE_RPC_URL"],
      ["X402_EVM_FACILITATOR_KEY", "X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL"],
    ],
  ],
  [
    "crypto_manual_solana",
    [
      ["PAY_TO_SOLANA", "PAY_TO_SOLANA"],
      ["CONTACT_EMAIL", "CONTACT_EMAIL"],
      ["ADMIN_TOKEN", "ADMIN_TOKEN"],
    ],
  ],
  [
    "crypto_manual_evm",
    [
      ["PAY_TO_BASE", "PAY_TO_BASE"],
      ["CONTACT_EMAIL", "CONTACT_EMAIL"],
      ["ADMIN_TOKEN", "ADMIN_TOKEN"],
    ],
  ],
  [
    "crypto_manual_btc",
    [
      ["PAY_TO_BTC", "PAY_TO_BTC"],
      ["CONTACT_EMAIL", "CONTACT_EMAIL"],
      ["ADMIN_TOKEN", "ADMIN_TOKEN"],
    ],
  ],
  [
    "wire_invoice_ach",
    [
      ["CONTACT_EMAIL", "CONTACT_EMAIL"],
      ["ADMIN_TOKEN", "ADMIN_TOKEN"],
    ],
  ],
];

const without = (env: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(Object.entries(env).filter(([k]) => !names.includes(k)));

describe("railReadiness: configured means it can settle", () => {
  it("configures every rail but the redirect-link rail with complete settings, with nothing missing", () => {
    const r = railReadiness(testConfig(COMPLETE));
    expect(Object.keys(r)).toEqual([...RAIL_IDS]);
    for (const id of RAIL_IDS) {
      if (id === "redirect_link_checkout") continue;
      expect(r[id], id).toEqual({ configured: true, missing: [], partial: false });
    }
    expect(r.redirect_link_checkout).toMatchObject({ configured: false, partial: false });
    expect(r.redirect_link_checkout.missing).toHaveLength(1);
  });

  it.each(NEEDS)("%s turns off, naming the setting, when any one of its settings is absent", (id, needs) => {
    for (const [setting, named] of needs) {
      const r = railReadiness(testConfig(without(COMPLETE, setting)))[id];
      // partial unless the one setting that is the rail's own was removed (shared settings such as
      // CONTACT_EMAIL alone do not make a manual crypto rail half-configured)
      const partial = !(id.startsWith("crypto_manual_") && setting.startsWith("PAY_TO_"));
      expect(r, `${id} without ${setting}`).toEqual({ configured: false, missing: [named], partial });
      expect(configuredFlags(testConfig(without(COMPLETE, setting)))[id]).toBe(false);
    }
  });

  it("names every missing setting of an empty configuration, and warns about none", () => {
    const r = railReadiness(testConfig());
    expect(r.x402_base_usdc.missing).toEqual([
      "PAY_TO_BASE",
      "BASE_RPC_URL",
      "X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL",
    ]);
    expect(r.x402_solana_usdc.missing).toEqual([
      "PAY_TO_SOLANA",
      "SOLANA_RPC_URL",
      "X402_SVM_FEE_PAYER_KEY or X402_FACILITATOR_URL",
    ]);
    expect(r.card_checkout.missing).toEqual(["STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET"]);
    expect(r.card_payment_link.missing).toEqual([
      "STRIPE_SECRET_KEY",
      "STRIPE_WEBHOOK_SECRET",
      "PAYMENT_LINK_<SKU> and PAYMENT_LINK_ID_<SKU>",
    ]);
    expect(r.wire_invoice_ach.missing).toEqual(["CONTACT_EMAIL", "ADMIN_TOKEN"]);
    expect(r.suite_metered.configured).toBe(false);
    expect(Object.values(r).every((x) => !x.configured && !x.partial && x.missing.length > 0)).toBe(true);
    expect(readinessWarnings(testConfig())).toEqual([]);
  });

  it("takes a hosted facilitator as the Base facilitator and the Solana fee payer", () => {
    const r = railReadiness(
      testConfig({
        PAY_TO_BASE,
        PAY_TO_SOLANA,
        BASE_RPC_URL: "http://rpc.test",
        SOLANA_RPC_URL: "http://rpc.test",
        ...HOSTED,
      }),
    );
    expect(r.x402_base_usdc.configured).toBe(true);
    expect(r.x402_solana_usdc.configured).toBe(true);
    // the shared facilitator URL alone makes no rail half-configured
    expect(railReadiness(testConfig(HOSTED)).x402_base_usdc).toMatchObject({ configured: false, partial: false });
    expect(readinessWarnings(testConfig(HOSTED))).toEqual([]);
  });

  it("says which x402 proof kinds can settle", () => {
    const hashOnly = x402ProofReadiness(testConfig({ PAY_TO_BASE, BASE_RPC_URL: "http://rpc.test" }));
    expect(hashOnly.evm_tx).toEqual({ configured: true, missing: [], partial: false });
    expect(hashOnly.evm_eip3009).toEqual({
      configured: false,
      missing: ["X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL"],
      partial: true,
    });
    const fullOnly = x402ProofReadiness(testConfig({ PAY_TO_SOLANA, SOLANA_RPC_URL: "http://rpc.test" }));
    expect(fullOnly.svm_full.configured).toBe(true);
    expect(fullOnly.svm_partial).toMatchObject({ configured: false, partial: true });
    const payToOnly = x402ProofReadiness(testConfig({ PAY_TO_BASE }));
    expect(payToOnly.evm_tx).toEqual({ configured: false, missing: ["BASE_RPC_URL"], partial: true });
  });

  it("configures suite_metered when any rail that takes any amount is configured", () => {
    const on = (env: Record<string, string>) => railReadiness(testConfig(env)).suite_metered.configured;
    expect(on({ PAY_TO_BASE, ...BASE_SETTLEMENT })).toBe(true);
    expect(on({ PAY_TO_SOLANA, ...SOLANA_SETTLEMENT })).toBe(true);
    expect(on(STRIPE)).toBe(true);
    expect(on({ PAY_TO_BASE, PAY_TO_SOLANA, STRIPE_SECRET_KEY: "sk_test_x" })).toBe(false);
  });

  it("needs a payment link's id: a link without it can never be matched to its sku", () => {
    const r = railReadiness(testConfig({ ...STRIPE, PAYMENT_LINK_ZRW_PRO: "https://buy.stripe.com/z" }));
    expect(r.card_payment_link).toEqual({ configured: false, missing: ["PAYMENT_LINK_ID_ZRW_PRO"], partial: true });
    // a Stripe key without any link is not a half-configured link rail
    expect(railReadiness(testConfig(STRIPE)).card_payment_link.partial).toBe(false);
  });
});

describe("each rail module derives its flag from railReadiness", () => {
  it("x402Rails, configuredRails, manualRails and cardRailsConfigured agree with it", () => {
    for (const env of [
      COMPLETE,
      {},
      { PAY_TO_BASE, PAY_TO_SOLANA },
      without(COMPLETE, "BASE_RPC_URL", "ADMIN_TOKEN"),
    ]) {
      const config = testConfig(env);
      const r = railReadiness(config);
      for (const rail of x402Rails(config)) {
        expect(rail.configured).toBe(r[rail.id].configured);
        expect(rail.missing).toEqual(r[rail.id].missing);
      }
      expect(configuredRails(config).map((x) => x.id)).toEqual(
        x402Rails(config)
          .filter((x) => r[x.id].configured)
          .map((x) => x.id),
      );
      for (const m of manualRails(config)) {
        expect(m.configured).toBe(r[m.id].configured);
        expect(m.missing).toEqual(r[m.id].missing);
      }
      expect(cardRailsConfigured(config)).toEqual({
        checkout: r.card_checkout.configured,
        paymentLinks: r.card_payment_link.configured,
      });
      expect(cardReadiness(config).checkout).toEqual(r.card_checkout);
    }
  });

  it("leaves a half-configured rail out of configuredRails (payTo alone is not enough)", () => {
    expect(configuredRails(testConfig({ PAY_TO_BASE, PAY_TO_SOLANA }))).toEqual([]);
    expect(configuredRails(testConfig({ PAY_TO_BASE, PAY_TO_SOLANA, ...BASE_SETTLEMENT })).map((r) => r.id)).toEqual([
      "x402_base_usdc",
    ]);
  });
});

describe("problem details for rails that cannot settle", () => {
  it("x402NotConfiguredDetail lists each x402 rail's missing settings", () => {
    const d = x402NotConfiguredDetail(testConfig({ PAY_TO_BASE }));
    expect(d.missing).toEqual({
      x402_base_usdc: ["BASE_RPC_URL", "X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL"],
      x402_solana_usdc: ["PAY_TO_SOLANA", "SOLANA_RPC_URL", "X402_SVM_FEE_PAYER_KEY or X402_FACILITATOR_URL"],
    });
    expect(d.detail).toContain("x402_base_usdc needs BASE_RPC_URL, X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL");
    expect(d.detail).toContain("x402_solana_usdc needs PAY_TO_SOLANA");
  });

  it("railNotConfiguredDetail names one rail's missing settings", () => {
    const d = railNotConfiguredDetail(testConfig({ PAY_TO_BASE, CONTACT_EMAIL: "pay@lab.test" }), "crypto_manual_evm");
    expect(d).toEqual({
      detail: "The rail crypto_manual_evm is not configured on this server: it needs ADMIN_TOKEN.",
      missing: { crypto_manual_evm: ["ADMIN_TOKEN"] },
    });
  });
});

describe("start-up warnings", () => {
  it("gives one warning per half-configured rail, naming the rail and its missing settings", () => {
    const w = readinessWarnings(testConfig({ PAY_TO_BASE, STRIPE_SECRET_KEY: "sk_test_x" }));
    expect(w.map((x) => x.rail)).toEqual(["card_checkout", "x402_base_usdc", "crypto_manual_evm"]);
    expect(w[0]?.missing).toEqual(["STRIPE_WEBHOOK_SECRET"]);
    expect(w[1]?.message).toBe(
      "payment rail x402_base_usdc is half-configured and stays off until these settings are given: BASE_RPC_URL; X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL",
    );
    expect(readinessWarnings(testConfig(COMPLETE))).toEqual([]);
    const lines: [Record<string, unknown>, string][] = [];
    warnHalfConfiguredRails(testConfig({ PAY_TO_SOLANA }), { warn: (obj, msg) => lines.push([obj, msg]) });
    expect(lines.map(([o]) => o.rail)).toEqual(["x402_solana_usdc", "crypto_manual_solana"]);
  });

  it("are logged by the app at start-up (one line each)", async () => {
    const { db, dataDir } = await freshDatabase("sqlite");
    const out: string[] = [];
    const stream = new Writable({
      write(chunk, _enc, done) {
        out.push(...String(chunk).split("\n").filter(Boolean));
        done();
      },
    });
    const app = await appOn(
      db,
      {
        LOG_LEVEL: "warn",
        DATA_DIR: dataDir,
        PAY_TO_BASE,
        BASE_RPC_URL: "http://127.0.0.1:9",
        STRIPE_SECRET_KEY: "sk_test_x",
      },
      { logStream: stream },
    );
    try {
      const warned = out
        .map((l) => JSON.parse(l) as { level: number; rail?: string; missing?: string[]; msg: string })
        .filter((l) => l.rail !== undefined);
      expect(warned.map((l) => l.rail)).toEqual(["card_checkout", "x402_base_usdc", "crypto_manual_evm"]);
      expect(warned.every((l) => l.level === 40 && /half-configured/.test(l.msg))).toBe(true);
      expect(warned[1]?.missing).toEqual(["X402_EVM_FACILITATOR_KEY or X402_FACILITATOR_URL"]);
    } finally {
      await app.close();
      await db.close();
    }
  });
});

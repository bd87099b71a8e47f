import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";

describe("config", () => {
  it("has the documented defaults", () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.host).toBe("127.0.0.1");
    expect(c.baseUrl).toBe("http://127.0.0.1:8080");
    expect(c.dataDir.endsWith("/data")).toBe(true);
    expect(c.databaseUrl).toBeUndefined();
    expect(c.usdc.base).toBe("0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913");
    expect(c.usdc.solana).toBe("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v");
    expect(c.payTo).toEqual({ base: undefined, solana: undefined, btc: undefined });
  });

  it.each([
    [{ PORT: "http" }, "PORT"],
    [{ PORT: "70000" }, "PORT"],
    [{ BASE_URL: "lab.example.com" }, "BASE_URL"],
    [{ DATABASE_URL: "mysql://x" }, "DATABASE_URL"],
    [{ ADMIN_TOKEN: "short" }, "ADMIN_TOKEN"],
    [{ PAY_TO_BASE: "0x1234" }, "PAY_TO_BASE"],
    [{ PAY_TO_SOLANA: "not-base58-0OIl" }, "PAY_TO_SOLANA"],
    [{ CONTACT_EMAIL: "nobody" }, "CONTACT_EMAIL"],
    [{ LOG_LEVEL: "loud" }, "LOG_LEVEL"],
    [{ PAYMENT_LINK_ZRW_PRO: "ftp://x" }, "PAYMENT_LINK_ZRW_PRO"],
    [{ X402_EVM_FACILITATOR_KEY: "0xabc" }, "X402_EVM_FACILITATOR_KEY"],
  ])("refuses %o naming the setting", (env, name) => {
    let error: unknown;
    try {
      loadConfig(env as NodeJS.ProcessEnv);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const e = error as ConfigError;
    expect(e.setting).toBe(name);
    expect(e.message).toMatch(new RegExp(`^invalid setting ${name}: .+`));
    expect(e.message).not.toContain("\n");
  });

  it("reads payment links per sku", () => {
    const c = loadConfig({ PAYMENT_LINK_ZRW_PRO: "https://buy.example.com/x", PAYMENT_LINK_GAO_ENTRY: "https://b/y" });
    expect(c.paymentLinks).toEqual({ "zrw-pro": "https://buy.example.com/x", "gao-entry": "https://b/y" });
  });

  it("lists every setting in .env.example and the README", () => {
    const example = fs.readFileSync(new URL("../.env.example", import.meta.url), "utf8");
    const readme = fs.readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const source = fs.readFileSync(new URL("../src/config.ts", import.meta.url), "utf8");
    const names = [...source.matchAll(/^ {2}([A-Z][A-Z0-9_]+): /gm)].map((m) => m[1] as string);
    expect(names.length).toBeGreaterThan(20);
    for (const name of names.filter((n) => n !== "NODE_ENV")) {
      expect(example, `${name} in .env.example`).toMatch(new RegExp(`^#? ?${name}=`, "m"));
      expect(readme.includes(`\`${name}\``), `${name} in README`).toBe(true);
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  BASE_MAINNET,
  BASE_SEPOLIA,
  caip2,
  isCaip2,
  NETWORKS,
  networkLabel,
  networkNames,
  SOLANA_DEVNET,
  SOLANA_MAINNET,
  V1_NAMES,
  v1Name,
} from "../../src/payments/networks.js";
import { type TestApp, testApp } from "../support/app.js";
import { BASE_SETTLEMENT, MANUAL_SETTLEMENT, SOLANA_SETTLEMENT } from "../support/rails.js";

/**
 * Issue #25 item 4: networks are CAIP-2 ids everywhere, except an x402 v1 body (`x402Version: 1`),
 * which uses x402 v1's own names. src/payments/networks.ts owns the mapping.
 */

const FULL = {
  PAY_TO_BASE: "0x1111111111111111111111111111111111111111",
  ...BASE_SETTLEMENT,
  PAY_TO_SOLANA: "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM",
  ...SOLANA_SETTLEMENT,
  ...MANUAL_SETTLEMENT,
};

/** Names that are neither CAIP-2 nor allowed outside a v1 body. */
const RETIRED = /\b(solana-mainnet-beta|solana-mainnet|solana-devnet|base-sepolia)\b/;

/** Every document a client discovers the service by (JSON and text). */
const JSON_DOCS = [
  "/api/welcome",
  "/api/agent",
  "/platform.json",
  "/agents.json",
  "/.well-known/agent-card.json",
  "/.well-known/mcp.json",
  "/.well-known/mcp/server-card.json",
  "/.well-known/x402",
  "/.well-known/api-catalog",
  "/toys.json",
  "/ideas.json",
  "/api/payments",
  "/api/payments?sku=zrw-pro",
  "/api/x402-products",
  "/api/x402-products?sku=zrw-pro",
  "/openapi.json",
];
const TEXT_DOCS = ["/llms.txt", "/llms-full.txt", "/agents.txt", "/pricing.md", "/openapi.yaml"];

/**
 * Every value of a `network` or `caip2` key and every item of a `networks` array, with whether an
 * enclosing object says `x402Version: 1`.
 */
function networkValues(
  value: unknown,
  path = "$",
  v1 = false,
  out: { path: string; name: string; v1: boolean }[] = [],
) {
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      networkValues(item, `${path}[${i}]`, v1, out);
    });
    return out;
  }
  if (!value || typeof value !== "object") return out;
  const obj = value as Record<string, unknown>;
  const inV1 = v1 || obj.x402Version === 1;
  for (const [key, v] of Object.entries(obj)) {
    const at = `${path}.${key}`;
    if ((key === "network" || key === "caip2") && typeof v === "string") out.push({ path: at, name: v, v1: inV1 });
    else if (key === "networks" && Array.isArray(v)) {
      for (const [i, n] of v.entries()) if (typeof n === "string") out.push({ path: `${at}[${i}]`, name: n, v1: inV1 });
    } else networkValues(v, at, inV1, out);
  }
  return out;
}

describe("network names: the mapping (src/payments/networks.ts)", () => {
  it("maps the four x402 networks between CAIP-2, the x402 v1 name and a label", () => {
    expect(NETWORKS.filter((n) => n.v1).map((n) => [n.caip2, n.v1])).toEqual([
      [BASE_MAINNET, "base"],
      [BASE_SEPOLIA, "base-sepolia"],
      [SOLANA_MAINNET, "solana"],
      [SOLANA_DEVNET, "solana-devnet"],
    ]);
    expect([BASE_MAINNET, BASE_SEPOLIA, SOLANA_MAINNET, SOLANA_DEVNET]).toEqual([
      "eip155:8453",
      "eip155:84532",
      "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
      "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
    ]);
    for (const n of NETWORKS) {
      expect(isCaip2(n.caip2), n.caip2).toBe(true);
      expect(caip2(n.caip2)).toBe(n.caip2);
      if (n.v1) expect(caip2(n.v1)).toBe(n.caip2);
      for (const alias of n.aliases) expect(caip2(alias)).toBe(n.caip2);
    }
    expect(caip2("solana-mainnet-beta")).toBe(SOLANA_MAINNET);
    expect(v1Name(SOLANA_MAINNET)).toBe("solana");
    expect(v1Name("solana-mainnet-beta")).toBe("solana");
    expect(v1Name(BASE_SEPOLIA)).toBe("base-sepolia");
    expect(networkLabel(BASE_MAINNET)).toBe("Base");
    expect(networkLabel(SOLANA_DEVNET)).toBe("Solana devnet (test network)");
  });

  it("a chain x402 v1 has no name for (a local anvil) keeps its CAIP-2 id; unknown names are not guessed", () => {
    expect(caip2("eip155:31337")).toBe("eip155:31337");
    expect(v1Name("eip155:31337")).toBe("eip155:31337");
    expect(networkLabel("eip155:31337")).toBe("EVM chain 31337");
    expect(caip2("ethereum")).toBeUndefined();
    expect(caip2("eip155:0")).toBeUndefined();
    expect(networkNames("eip155:31337")).toEqual(["eip155:31337"]);
    expect(networkNames("base")).toEqual(["eip155:8453", "base"]);
    expect(isCaip2("solana-mainnet-beta")).toBe(false);
  });
});

describe("network names in what the service serves", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp("sqlite", FULL);
  });
  afterAll(async () => {
    await t.close();
  });

  it("every discovery document names networks by CAIP-2 (no retired name anywhere)", async () => {
    const bad: string[] = [];
    let seen = 0;
    for (const url of JSON_DOCS) {
      const res = await t.app.inject({ method: "GET", url });
      expect(res.statusCode, url).toBe(200);
      if (RETIRED.test(res.body)) bad.push(`${url}: ${RETIRED.exec(res.body)?.[0]}`);
      for (const n of networkValues(res.json())) {
        seen++;
        if (n.v1 ? !V1_NAMES.includes(n.name) : !isCaip2(n.name)) bad.push(`${url} ${n.path} = ${n.name}`);
      }
    }
    for (const url of TEXT_DOCS) {
      const res = await t.app.inject({ method: "GET", url });
      expect(res.statusCode, url).toBe(200);
      if (RETIRED.test(res.body)) bad.push(`${url}: ${RETIRED.exec(res.body)?.[0]}`);
      expect(res.body, url).toContain(SOLANA_MAINNET);
    }
    const yaml = parse((await t.app.inject({ method: "GET", url: "/openapi.yaml" })).body);
    for (const n of networkValues(yaml)) if (!n.v1 && !isCaip2(n.name)) bad.push(`/openapi.yaml ${n.path} = ${n.name}`);
    expect(bad).toEqual([]);
    expect(seen).toBeGreaterThan(20);
  });

  it("the 402: the v1 body uses x402 v1 names, the v2 PAYMENT-REQUIRED header CAIP-2", async () => {
    const res = await t.app.inject({ method: "POST", url: "/api/x402-products", payload: { sku: "zrw-pro" } });
    expect(res.statusCode).toBe(402);
    const body = res.json() as { x402Version: number; accepts: { network: string }[] };
    expect(body.x402Version).toBe(1);
    expect(body.accepts.map((a) => a.network)).toEqual(["solana", "base"]);
    const header = res.headers["payment-required"];
    expect(typeof header).toBe("string");
    const v2 = JSON.parse(Buffer.from(header as string, "base64").toString("utf8")) as {
      x402Version: number;
      accepts: { network: string }[];
    };
    expect(v2.x402Version).toBe(2);
    expect(v2.accepts.map((a) => a.network)).toEqual([SOLANA_MAINNET, BASE_MAINNET]);
  });

  it("a proof may still name the network the old way (v1 name, CAIP-2 or the retired spec name)", async () => {
    const codeFor = async (network: string) => {
      const proof = Buffer.from(
        JSON.stringify({ x402Version: 1, scheme: "exact", network, payload: { transaction: "x" } }),
      ).toString("base64");
      const res = await t.app.inject({
        method: "POST",
        url: "/api/x402-products",
        payload: { sku: "zrw-pro" },
        headers: { "x-payment": proof },
      });
      return res.json().code as string;
    };
    // the control: a network nobody pays on here is refused as such
    expect(await codeFor("ethereum")).toBe("unsupported_network");
    for (const network of ["solana", "solana-mainnet-beta", SOLANA_MAINNET, "base", BASE_MAINNET]) {
      // Accepted as this network (then refused for the payload itself), never `unsupported_network`.
      expect(await codeFor(network), network).not.toBe("unsupported_network");
    }
  });
});

/**
 * Network names: the one place that maps a network's CAIP-2 id, its x402 v1 name and the label a
 * person reads. Every body, document and page names a network by its CAIP-2 id (`eip155:8453`,
 * `solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp`); only an x402 v1 body (`x402Version: 1`, its
 * `accepts[].network`) uses the v1 name (`base`, `base-sepolia`, `solana`, `solana-devnet`), because
 * x402 v1 clients know no other. Inbound, every name below is accepted (a client may have copied an
 * older document's `solana-mainnet-beta`).
 */

export type NetworkChain = "base" | "solana" | "bitcoin";

export const BASE_MAINNET = "eip155:8453";
export const BASE_SEPOLIA = "eip155:84532";
export const SOLANA_MAINNET = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
export const SOLANA_DEVNET = "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1";
/** Bitcoin mainnet (CAIP-2 `bip122:<genesis hash prefix>`): the manual BTC rail only; x402 has no Bitcoin. */
export const BITCOIN_MAINNET = "bip122:000000000019d6689c085ae165831e93";

export interface NetworkName {
  /** CAIP-2 id: what every v2 body, discovery document and page shows. */
  caip2: string;
  /** x402 v1 name (v1 bodies only); none for a network x402 does not pay on. */
  v1?: string;
  /** What a person reads. */
  label: string;
  chain: NetworkChain;
  testnet: boolean;
  /** Older names accepted inbound (never written). */
  aliases: readonly string[];
  /** Solana cluster name, which @solana/mpp's `methodDetails.network` requires (that protocol's own name). */
  cluster?: string;
}

/** The networks with names of their own. A Base chain id not listed (a local anvil) is `eip155:<id>`. */
export const NETWORKS: readonly NetworkName[] = [
  { caip2: BASE_MAINNET, v1: "base", label: "Base", chain: "base", testnet: false, aliases: [] },
  {
    caip2: BASE_SEPOLIA,
    v1: "base-sepolia",
    label: "Base Sepolia (test network)",
    chain: "base",
    testnet: true,
    aliases: [],
  },
  {
    caip2: SOLANA_MAINNET,
    v1: "solana",
    label: "Solana",
    chain: "solana",
    testnet: false,
    aliases: ["solana-mainnet-beta"],
    cluster: "mainnet-beta",
  },
  {
    caip2: SOLANA_DEVNET,
    v1: "solana-devnet",
    label: "Solana devnet (test network)",
    chain: "solana",
    testnet: true,
    aliases: [],
    cluster: "devnet",
  },
  { caip2: BITCOIN_MAINNET, label: "Bitcoin", chain: "bitcoin", testnet: false, aliases: ["bitcoin"] },
];

/** Every name x402 v1 defines for the networks above (the only non-CAIP-2 names ever written). */
export const V1_NAMES: readonly string[] = NETWORKS.flatMap((n) => (n.v1 ? [n.v1] : []));

const EIP155 = /^eip155:([1-9][0-9]{0,9})$/;

/** The CAIP-2 id of the Base rail's chain. */
export function baseCaip2(chainId: number): string {
  return `eip155:${chainId}`;
}

/** The entry of a known network, by any of its names (CAIP-2, v1 name or alias). */
export function networkOf(name: string): NetworkName | undefined {
  return NETWORKS.find((n) => n.caip2 === name || n.v1 === name || n.aliases.includes(name));
}

/**
 * The CAIP-2 id of a network named any way (`base` → `eip155:8453`, `solana-mainnet-beta` →
 * `solana:5eykt…`); an `eip155:<id>` of a chain not listed passes through; undefined when unknown.
 */
export function caip2(name: string): string | undefined {
  const known = networkOf(name);
  if (known) return known.caip2;
  return EIP155.test(name) ? name : undefined;
}

/**
 * The x402 v1 name of a network (for `x402Version: 1` bodies only). A chain x402 v1 has no name
 * for (a local test chain, `eip155:31337`) keeps its CAIP-2 id.
 */
export function v1Name(name: string): string {
  const known = networkOf(name);
  return known?.v1 ?? known?.caip2 ?? name;
}

/** What a person reads: `Base`, `Solana devnet (test network)`, `EVM chain 31337` for a local chain. */
export function networkLabel(name: string): string {
  const known = networkOf(name);
  if (known) return known.label;
  const evm = EIP155.exec(name);
  if (evm) return `EVM chain ${evm[1]}`;
  return name;
}

/** `Base (eip155:8453)`: the label with the id an agent copies. */
export function networkTitle(name: string): string {
  const id = caip2(name) ?? name;
  return `${networkLabel(id)} (${id})`;
}

/** Every name that identifies a network inbound (CAIP-2 first, then the v1 name, then the aliases). */
export function networkNames(name: string): string[] {
  const known = networkOf(name);
  if (known) return [known.caip2, ...(known.v1 ? [known.v1] : []), ...known.aliases];
  const id = caip2(name);
  return id ? [id] : [];
}

/** The Solana cluster name of a Solana network (`mainnet-beta`), for MPP's `methodDetails.network` only. */
export function solanaCluster(name: string): string | undefined {
  return networkOf(name)?.cluster;
}

/** True when a name is a CAIP-2 id (`namespace:reference`), the form every non-v1 body must use. */
export function isCaip2(name: string): boolean {
  return /^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$/.test(name);
}

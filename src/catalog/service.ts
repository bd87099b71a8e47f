import { notFound, Problem } from "../http/problem.js";
import { ALIASES, PRODUCTS, type ProductDefinition, RETIRED_SKUS } from "./products.js";

export interface Product extends ProductDefinition {
  /** Two-decimal US dollar string derived from amountCents, e.g. "199.00". */
  amountUsd: string;
  /** Aliases that resolve to this sku. */
  aliases: string[];
}

/** Integer cents → "12.34". Never goes through floating point. */
export function formatUsd(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0) throw new RangeError(`not a price in cents: ${cents}`);
  const whole = Math.trunc(cents / 100);
  const rest = cents % 100;
  return `${whole}.${String(rest).padStart(2, "0")}`;
}

/**
 * The catalog: products, aliases and retired skus, validated once.
 * Every document that shows a price reads it from here.
 */
export class Catalog {
  private readonly bySku = new Map<string, Product>();
  private readonly aliasMap = new Map<string, string>();
  private readonly retired = new Map<string, string>();

  constructor(
    definitions: readonly ProductDefinition[] = PRODUCTS,
    aliases: Readonly<Record<string, string>> = ALIASES,
    retired: Readonly<Record<string, string>> = RETIRED_SKUS,
  ) {
    for (const [sku, why] of Object.entries(retired)) this.retired.set(sku, why);
    for (const def of definitions) {
      if (!/^[a-z0-9][a-z0-9-]*$/.test(def.sku)) throw new Error(`catalog: bad sku ${def.sku}`);
      if (!Number.isSafeInteger(def.amountCents) || def.amountCents <= 0) {
        throw new Error(`catalog: price of ${def.sku} must be a positive integer number of cents`);
      }
      if (this.bySku.has(def.sku)) throw new Error(`catalog: duplicate sku ${def.sku}`);
      this.bySku.set(def.sku, { ...def, amountUsd: formatUsd(def.amountCents), aliases: [] });
    }
    for (const [alias, target] of Object.entries(aliases)) {
      const key = alias.toLowerCase();
      if (!this.bySku.has(target) && !this.retired.has(target)) {
        throw new Error(`catalog: alias ${alias} points to unknown sku ${target}`);
      }
      this.aliasMap.set(key, target);
      this.bySku.get(target)?.aliases.push(key);
    }
  }

  list(): Product[] {
    return [...this.bySku.values()];
  }

  skus(): string[] {
    return [...this.bySku.keys()];
  }

  aliasTable(): Record<string, string> {
    return Object.fromEntries(this.aliasMap);
  }

  retiredTable(): Record<string, string> {
    return Object.fromEntries(this.retired);
  }

  /** The canonical sku for a sku or alias (case-insensitive), or undefined. */
  canonical(skuOrAlias: string): string | undefined {
    const key = skuOrAlias.trim().toLowerCase();
    if (this.bySku.has(key) || this.retired.has(key)) return key;
    return this.aliasMap.get(key);
  }

  find(skuOrAlias: string): Product | undefined {
    const sku = this.canonical(skuOrAlias);
    return sku === undefined ? undefined : this.bySku.get(sku);
  }

  /** Resolves a sku or alias; unknown → 404 `unknown_sku`, retired → 410 `sku_retired`. */
  resolve(skuOrAlias: string): Product {
    const sku = this.canonical(skuOrAlias);
    if (sku !== undefined) {
      const retired = this.retired.get(sku);
      if (retired !== undefined) {
        throw new Problem(410, "sku_retired", `The sku ${sku} is retired. ${retired}`, { sku, retired: true });
      }
      const product = this.bySku.get(sku);
      if (product) return product;
    }
    throw notFound("unknown_sku", `No product has the sku or alias "${skuOrAlias}".`, {
      sku: skuOrAlias,
      valid_skus: this.skus(),
    });
  }

  /** A copy of this catalog with one price changed (operators' price overrides, tests). */
  withPrice(sku: string, amountCents: number): Catalog {
    const defs = this.list().map(({ amountUsd: _u, aliases: _a, ...def }) =>
      def.sku === sku ? { ...def, amountCents } : def,
    );
    return new Catalog(defs, this.aliasTable(), this.retiredTable());
  }
}

import { createHmac } from "node:crypto";
import { isIPv4, isIPv6 } from "node:net";

/**
 * The client IP as the per-IP budgets count it (issue #21 item 2): an IPv4 address, or an IPv6
 * address's /64 (the usual allocation of one subscriber, who can otherwise pick any of 2^64
 * addresses); an IPv4-mapped IPv6 address counts as its IPv4 address. The IP itself is never
 * stored: `clientIpHash` is HMAC-SHA256 under a server key, cut to 16 bytes (hex), so rows from
 * different clients stay apart and the stored value does not show the address (with the key, an
 * IPv4 address can be found again by trying all 2^32: it is pseudonymous, not anonymous).
 */

/** `request.ip` reduced to what a budget counts: an IPv4 address or an IPv6 /64 prefix. */
export function ipSubject(ip: string): string {
  let a = ip.trim().toLowerCase();
  const zone = a.indexOf("%");
  if (zone >= 0) a = a.slice(0, zone);
  if (isIPv4(a)) return a;
  if (!isIPv6(a)) return a;
  const g = ipv6Groups(a);
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) {
    const [hi, lo] = [g[6] ?? 0, g[7] ?? 0];
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return `${g
    .slice(0, 4)
    .map((x) => x.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (an embedded IPv4 tail included). */
function ipv6Groups(address: string): number[] {
  let a = address;
  const lastColon = a.lastIndexOf(":");
  const tail = a.slice(lastColon + 1);
  if (isIPv4(tail)) {
    const p = tail.split(".").map(Number) as [number, number, number, number];
    a = `${a.slice(0, lastColon + 1)}${((p[0] << 8) | p[1]).toString(16)}:${((p[2] << 8) | p[3]).toString(16)}`;
  }
  const [head = "", rest] = a.split("::");
  const h = head === "" ? [] : head.split(":");
  const r = rest === undefined ? null : rest === "" ? [] : rest.split(":");
  const groups = r === null ? h : [...h, ...new Array<string>(8 - h.length - r.length).fill("0"), ...r];
  return groups.map((x) => Number.parseInt(x, 16));
}

/** HMAC-SHA256(key, "client-ip:v1:" ‖ subject), first 16 bytes as hex (32 characters). */
export function clientIpHash(key: string, ip: string): string {
  return createHmac("sha256", key)
    .update(`client-ip:v1:${ipSubject(ip)}`)
    .digest("hex")
    .slice(0, 32);
}

/** Whole seconds from `now` to the next UTC midnight (at least 1): the Retry-After of a per-day limit. */
export function secondsToNextUtcDay(now: Date): number {
  const next = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return Math.max(1, Math.ceil((next - now.getTime()) / 1000));
}

/** The UTC calendar day of a time: YYYY-MM-DD. */
export const dayOf = (at: Date): string => at.toISOString().slice(0, 10);

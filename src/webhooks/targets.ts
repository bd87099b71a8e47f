import dns from "node:dns";
import net from "node:net";
import { Problem } from "../http/problem.js";

/**
 * Where a webhook may go (issue #23 item 1; docs/suite.md "Webhooks", SECURITY.md "SSRF"). A
 * callback URL must be `https`, carry no credentials, and its host must resolve (every address
 * the resolver answers) only to public unicast addresses: loopback, private (RFC 1918, ULA),
 * shared (CGNAT 100.64/10), link-local (169.254/16, including the cloud metadata address
 * 169.254.169.254; fe80::/10), unspecified, multicast, broadcast, documentation, benchmarking,
 * reserved ranges and IPv4-mapped or -translated forms of any of them are refused. IPv6 must be
 * global unicast (2000::/3) outside the special ranges. The check runs when the quote is made and
 * again before every delivery; the delivery then connects to the address it checked (the request's
 * `lookup` is pinned to it), so a name that re-resolves elsewhere in between (DNS rebinding) is
 * not followed. `WEBHOOK_ALLOW_PRIVATE=true` lifts the address rules and allows `http` (a
 * receiver on the same machine or network, and the tests).
 */

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses. */
export type Resolver = (host: string) => Promise<ResolvedAddress[]>;

/**
 * With WEBHOOK_ALLOW_PRIVATE: the system resolver (getaddrinfo: /etc/hosts and local names, as
 * http.request uses). It runs on libuv's small thread pool and cannot be cancelled, so it is not
 * used for callers' names otherwise.
 */
export const systemResolver: Resolver = async (host) => {
  const found = await dns.promises.lookup(host, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * The default: DNS queries (A and AAAA, CNAMEs followed) to the system's name servers through
 * c-ares, off the thread pool, 2 s per try and 2 tries: a caller's name whose servers never answer
 * holds nothing but a timer (getaddrinfo would hold one of libuv's 4 threads for its whole
 * timeout, which file I/O shares).
 */
export const dnsResolver: Resolver = async (host) => {
  const resolver = new dns.promises.Resolver({ timeout: 2_000, tries: 2 });
  const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
  const found: ResolvedAddress[] = [
    ...(v4.status === "fulfilled" ? v4.value.map((address) => ({ address, family: 4 as const })) : []),
    ...(v6.status === "fulfilled" ? v6.value.map((address) => ({ address, family: 6 as const })) : []),
  ];
  if (found.length === 0 && v4.status === "rejected") throw v4.reason;
  return found;
};

export interface TargetPolicy {
  /** WEBHOOK_ALLOW_PRIVATE: http and non-public addresses allowed */
  allowPrivate: boolean;
  /** default: `dnsResolver`, or `systemResolver` when private targets are allowed */
  resolve?: Resolver;
  /** the resolver gets this long (ms) before the URL is refused */
  resolveTimeoutMs?: number;
}

export const MAX_CALLBACK_URL_LENGTH = 2048;

/** Why a target is refused (the problem's `reason`). */
export type RefusalReason = "invalid_url" | "scheme" | "credentials" | "unresolvable" | "non_public_address";

export class TargetRefused extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
  ) {
    super(message);
  }
}

const V4_DENY: [string, number][] = [
  ["0.0.0.0", 8], // "this network", 0.0.0.0
  ["10.0.0.0", 8], // RFC 1918
  ["100.64.0.0", 10], // shared address space (CGNAT)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata 169.254.169.254
  ["172.16.0.0", 12], // RFC 1918
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // TEST-NET-1
  ["192.88.99.0", 24], // 6to4 relay anycast
  ["192.168.0.0", 16], // RFC 1918
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // TEST-NET-2
  ["203.0.113.0", 24], // TEST-NET-3
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, and 255.255.255.255 broadcast
];

const V6_DENY: [string, number][] = [
  ["64:ff9b:1::", 48], // local-use IPv4/IPv6 translation
  ["100::", 64], // discard-only
  ["2001::", 23], // IETF protocol assignments (Teredo 2001::/32, ORCHID, …)
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 (embeds an IPv4 address)
  ["3fff::", 20], // documentation (RFC 9637)
  ["5f00::", 16], // segment routing SIDs
];

const v4Deny = new net.BlockList();
for (const [a, p] of V4_DENY) v4Deny.addSubnet(a, p, "ipv4");
const v6Deny = new net.BlockList();
for (const [a, p] of V6_DENY) v6Deny.addSubnet(a, p, "ipv6");
const v6GlobalUnicast = new net.BlockList();
v6GlobalUnicast.addSubnet("2000::", 3, "ipv6");

/** The 16 bytes of an IPv6 address (any textual form net.isIPv6 accepts). */
function v6Bytes(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4?.[1]) {
    const parts = v4[1].split(".").map(Number);
    tail.push(...parts);
    text = `${text.slice(0, -v4[1].length)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const h = groups(head);
  const r = rest === undefined ? [] : groups(rest);
  const fill = rest === undefined ? [] : new Array(8 - h.length - r.length).fill("0");
  const all = [...h, ...fill, ...r].map((g) => Number.parseInt(g, 16));
  const bytes = all.flatMap((g) => [(g >> 8) & 0xff, g & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** True when `address` (an IPv4 or IPv6 literal) is a public unicast address. */
export function isPublicAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return !v4Deny.check(address, "ipv4");
  if (family !== 6) return false;
  const b = v6Bytes(address.split("%")[0] ?? address);
  const v4Of = (at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  // IPv4-mapped (::ffff:a.b.c.d) and NAT64 well-known (64:ff9b::a.b.c.d): the IPv4 address decides
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return isPublicAddress(v4Of(12));
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return isPublicAddress(v4Of(12));
  // ::, ::1, IPv4-compatible, ULA fc00::/7, link-local fe80::/10, multicast ff00::/8: outside 2000::/3
  if (!v6GlobalUnicast.check(address, "ipv6")) return false;
  return !v6Deny.check(address, "ipv6");
}

/** A URL's host without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** Parses and checks the form of a callback URL (no DNS): https (or http when allowed), no credentials. */
export function parseTarget(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused("invalid_url", "callback_url is not an absolute URL");
  }
  if (raw.length > MAX_CALLBACK_URL_LENGTH) {
    throw new TargetRefused("invalid_url", `callback_url is longer than ${MAX_CALLBACK_URL_LENGTH} characters`);
  }
  const schemes = allowPrivate ? ["https:", "http:"] : ["https:"];
  if (!schemes.includes(url.protocol)) {
    throw new TargetRefused(
      "scheme",
      allowPrivate ? "callback_url must be an http(s) URL" : "callback_url must be an https URL",
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new TargetRefused("credentials", "callback_url must not carry a user name or password");
  }
  if (hostOf(url) === "") throw new TargetRefused("invalid_url", "callback_url has no host");
  url.hash = "";
  return url;
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The addresses a target's host resolves to, after the checks: every one must be public (unless
 * allowed). Throws `TargetRefused`. An IP literal is its own only address.
 */
export async function resolveTarget(url: URL, policy: TargetPolicy): Promise<ResolvedAddress[]> {
  const host = hostOf(url);
  const literal = net.isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      const resolve = policy.resolve ?? (policy.allowPrivate ? systemResolver : dnsResolver);
      addresses = await withTimeout(resolve(host), policy.resolveTimeoutMs ?? 5_000);
    } catch (err) {
      const why = err instanceof Error ? ((err as NodeJS.ErrnoException).code ?? err.message) : String(err);
      throw new TargetRefused("unresolvable", `the host of callback_url does not resolve (${why})`);
    }
    if (addresses.length === 0) throw new TargetRefused("unresolvable", "the host of callback_url has no address");
  }
  if (!policy.allowPrivate) {
    const bad = addresses.find((a) => !isPublicAddress(a.address));
    if (bad) {
      throw new TargetRefused(
        "non_public_address",
        `the host of callback_url resolves to ${bad.address}, which is not a public unicast address`,
      );
    }
  }
  return addresses;
}

/**
 * Checks a callback URL as a suite request gives it: its normalized form, or 400
 * `callback_url_refused` (with `reason`).
 */
export async function checkCallbackUrl(raw: string, policy: TargetPolicy): Promise<string> {
  try {
    const url = parseTarget(raw, policy.allowPrivate);
    await resolveTarget(url, policy);
    return url.href;
  } catch (err) {
    if (err instanceof TargetRefused) {
      throw new Problem(
        400,
        "callback_url_refused",
        `${err.message}. Webhooks go to https URLs whose host resolves only to public addresses.`,
        { field: "callback_url", reason: err.reason },
      );
    }
    throw err;
  }
}

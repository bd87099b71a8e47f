import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { VERSIONS } from "../versions.js";
import { type ResolvedAddress, resolveTarget, type TargetPolicy, TargetRefused } from "./targets.js";

/**
 * One webhook POST: the target is checked again (resolved now, every address public unless
 * WEBHOOK_ALLOW_PRIVATE) and the connection goes to the first checked address: the request's
 * `lookup` answers only that address, so DNS is not asked again between the check and the connect
 * (no rebinding window); the URL's host stays in `Host` and in TLS SNI, and the certificate is
 * verified against it. Redirects are not followed (a 3xx is a failed attempt), the answer's body is
 * not read beyond its first chunk (at most `MAX_RESPONSE_BYTES`), and the whole attempt ends after `timeoutMs`.
 */

export const MAX_RESPONSE_BYTES = 64 * 1024;

export interface SendResult {
  /** the HTTP status, when an answer arrived */
  status: number | null;
  /** why there was no answer (refused target, DNS, connect, TLS, timeout); null when answered */
  error: string | null;
  durationMs: number;
}

export interface SendOptions extends TargetPolicy {
  timeoutMs: number;
}

function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  }) as unknown as LookupFunction;
}

export async function sendWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const done = (r: Omit<SendResult, "durationMs">): SendResult => ({ ...r, durationMs: Math.round(elapsed()) });
  let url: URL;
  let pinned: ResolvedAddress;
  try {
    url = new URL(rawUrl);
    const allowed = options.allowPrivate ? ["https:", "http:"] : ["https:"];
    if (!allowed.includes(url.protocol)) throw new TargetRefused("scheme", "the target is not https");
    const addresses = await resolveTarget(url, {
      ...options,
      resolveTimeoutMs: Math.min(options.resolveTimeoutMs ?? 5_000, options.timeoutMs),
    });
    pinned = addresses[0] as ResolvedAddress;
  } catch (err) {
    const why = err instanceof TargetRefused ? `target_refused: ${err.message}` : String(err);
    return done({ status: null, error: why.slice(0, 300) });
  }
  const client = url.protocol === "https:" ? https : http;
  const payload = Buffer.from(body, "utf8");
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: Omit<SendResult, "durationMs">) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(r));
    };
    const req = client.request(
      url,
      {
        method: "POST",
        agent: false,
        lookup: pinnedLookup(pinned),
        headers: {
          "content-type": "application/json",
          "content-length": String(payload.length),
          "user-agent": `LabPhi-Webhooks/${VERSIONS.api}`,
          ...headers,
        },
      },
      (res) => {
        // The status decides; the answer's body is not needed: a little is read, then the socket closes.
        finish({ status: res.statusCode ?? null, error: null });
        let read = 0;
        res.on("data", (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) res.destroy();
        });
        res.on("error", () => {});
        setImmediate(() => res.destroy());
      },
    );
    // the whole attempt (resolution included) ends after timeoutMs
    const timer = setTimeout(
      () => {
        req.destroy(new Error(`no answer within ${options.timeoutMs} ms`));
      },
      Math.max(1, options.timeoutMs - elapsed()),
    );
    req.on("error", (err) => {
      const code = (err as NodeJS.ErrnoException).code;
      finish({ status: null, error: (code ? `${code}: ${err.message}` : err.message).slice(0, 300) });
    });
    req.end(payload);
  });
}

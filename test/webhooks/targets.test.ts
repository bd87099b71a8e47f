import { execFileSync } from "node:child_process";
import fs from "node:fs";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { sendWebhook } from "../../src/webhooks/sender.js";
import { signature, webhookHeaders, webhookSecret } from "../../src/webhooks/signing.js";
import { checkCallbackUrl, isPublicAddress, type Resolver } from "../../src/webhooks/targets.js";

/**
 * Issue #23 item 1: which addresses a webhook may reach, and the Standard Webhooks signature
 * (checked against the `standardwebhooks` package, both ways).
 */

const NOT_PUBLIC = [
  "0.0.0.0",
  "0.1.2.3",
  "10.0.0.1",
  "100.64.0.1",
  "100.127.255.254",
  "127.0.0.1",
  "127.255.255.255",
  "169.254.169.254",
  "172.16.0.1",
  "172.31.255.255",
  "192.0.0.8",
  "192.0.2.1",
  "192.168.1.1",
  "198.18.0.1",
  "198.51.100.7",
  "203.0.113.9",
  "224.0.0.1",
  "239.255.255.250",
  "240.0.0.1",
  "255.255.255.255",
  "::",
  "::1",
  "::ffff:127.0.0.1",
  "::ffff:7f00:1",
  "::ffff:10.0.0.1",
  "::ffff:169.254.169.254",
  "64:ff9b::a9fe:a9fe",
  "::127.0.0.1",
  "fc00::1",
  "fd12:3456::1",
  "fe80::1",
  "fe80::1%eth0",
  "fec0::1",
  "ff02::1",
  "2001:db8::1",
  "2001::1",
  "2002:7f00:1::1",
  "not an address",
];

const PUBLIC = [
  "1.1.1.1",
  "8.8.8.8",
  "93.184.215.14",
  "100.128.0.1",
  "172.32.0.1",
  "2606:4700:4700::1111",
  "::ffff:8.8.8.8",
  "64:ff9b::808:808",
];

describe("webhook targets", () => {
  it.each(NOT_PUBLIC)("%s is not a public unicast address", (a) => expect(isPublicAddress(a)).toBe(false));
  it.each(PUBLIC)("%s is public", (a) => expect(isPublicAddress(a)).toBe(true));

  it("every address a name resolves to must be public; http only when private targets are allowed", async () => {
    const mixed: Resolver = async () => [
      { address: "93.184.215.14", family: 4 },
      { address: "10.0.0.1", family: 4 },
    ];
    await expect(
      checkCallbackUrl("https://a.example/x", { allowPrivate: false, resolve: mixed }),
    ).rejects.toMatchObject({
      code: "callback_url_refused",
      status: 400,
    });
    const pub: Resolver = async () => [{ address: "93.184.215.14", family: 4 }];
    await expect(checkCallbackUrl("https://a.example/x#frag", { allowPrivate: false, resolve: pub })).resolves.toBe(
      "https://a.example/x",
    );
    await expect(checkCallbackUrl("http://a.example/x", { allowPrivate: false, resolve: pub })).rejects.toMatchObject({
      code: "callback_url_refused",
    });
    await expect(checkCallbackUrl("http://127.0.0.1:9/x", { allowPrivate: true })).resolves.toBe(
      "http://127.0.0.1:9/x",
    );
    // a resolver that never answers: refused within the timeout, not a hang
    const never: Resolver = () => new Promise(() => {});
    await expect(
      checkCallbackUrl("https://slow.example/", { allowPrivate: false, resolve: never, resolveTimeoutMs: 50 }),
    ).rejects.toMatchObject({ code: "callback_url_refused" });
  });
});

describe("Standard Webhooks signatures", () => {
  const secret = webhookSecret("server key", "job_abc");

  it("the secret is whsec_ + base64 of 32 bytes, one per job and key", () => {
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32);
    expect(webhookSecret("server key", "job_abd")).not.toBe(secret);
    expect(webhookSecret("other key", "job_abc")).not.toBe(secret);
  });

  it("matches the standardwebhooks package both ways", () => {
    const body = JSON.stringify({
      type: "job.done",
      timestamp: "2026-11-27T00:00:00.000Z",
      data: { job_id: "job_abc" },
    });
    const ts = Math.floor(Date.now() / 1000);
    const wh = new Webhook(secret);
    expect(signature(secret, "msg_1", ts, body)).toBe(wh.sign("msg_1", new Date(ts * 1000), body));
    expect(wh.verify(body, webhookHeaders(secret, "msg_1", ts, body))).toEqual(JSON.parse(body));
    // a changed body, id or timestamp does not verify
    expect(() => wh.verify(`${body} `, webhookHeaders(secret, "msg_1", ts, body))).toThrow();
    expect(() => wh.verify(body, { ...webhookHeaders(secret, "msg_1", ts, body), "webhook-id": "msg_2" })).toThrow();
    // an old timestamp is refused by the receiver (replay)
    expect(() => wh.verify(body, webhookHeaders(secret, "msg_1", ts - 3600, body))).toThrow();
  });
});

describe("one attempt", () => {
  it("ends after the timeout when the target accepts the connection and never answers", async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer((s) => {
      sockets.push(s);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const r = await sendWebhook(`http://127.0.0.1:${port}/`, {}, "{}", { allowPrivate: true, timeoutMs: 300 });
      expect(r.status).toBeNull();
      expect(r.error).toMatch(/no answer within 300 ms/);
      expect(r.durationMs).toBeGreaterThanOrEqual(250);
      expect(r.durationMs).toBeLessThan(2_000);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it("refuses a private target before connecting when private targets are not allowed", async () => {
    const r = await sendWebhook("https://127.0.0.1:1/", {}, "{}", { allowPrivate: false, timeoutMs: 1_000 });
    expect(r).toMatchObject({ status: null });
    expect(r.error).toMatch(/^target_refused: /);
  });
});

/** A self-signed certificate for `hooks.test`, made with the openssl CLI when it is installed. */
function selfSigned(): { key: string; cert: string } | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-tls-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        path.join(dir, "key.pem"),
        "-out",
        path.join(dir, "cert.pem"),
        "-days",
        "2",
        "-subj",
        "/CN=hooks.test",
        "-addext",
        "subjectAltName=DNS:hooks.test",
      ],
      { stdio: "ignore" },
    );
    return {
      key: fs.readFileSync(path.join(dir, "key.pem"), "utf8"),
      cert: fs.readFileSync(path.join(dir, "cert.pem"), "utf8"),
    };
  } catch {
    return undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const tlsPair = selfSigned();

describe.skipIf(!tlsPair)("an https target reached at its pinned address", () => {
  it("sends the URL's host as TLS SNI and verifies the certificate (a self-signed one is refused)", async () => {
    const pair = tlsPair as { key: string; cert: string };
    const names: string[] = [];
    const ctx = tls.createSecureContext(pair);
    let requests = 0;
    const server = https.createServer(
      {
        ...pair,
        SNICallback: (name, cb) => {
          names.push(name);
          cb(null, ctx);
        },
      },
      (_req, res) => {
        requests++;
        res.end();
      },
    );
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      // hooks.test exists only in this resolver: the connection goes to the address it answered
      const r = await sendWebhook(`https://hooks.test:${port}/x`, {}, "{}", {
        allowPrivate: true,
        timeoutMs: 2_000,
        resolve: async () => [{ address: "127.0.0.1", family: 4 }],
      });
      expect(names).toEqual(["hooks.test"]);
      expect(r.status).toBeNull();
      expect(r.error).toMatch(/SELF_SIGNED|self[- ]signed/i);
      expect(requests).toBe(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});

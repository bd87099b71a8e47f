import { createHash } from "node:crypto";
import http from "node:http";
import type net from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestApp, testApp } from "../support/app.js";

/**
 * Issue #23 item 1, the whole path on the real runner (SQLite, segments in the service): a free
 * job bought with a callback_url, its input uploaded, the runner codes it; the service's own loop
 * (WEBHOOK_POLL_SECONDS=1) records `job.done` (and `job.cancelled` for a job its owner cancels) and
 * POSTs it signed to a loopback receiver
 * (WEBHOOK_ALLOW_PRIVATE=true), with the output's SHA-256 the job shows.
 */

describe("webhook of a job run by the runner", () => {
  let t: TestApp;
  let server: http.Server;
  const got: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        got.push({ headers: req.headers, body });
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    t = await testApp("sqlite", {
      WEBHOOK_ALLOW_PRIVATE: "true",
      WEBHOOK_POLL_SECONDS: "1",
      JOB_WORKER_IN_SERVICE: "true",
    });
  });
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("job.done arrives signed, with the output's digest", async () => {
    const port = (server.address() as net.AddressInfo).port;
    const input = Buffer.from("the quick brown fox jumps over the lazy dog\n".repeat(200));
    const r = await t.app.inject({
      method: "POST",
      url: "/api/x402-suite",
      payload: {
        product: "auto",
        dataClass: "text",
        op: "compress",
        bytes: input.length,
        callback_url: `http://127.0.0.1:${port}/done`,
      },
    });
    expect(r.statusCode, r.body).toBe(200);
    const job = r.json() as { job_id: string; job_token: string; webhook_secret: string };
    const auth = { authorization: `Bearer ${job.job_token}` };
    const put = await t.app.inject({
      method: "PUT",
      url: `/api/jobs/${job.job_id}/input`,
      headers: { ...auth, "content-type": "application/octet-stream" },
      payload: input,
    });
    expect(put.statusCode, put.body).toBe(200);
    const deadline = Date.now() + 60_000;
    while (got.length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    expect(got).toHaveLength(1);
    const m = got[0] as (typeof got)[number];
    const payload = new Webhook(job.webhook_secret).verify(m.body, {
      "webhook-id": String(m.headers["webhook-id"]),
      "webhook-timestamp": String(m.headers["webhook-timestamp"]),
      "webhook-signature": String(m.headers["webhook-signature"]),
    }) as { type: string; data: { state: string; bytes_in: number; output_sha256: string } };
    const view = (await t.app.inject({ method: "GET", url: `/api/jobs/${job.job_id}`, headers: auth })).json();
    expect(view.state).toBe("done");
    expect(payload.type).toBe("job.done");
    expect(payload.data).toMatchObject({ state: "done", bytes_in: input.length, output_sha256: view.output_sha256 });
    const out = await t.app.inject({ method: "GET", url: `/api/jobs/${job.job_id}/output`, headers: auth });
    expect(createHash("sha256").update(out.rawPayload).digest("hex")).toBe(payload.data.output_sha256);
    // the receiver has the body before the sender has its response: the outcome is recorded after
    const recorded = Date.now() + 10_000;
    let delivery = view.webhook.deliveries[0];
    while (delivery?.state === "pending" && Date.now() < recorded) {
      await new Promise((res) => setTimeout(res, 50));
      delivery = (await t.app.inject({ method: "GET", url: `/api/jobs/${job.job_id}`, headers: auth })).json().webhook
        .deliveries[0];
    }
    expect(delivery).toMatchObject({ event: "job.done", state: "delivered" });
  });

  it("job.cancelled arrives when the owner cancels (POST /api/jobs/:id/cancel)", async () => {
    const port = (server.address() as net.AddressInfo).port;
    got.length = 0;
    const r = await t.app.inject({
      method: "POST",
      url: "/api/x402-suite",
      payload: {
        product: "auto",
        dataClass: "text",
        op: "compress",
        bytes: 100,
        callback_url: `http://127.0.0.1:${port}/c`,
      },
    });
    expect(r.statusCode, r.body).toBe(200);
    const job = r.json() as { job_id: string; job_token: string; webhook_secret: string };
    const c = await t.app.inject({
      method: "POST",
      url: `/api/jobs/${job.job_id}/cancel`,
      headers: { authorization: `Bearer ${job.job_token}` },
    });
    expect(c.statusCode, c.body).toBeLessThan(300);
    const deadline = Date.now() + 20_000;
    while (got.length === 0 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    const m = got[0] as (typeof got)[number];
    const payload = new Webhook(job.webhook_secret).verify(m.body, {
      "webhook-id": String(m.headers["webhook-id"]),
      "webhook-timestamp": String(m.headers["webhook-timestamp"]),
      "webhook-signature": String(m.headers["webhook-signature"]),
    }) as { type: string; data: { job_id: string; state: string } };
    expect(payload).toMatchObject({ type: "job.cancelled", data: { job_id: job.job_id, state: "cancelled" } });
  });
});

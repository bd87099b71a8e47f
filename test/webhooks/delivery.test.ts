import http from "node:http";
import net from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../src/db/database.js";
import type { App } from "../../src/http/types.js";
import type { JobRow } from "../../src/jobs/tables.js";
import { PER_ORIGIN, RETRY_SENDERS, SENDERS } from "../../src/webhooks/service.js";
import type { Resolver } from "../../src/webhooks/targets.js";
import { appOn } from "../support/app.js";
import { ENGINES, type Engine, freshDatabase } from "../support/databases.js";

/**
 * Issue #23 item 1: signed job webhooks, on SQLite and PostgreSQL. A job bought with a
 * `callback_url` gets its `webhook_secret` (whsec_…) once, with the job; its end events are
 * recorded in an outbox from the job's state (whatever changed it, even across a restart), POSTed
 * signed per Standard Webhooks (verified here with the `standardwebhooks` package), retried with
 * backoff under an injected clock with the same `webhook-id`, and shown with every attempt in
 * GET /api/jobs/:id. At delivery time the target is resolved and checked again, and the
 * connection goes to the checked address (pinned: the name below exists only in the injected
 * resolver).
 */

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  path: string;
}

/** A loopback receiver answering the scripted statuses in turn (then 200). */
async function receiver() {
  const got: Received[] = [];
  const script: number[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      got.push({ headers: req.headers, body, path: req.url ?? "" });
      res.statusCode = script.shift() ?? 200;
      res.end("ok");
    });
  });
  server.on("connection", () => {
    connections++;
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    got,
    script,
    port,
    connections: () => connections,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** A loopback server that accepts connections and never answers (an attempt then lasts WEBHOOK_TIMEOUT_SECONDS). */
async function tarpit() {
  const held: net.Socket[] = [];
  const server = net.createServer((sock) => {
    held.push(sock);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  let closed = false;
  return {
    held,
    port: (server.address() as net.AddressInfo).port,
    /** the held attempts fail now, later ones are refused */
    close: async () => {
      if (closed) return;
      closed = true;
      for (const sock of held) sock.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const REQUEST = { product: "auto", dataClass: "text", op: "compress", bytes: 1000 } as const;

describe.each(ENGINES)("signed job webhooks on %s", (engine: Engine) => {
  let db: Db;
  let app: App;
  let rx: Awaited<ReturnType<typeof receiver>>;
  let clock = Date.now();
  /** receiver.test → 127.0.0.1: a name only this resolver knows (the connection must use the pinned address) */
  const resolver: Resolver = async (host) => {
    if (host === "receiver.test") return [{ address: "127.0.0.1", family: 4 }];
    throw Object.assign(new Error(`unknown host ${host}`), { code: "ENOTFOUND" });
  };
  const ENV = { WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_POLL_SECONDS: "0" };

  const wire = (a: App) => {
    const w = a.services.webhooks;
    w.now = () => clock;
    w.resolve = resolver;
    w.random = () => 0.5; // delay(n) = 0.75 × min(cap, base × 2^(n-1))
    w.backoff = { baseMs: 1_000, capMs: 4_000 };
    return a;
  };

  beforeAll(async () => {
    rx = await receiver();
    db = (await freshDatabase(engine)).db;
    app = wire(await appOn(db, ENV));
    // the runner is not under test: states are set as it sets them
    app.services.jobs.scheduler = { schedule: async () => {} };
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await rx?.close();
  });
  afterEach(() => {
    rx.got.length = 0;
    rx.script.length = 0;
  });

  const buy = async (a: App, callback_url: string) => {
    const r = await a.inject({ method: "POST", url: "/api/x402-suite", payload: { ...REQUEST, callback_url } });
    expect(r.statusCode, r.body).toBe(200);
    return r.json() as { job_id: string; job_token: string; webhook_secret?: string };
  };
  const end = async (id: string, fields: Partial<JobRow>) => {
    const at = new Date(clock).toISOString();
    await db.kysely
      .updateTable("jobs")
      .set({ finished_at: at, updated_at: at, ...fields })
      .where("id", "=", id)
      .execute();
  };
  const getJob = async (a: App, job: { job_id: string; job_token: string }) => {
    const r = await a.inject({
      method: "GET",
      url: `/api/jobs/${job.job_id}`,
      headers: { authorization: `Bearer ${job.job_token}` },
    });
    expect(r.statusCode, r.body).toBe(200);
    return r.json();
  };
  const verify = (secret: string, m: Received) =>
    new Webhook(secret).verify(m.body, {
      "webhook-id": String(m.headers["webhook-id"]),
      "webhook-timestamp": String(m.headers["webhook-timestamp"]),
      "webhook-signature": String(m.headers["webhook-signature"]),
    }) as { type: string; timestamp: string; data: Record<string, unknown> };

  it("a receiver that fails twice then succeeds: 3 attempts, one webhook-id, signatures verified, shown on the job", async () => {
    const job = await buy(app, `http://receiver.test:${rx.port}/hooks/lab?k=1`);
    expect(job.webhook_secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const secret = job.webhook_secret as string;
    // the paid paths (x402 answer, card success page) show what the quote fulfiller shows: the same secret
    const fulfilled = await app.services.orders.fulfilmentView("quote", job.job_id);
    expect(fulfilled.webhook_secret).toBe(secret);
    expect(fulfilled.job_token).toBe(job.job_token);
    // not in the job view
    const before = await getJob(app, job);
    expect(JSON.stringify(before)).not.toContain(secret);
    expect(before.webhook).toEqual({ url: `http://receiver.test:${rx.port}/hooks/lab?k=1`, deliveries: [] });

    await end(job.job_id, {
      state: "done",
      bytes_in: 1000,
      bytes_out: 321,
      output_sha256: "ab".repeat(32),
    });
    rx.script.push(500, 500);
    await app.services.webhooks.tick();
    expect(rx.got).toHaveLength(1);
    let view = (await getJob(app, job)).webhook;
    expect(view.deliveries).toHaveLength(1);
    expect(view.deliveries[0]).toMatchObject({ event: "job.done", state: "pending" });
    expect(view.deliveries[0].attempts.map((a: { status: number }) => a.status)).toEqual([500]);
    expect(Date.parse(view.deliveries[0].next_attempt_at)).toBe(clock + 750);

    // not due yet: nothing is sent
    await app.services.webhooks.tick();
    expect(rx.got).toHaveLength(1);
    clock += 750;
    await app.services.webhooks.tick();
    expect(rx.got).toHaveLength(2);
    clock += 1_500;
    await app.services.webhooks.tick();
    expect(rx.got).toHaveLength(3);
    await app.services.webhooks.tick();
    expect(rx.got).toHaveLength(3);

    const ids = new Set(rx.got.map((m) => m.headers["webhook-id"]));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^msg_/);
    for (const m of rx.got) {
      expect(m.path).toBe("/hooks/lab?k=1");
      // the pinned address was used: the Host header still names the URL's host
      expect(m.headers.host).toBe(`receiver.test:${rx.port}`);
      expect(m.headers["content-type"]).toBe("application/json");
      const payload = verify(secret, m);
      expect(payload.type).toBe("job.done");
      expect(payload.data).toMatchObject({
        job_id: job.job_id,
        state: "done",
        bytes_in: 1000,
        bytes_out: 321,
        output_sha256: "ab".repeat(32),
        error: null,
      });
      expect((payload.data.links as { self: string }).self).toBe(`http://lab.test/api/jobs/${job.job_id}`);
    }
    // every attempt sends the same body
    expect(new Set(rx.got.map((m) => m.body)).size).toBe(1);
    // a wrong secret does not verify
    expect(() => verify(`whsec_${Buffer.alloc(32, 7).toString("base64")}`, rx.got[0] as Received)).toThrow();

    view = (await getJob(app, job)).webhook;
    expect(view.deliveries[0]).toMatchObject({ event: "job.done", state: "delivered", next_attempt_at: null });
    expect(view.deliveries[0].webhook_id).toBe([...ids][0]);
    expect(view.deliveries[0].attempts.map((a: { status: number }) => a.status)).toEqual([500, 500, 200]);
  });

  it("a job that fails, one cancelled, and one that expires send their events", async () => {
    const url = `http://receiver.test:${rx.port}/h`;
    const failed = await buy(app, url);
    const cancelled = await buy(app, url);
    const expired = await buy(app, url);
    await end(failed.job_id, { state: "failed", error_code: "segment_failed", error_detail: "bad input" });
    await end(cancelled.job_id, { state: "cancelled", error_code: "cancelled", error_detail: null });
    // ended long ago: the retention sweep expires it
    const long = new Date(Date.now() - 1000 * 3_600_000).toISOString();
    await db.kysely
      .updateTable("jobs")
      .set({ state: "done", finished_at: long, updated_at: long, bytes_in: 1000, bytes_out: 10 })
      .where("id", "=", expired.job_id)
      .execute();
    const swept = await app.services.retention?.sweep();
    expect(swept?.swept && swept.expired).toContain(expired.job_id);

    await app.services.webhooks.tick();
    const seen = rx.got.map((m) => {
      const secret = [failed, cancelled, expired].find((j) => m.body.includes(j.job_id))?.webhook_secret as string;
      const p = verify(secret, m);
      return `${p.data.job_id === failed.job_id ? "F" : p.data.job_id === cancelled.job_id ? "C" : "E"}:${p.type}`;
    });
    expect(seen.sort()).toEqual(["C:job.cancelled", "E:job.done", "E:job.expired", "F:job.failed"]);
    const failedBody = JSON.parse(rx.got.find((m) => m.body.includes("job.failed"))?.body ?? "{}");
    expect(failedBody.data.error).toEqual({ code: "segment_failed", detail: "bad input" });
    // recorded once: more rounds send nothing new
    await app.services.webhooks.tick();
    expect(rx.got).toHaveLength(4);
    const subs = await db.kysely
      .selectFrom("job_webhooks")
      .select(["job_id", "closed_at"])
      .where("job_id", "=", expired.job_id)
      .executeTakeFirst();
    expect(subs?.closed_at).not.toBeNull();
  });

  it("a restart between attempts (and an end recorded while no sender ran): delivered by the new instance", async () => {
    const first = await buy(app, `http://receiver.test:${rx.port}/r`);
    const second = await buy(app, `http://receiver.test:${rx.port}/r`);
    await end(first.job_id, { state: "done", bytes_in: 1000, bytes_out: 5 });
    rx.script.push(503);
    await app.services.webhooks.tick();
    expect(rx.got).toHaveLength(1);
    const id = rx.got[0]?.headers["webhook-id"];
    // the second job ends, then the process goes away before any round saw it
    await end(second.job_id, { state: "failed", error_code: "x", error_detail: null });
    await app.close();

    app = wire(await appOn(db, ENV));
    app.services.jobs.scheduler = { schedule: async () => {} };
    // the retry is not due yet: nothing
    await app.services.webhooks.tick();
    const firstAgain = rx.got.filter((m) => m.headers["webhook-id"] === id);
    expect(firstAgain).toHaveLength(1);
    expect(rx.got.filter((m) => m.body.includes(second.job_id))).toHaveLength(1);
    clock += 1_000;
    await app.services.webhooks.tick();
    const sent = rx.got.filter((m) => m.headers["webhook-id"] === id);
    expect(sent).toHaveLength(2);
    verify(first.webhook_secret as string, sent[1] as Received);
    const view = (await getJob(app, first)).webhook;
    expect(view.deliveries[0]).toMatchObject({ state: "delivered", webhook_id: id });
    expect(view.deliveries[0].attempts.map((a: { status: number }) => a.status)).toEqual([503, 200]);
    const secondView = (await getJob(app, second)).webhook;
    expect(secondView.deliveries[0]).toMatchObject({ event: "job.failed", state: "delivered" });
  });

  it("410 Gone stops the retries; other failures are retried until WEBHOOK_RETRY_HOURS, then failed", async () => {
    const gone = await buy(app, `http://receiver.test:${rx.port}/gone`);
    await end(gone.job_id, { state: "done" });
    rx.script.push(410);
    await app.services.webhooks.tick();
    let view = (await getJob(app, gone)).webhook;
    expect(view.deliveries[0]).toMatchObject({ state: "failed", next_attempt_at: null });

    const down = await buy(app, `http://receiver.test:${rx.port}/down`);
    await end(down.job_id, { state: "done" });
    // a long backoff: the next attempt is placed at the deadline (24 h after the event was recorded)
    app.services.webhooks.backoff = { baseMs: 40 * 3_600_000, capMs: 48 * 3_600_000 };
    const t0 = clock;
    rx.script.push(500, 302);
    await app.services.webhooks.tick();
    view = (await getJob(app, down)).webhook;
    expect(Date.parse(view.deliveries[0].next_attempt_at)).toBe(t0 + 24 * 3_600_000);
    clock = t0 + 24 * 3_600_000;
    rx.got.length = 0;
    await app.services.webhooks.tick();
    // a redirect is not followed: the attempt failed, and it was the last
    view = (await getJob(app, down)).webhook;
    expect(view.deliveries[0].attempts.map((a: { status: number }) => a.status)).toEqual([500, 302]);
    expect(view.deliveries[0]).toMatchObject({ state: "failed", next_attempt_at: null });
    app.services.webhooks.backoff = { baseMs: 1_000, capMs: 4_000 };
  });

  /**
   * Jobs ended with callbacks to the silent receivers (their deliveries due a second before the
   * one to rx), one round started: how long rx waited for its event, and how many connections the
   * silent ones held meanwhile. Each delivery is tried once in the round.
   */
  const silentRound = async (
    silent: { port: number }[],
    perReceiver: number,
    asRetries: boolean,
    others: App[] = [],
  ) => {
    const stuck: string[] = [];
    for (const t of silent)
      for (let i = 0; i < perReceiver; i++) {
        const job = await buy(app, `http://receiver.test:${t.port}/slow/${i}`);
        await end(job.job_id, { state: "done" });
        stuck.push(job.job_id);
      }
    const job = await buy(app, `http://receiver.test:${rx.port}/fast`);
    await end(job.job_id, { state: "done" });
    const w = app.services.webhooks;
    expect(await w.sweep()).toBe(stuck.length + 1);
    await db.kysely
      .updateTable("webhook_deliveries")
      .set({ next_attempt_at: new Date(clock - 1_000).toISOString(), attempts: asRetries ? 1 : 0 })
      .where("job_id", "in", stuck)
      .execute();
    const round = Promise.all([w, ...others.map((o) => o.services.webhooks)].map((x) => x.deliverDue()));
    const t0 = Date.now();
    while (!rx.got.some((m) => m.body.includes(job.job_id)) && Date.now() - t0 < 4_000)
      await new Promise((r) => setTimeout(r, 20));
    const waited = Date.now() - t0;
    return { round, waited, stuck, fast: job.job_id };
  };
  /** waits until `n` connections are held (at most 2 s), then 300 ms more: the count then */
  const heldSettled = async (count: () => number, n: number) => {
    const t1 = Date.now();
    while (count() < n && Date.now() - t1 < 2_000) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300));
    return count();
  };
  const attemptsOf = async (jobIds: string[]) =>
    (
      await db.kysely
        .selectFrom("webhook_attempts")
        .innerJoin("webhook_deliveries", "webhook_deliveries.id", "webhook_attempts.delivery_id")
        .select("webhook_attempts.n")
        .where("webhook_deliveries.job_id", "in", jobIds)
        .execute()
    ).length;

  it("a receiver that never answers holds at most PER_ORIGIN of the SENDERS: another receiver's delivery, due later, is made at once", async () => {
    const t = await tarpit();
    try {
      // more deliveries to it than there are senders, all due before the one to rx
      const { round, waited, stuck, fast } = await silentRound([t], SENDERS + 2, false);
      // without the limit every sender would wait on it until the first attempt timed out
      // (WEBHOOK_TIMEOUT_SECONDS, 10 s here)
      expect(await heldSettled(() => t.held.length, PER_ORIGIN)).toBe(PER_ORIGIN);
      await t.close();
      await round;
      expect(waited).toBeLessThan(4_000);
      expect(rx.got.filter((m) => m.body.includes(fast))).toHaveLength(1);
      expect(await attemptsOf(stuck)).toBe(SENDERS + 2); // each tried once in the round, none lost
    } finally {
      await t.close();
    }
  });

  it("retries to several silent receivers hold at most RETRY_SENDERS: a first attempt to another receiver, due later, is made at once", async () => {
    // 5 receivers × PER_ORIGIN retries would hold 20 ≥ SENDERS senders without the retry share
    const silent = await Promise.all(Array.from({ length: 5 }, () => tarpit()));
    const held = () => silent.reduce((n, t) => n + t.held.length, 0);
    try {
      const { round, waited, stuck, fast } = await silentRound(silent, PER_ORIGIN, true);
      expect(await heldSettled(held, RETRY_SENDERS)).toBe(RETRY_SENDERS);
      await Promise.all(silent.map((t) => t.close()));
      await round;
      expect(waited).toBeLessThan(4_000);
      expect(rx.got.filter((m) => m.body.includes(fast))).toHaveLength(1);
      expect(await attemptsOf(stuck)).toBe(5 * PER_ORIGIN);
    } finally {
      await Promise.all(silent.map((t) => t.close()));
    }
  });

  it("two instances on one database hold at most PER_ORIGIN attempts to a silent receiver between them (leases counted in the database)", async () => {
    const other = wire(await appOn(db, ENV));
    const t = await tarpit();
    try {
      const { round, waited, stuck, fast } = await silentRound([t], SENDERS + 2, false, [other]);
      // each instance alone stays within PER_ORIGIN: without the shared count they held 2 × PER_ORIGIN
      expect(await heldSettled(() => t.held.length, PER_ORIGIN)).toBe(PER_ORIGIN);
      await t.close();
      await round;
      expect(waited).toBeLessThan(4_000);
      expect(rx.got.filter((m) => m.body.includes(fast))).toHaveLength(1);
      // every delivery to the silent receiver was tried, once, by one instance or the other
      expect(await attemptsOf(stuck)).toBe(SENDERS + 2);
    } finally {
      await t.close();
      await other.close();
    }
  });

  it("two senders at once (two instances on one database): each attempt is made once", async () => {
    const other = wire(await appOn(db, ENV));
    try {
      const job = await buy(app, `http://receiver.test:${rx.port}/both`);
      await end(job.job_id, { state: "done" });
      await Promise.all([app.services.webhooks.tick(), other.services.webhooks.tick()]);
      await Promise.all([app.services.webhooks.tick(), other.services.webhooks.tick()]);
      expect(rx.got.filter((m) => m.body.includes(job.job_id))).toHaveLength(1);
      const view = (await getJob(app, job)).webhook;
      expect(view.deliveries).toHaveLength(1);
      expect(view.deliveries[0].attempts).toHaveLength(1);
    } finally {
      await other.close();
    }
  });
});

describe("delivery-time SSRF: a target allowed at creation that now resolves to a private address", () => {
  let db: Db;
  let app: App;
  let server: net.Server;
  let connections = 0;
  let port = 0;
  let phase: "create" | "deliver" = "create";
  beforeAll(async () => {
    server = net.createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as net.AddressInfo).port;
    db = (await freshDatabase("sqlite")).db;
    app = await appOn(db, { WEBHOOK_POLL_SECONDS: "0" });
    app.services.jobs.scheduler = { schedule: async () => {} };
    app.services.webhooks.resolve = async (host) => {
      if (host !== "hooks.example.test") throw Object.assign(new Error("unknown"), { code: "ENOTFOUND" });
      // public when the quote is made; then the name is re-pointed at this machine (DNS rebinding)
      return phase === "create"
        ? [{ address: "93.184.215.14", family: 4 }]
        : [
            { address: "127.0.0.1", family: 4 },
            { address: "93.184.215.14", family: 4 },
          ];
    };
  });
  afterAll(async () => {
    await app?.close();
    await db?.close();
    await new Promise<void>((r) => server.close(() => r()));
  });

  it("is refused again before connecting: the attempt records target_refused and nothing reaches the address", async () => {
    const r = await app.inject({
      method: "POST",
      url: "/api/x402-suite",
      payload: { ...REQUEST, callback_url: `https://hooks.example.test:${port}/hook` },
    });
    expect(r.statusCode, r.body).toBe(200);
    const job = r.json() as { job_id: string; job_token: string };
    await db.kysely.updateTable("jobs").set({ state: "done", finished_at: new Date().toISOString() }).execute();
    phase = "deliver";
    await app.services.webhooks.tick();
    expect(connections).toBe(0);
    const g = await app.inject({
      method: "GET",
      url: `/api/jobs/${job.job_id}`,
      headers: { authorization: `Bearer ${job.job_token}` },
    });
    const d = g.json().webhook.deliveries[0];
    expect(d.state).toBe("pending");
    expect(d.attempts).toHaveLength(1);
    expect(d.attempts[0].status).toBeNull();
    expect(d.attempts[0].error).toMatch(/^target_refused: .*127\.0\.0\.1/);
  });
});

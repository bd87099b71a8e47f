import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { IdentityService } from "../../src/identity/service.js";
import { type TestApp, testApp } from "../support/app.js";
import { ENGINES } from "../support/databases.js";

const SEED = "correct horse battery staple 1234"; // 33 ASCII bytes
const MULTIBYTE = `${"é".repeat(16)}a`; // 16 × 2 bytes + 1 = 33 bytes, 17 characters

describe.each(ENGINES)("POST /api/join-work (%s)", (engine) => {
  let t: TestApp;
  const join = (payload: Record<string, unknown>) => t.app.inject({ method: "POST", url: "/api/join-work", payload });
  const codec = (token: string, header = "authorization") =>
    t.app.inject({
      method: "POST",
      url: "/api/omni",
      payload: { op: "prints" },
      headers: { [header]: header === "authorization" ? `Bearer ${token}` : token },
    });

  beforeAll(async () => {
    t = await testApp(engine, { IDENTITY_TOKEN_TTL_DAYS: "7" });
  });
  afterAll(() => t.close());

  it("issues a random token for a name, one sentence of intent and a 33-byte seed", async () => {
    expect(Buffer.byteLength(SEED)).toBe(33);
    const r = await join({ name: "Ada", intent: "I want to compress my sensor logs, e.g. temperature.", seed: SEED });
    expect(r.statusCode, r.body).toBe(201);
    const b = r.json();
    expect(b.token).toMatch(/^lpi_[A-Za-z0-9_-]{43}$/);
    expect(b.identity_id).toMatch(/^idn_/);
    expect(b).toMatchObject({ token_type: "Bearer", access: "freemium" });
    expect(r.headers["cache-control"]).toBe("no-store");
    const days = (Date.parse(b.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThanOrEqual(7);
    // the same inputs give another random token
    const again = (await join({ name: "Ada", intent: "I want to compress my sensor logs.", seed: SEED })).json();
    expect(again.token).not.toBe(b.token);
    // multi-byte seeds are measured in UTF-8 bytes
    expect(MULTIBYTE.length).toBe(17);
    expect((await join({ name: "Zoë", intent: "Measure the codec on my data.", seed: MULTIBYTE })).statusCode).toBe(
      201,
    );
    // both headers work
    expect((await codec(b.token)).statusCode).toBe(200);
    expect((await codec(b.token, "x-identity-token")).statusCode).toBe(200);
  });

  it("stores neither the token nor the seed", async () => {
    const b = (await join({ name: "Secretive", intent: "Check what is stored about me.", seed: SEED })).json();
    const rows = await t.app.services.db.kysely.selectFrom("identities").selectAll().execute();
    const dump = JSON.stringify(rows);
    expect(dump).not.toContain(b.token);
    expect(dump).not.toContain(b.token.slice(4));
    expect(dump).not.toContain(SEED);
    expect(dump).not.toContain(Buffer.from(SEED).toString("hex"));
    const row = rows.find((r) => r.id === b.identity_id);
    expect(row?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row?.seed_sha256).toMatch(/^[0-9a-f]{64}$/);
    // salted: two identities with the same seed have different digests
    const digests = rows.map((r) => r.seed_sha256);
    expect(new Set(digests).size).toBe(digests.length);
  });

  it("refuses bad joins with stable codes", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: "Ada", intent: "Compress logs.", seed: "x".repeat(32) }, "seed_length"],
      [{ name: "Ada", intent: "Compress logs.", seed: "x".repeat(34) }, "seed_length"],
      [{ name: "Ada", intent: "Compress logs.", seed: `${"é".repeat(16)}ab` }, "seed_length"],
      [{ name: "Ada", intent: "Compress logs.", seed: `\ud800${"x".repeat(30)}` }, "seed_not_utf8"],
      [{ name: "", intent: "Compress logs.", seed: SEED }, "name_invalid"],
      [{ name: "A\nB", intent: "Compress logs.", seed: SEED }, "invalid_text"],
      [{ name: "A\u2028B", intent: "Compress logs.", seed: SEED }, "name_invalid"],
      [{ name: "Ada", intent: "short", seed: SEED }, "intent_invalid"],
      [{ name: "Ada", intent: "I compress logs. Then I sleep.", seed: SEED }, "intent_invalid"],
      [{ name: "Ada", intent: "Compress logs." }, "validation_failed"],
    ];
    for (const [payload, code] of cases) {
      const r = await join(payload);
      expect(r.statusCode, `${JSON.stringify(payload)} → ${r.body}`).toBe(400);
      expect(r.json().code).toBe(code);
    }
    const len = (await join({ name: "Ada", intent: "Compress logs.", seed: "x".repeat(32) })).json();
    expect(len).toMatchObject({ bytes: 32, required_bytes: 33 });
  });

  it("renews with the seed phrase; the old token stops working; a wrong seed is refused", async () => {
    const first = (await join({ name: "Renee", intent: "Renew my token later.", seed: SEED })).json();
    const renew = (seed: string, id = first.identity_id) =>
      t.app.inject({ method: "POST", url: "/api/join-work/renew", payload: { identity_id: id, seed } });
    const wrong = await renew("y".repeat(33));
    expect(wrong.statusCode).toBe(403);
    expect(wrong.json().code).toBe("identity_seed_mismatch");
    expect((await renew(SEED, "idn_unknown")).statusCode).toBe(403);
    const r = await renew(SEED);
    expect(r.statusCode).toBe(200);
    const second = r.json();
    expect(second.identity_id).toBe(first.identity_id);
    expect(second.token).not.toBe(first.token);
    const old = await codec(first.token);
    expect(old.statusCode).toBe(401);
    expect(old.json().code).toBe("identity_token_invalid");
    expect((await codec(second.token)).statusCode).toBe(200);
    // two concurrent renewals: exactly one wins
    const both = await Promise.all([renew(SEED), renew(SEED)]);
    const codes = both.map((x) => x.statusCode).sort();
    expect(codes[0]).toBe(200);
    expect([200, 409]).toContain(codes[1]);
    const winners = both.filter((x) => x.statusCode === 200).map((x) => x.json().token as string);
    const working = await Promise.all(winners.map(async (tok) => (await codec(tok)).statusCode));
    expect(working.filter((s) => s === 200)).toHaveLength(1);
  });

  it("expires tokens", async () => {
    let now = new Date("2026-01-01T00:00:00Z");
    const svc = new IdentityService(t.app.services.db.kysely, "k".repeat(32), 30, () => now);
    const issued = await svc.join({ name: "Tim", intent: "Test the expiry of tokens.", seed: SEED });
    expect(issued.expires_at).toBe("2026-01-31T00:00:00.000Z");
    expect((await svc.verify(issued.token)).id).toBe(issued.identity_id);
    now = new Date("2026-01-31T00:00:00Z");
    await expect(svc.verify(issued.token)).rejects.toMatchObject({ status: 401, code: "identity_token_expired" });
    // renewing with the seed gives a fresh 30 days
    const renewed = await svc.renew(issued.identity_id, SEED);
    expect(renewed.expires_at).toBe("2026-03-02T00:00:00.000Z");
    expect((await svc.verify(renewed.token)).id).toBe(issued.identity_id);
    // a token hashed under another key is unknown here
    const otherKey = new IdentityService(t.app.services.db.kysely, "z".repeat(32), 30, () => now);
    await expect(otherKey.verify(renewed.token)).rejects.toMatchObject({ code: "identity_token_invalid" });
  });

  it("answers 401 for malformed tokens on codec calls and ignores other schemes", async () => {
    for (const bad of ["nope", `lpi_${"a".repeat(43)}`, "lpi_short"]) {
      const r = await codec(bad);
      expect(r.statusCode).toBe(401);
      expect(r.json().code).toBe("identity_token_invalid");
    }
    const basic = await t.app.inject({
      method: "POST",
      url: "/api/omni",
      payload: { op: "print", data: "x" },
      headers: { authorization: "Basic abc" },
    });
    expect(basic.statusCode).toBe(200);
  });
});

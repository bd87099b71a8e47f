import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Participants } from "../../../src/olympiad/entry/participants.js";
import { type TestApp, testApp } from "../../support/app.js";
import { ENGINES } from "../../support/databases.js";
import { problemOf } from "../../support/problem.js";

/**
 * Issue #21: registrations are free and give no standing, but each is a row. Before this budget
 * one address could write 60 a minute, 86,400 a day (only the per-minute limit applied): the
 * fourth registration of the day below was a 201. Now OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY bounds
 * them per client IP (IPv6: /64) and UTC day, in the database, so instances share the count.
 */

describe.each(ENGINES)("olympiad registrations per IP per day (%s)", (engine) => {
  let t: TestApp;
  const register = (ip: string, name: string) =>
    t.app.inject({
      method: "POST",
      url: "/api/olympiad",
      remoteAddress: ip,
      payload: { action: "register", who: "human_for_self", name },
    });

  beforeAll(async () => {
    t = await testApp(engine, { OLYMPIAD_REGISTRATIONS_PER_IP_PER_DAY: "3" });
  });
  afterAll(() => t?.close());

  it("the fourth registration from one IP gets 429 registration_daily_limit; nothing is stored; another IP is served", async () => {
    const db = t.app.services.db.kysely;
    const count = async () =>
      Number(
        (await db.selectFrom("olympiad_participants").select(db.fn.countAll().as("n")).executeTakeFirstOrThrow()).n,
      );
    for (let i = 0; i < 3; i++) expect((await register("203.0.113.5", `Ada ${i}`)).statusCode).toBe(201);
    const before = await count();
    const over = await register("203.0.113.5", "Ada 3");
    expect(over.statusCode, over.body).toBe(429);
    expect(over.json()).toMatchObject({ code: "registration_daily_limit", limit: 3 });
    expect(Number(over.headers["retry-after"])).toBeGreaterThan(0);
    expect(await count()).toBe(before);
    // an IPv6 address counts by its /64: another host of the same /64 shares the budget
    for (let i = 0; i < 3; i++) expect((await register(`2001:db8:1:2::${i + 1}`, `Bo ${i}`)).statusCode).toBe(201);
    expect((await register("2001:db8:1:2::ff", "Bo 3")).statusCode).toBe(429);
    expect((await register("203.0.113.6", "Cy")).statusCode).toBe(201);
  });

  it("the day is the UTC calendar day (controlled clock)", async () => {
    let now = new Date("2031-05-01T23:59:59.000Z");
    const p = new Participants(t.app.services.db.kysely, {
      now: () => now,
      registrationsPerIpPerDay: 2,
      ipKey: "k".repeat(32),
    });
    const input = { who: "human_for_self" as const, name: "Clock" };
    const ip = "192.0.2.9";
    await p.register(input, null, { ip });
    await p.register(input, null, { ip });
    const refused = await problemOf(p.register(input, null, { ip }));
    expect([refused.status, refused.code, refused.headers["Retry-After"]]).toEqual([
      429,
      "registration_daily_limit",
      "1",
    ]);
    now = new Date("2031-05-02T00:00:00.000Z");
    expect((await p.register(input, null, { ip })).participant.participant_id).toMatch(/^par_/);
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CardHarness, cardHarness } from "../support/stripe/harness.js";

/** The suite jobs pages as served (no browser): server-rendered prices, the plain form's preview, the checkout return. */
describe("suite jobs pages (/jobs, /jobs/paid)", () => {
  let h: CardHarness;
  beforeAll(async () => {
    h = await cardHarness("sqlite");
  });
  afterAll(async () => h.close());

  const get = (url: string) => h.app.inject({ method: "GET", url, headers: { accept: "text/html" } });

  it("renders the pricing from the pricing module, the quote form and the job panel, with no inline script", async () => {
    const r = await get("/jobs");
    expect(r.statusCode).toBe(200);
    expect(r.headers["content-type"]).toContain("text/html");
    expect(r.headers["cache-control"]).toBe("no-cache");
    expect(r.body).toContain("<title>Suite jobs · Lab Phi</title>");
    expect(r.body).toMatch(/<meta name="description" content="[^"]+">/);
    // free volume belongs to a caller (issue #21): an identity's month, an address's day
    expect(r.body).toContain("With a join-work identity: the first 100 GB a calendar month (UTC), shared by its jobs");
    expect(r.body).toContain("Without an identity: the first 1 GB a day (UTC) per address");
    expect(r.body).not.toContain("of every job");
    expect(r.body).toContain("$0.05 / GB");
    expect(r.body).toContain("$0.04 / GB");
    expect(r.body).toContain("GB = 10^9 bytes");
    expect(r.body).toContain('<form id="quote-form" method="get" action="/jobs#quote-result"');
    expect(r.body).toContain('id="job-panel"');
    expect(r.body).toContain('data-card="on"');
    // every script is a bundled file; the CSP forbids inline ones
    const scripts = r.body.match(/<script[^>]*>/g) ?? [];
    expect(scripts.length).toBeGreaterThan(0);
    for (const s of scripts) expect(s).toMatch(/src="\/assets\/jobs-[^"]+\.js"/);
    expect(r.body).not.toMatch(/ style="/);
    expect(String(r.headers["content-security-policy"])).toContain("script-src 'self'");
    const script = await h.app.inject({
      method: "GET",
      url: /src="(\/assets\/jobs-[^"]+\.js)"/.exec(r.body)?.[1] ?? "",
    });
    expect(script.statusCode).toBe(200);
    expect(script.body).toContain("Tus-Resumable"); // tus-js-client is bundled, not fetched
  });

  it('has the "Your jobs" list (filled by the script from the tokens this browser keeps) and says it needs JavaScript', async () => {
    const r = await get("/jobs");
    expect(r.body).toContain('<section class="card" id="my-jobs" aria-labelledby="my-jobs-h">');
    expect(r.body).toContain('<ul id="my-jobs-list" class="stack" hidden></ul>');
    expect(r.body).toContain('id="my-jobs-empty"');
    expect(r.body).toMatch(/<noscript><p class="small">This list needs JavaScript[^<]*/);
    expect(r.body).toContain("<code>POST /api/jobs/{id}/cancel</code>");
    // the plain form still works without the script
    expect(r.body).toContain('<form id="quote-form" method="get" action="/jobs#quote-result"');
    const script = await h.app.inject({
      method: "GET",
      url: /src="(\/assets\/jobs-[^"]+\.js)"/.exec(r.body)?.[1] ?? "",
    });
    expect(script.body).toContain("labphi.jobs.kept");
    expect(script.body).toContain("/cancel");
  });

  it("answers the plain form with a price preview (nothing stored), and a bad size with an HTML problem", async () => {
    const r = await get("/jobs?product=auto&dataClass=text&op=compress&level=max&bytes=150000000000&email=");
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain("Price for 150 GB (GB = 10^9 bytes)");
    // a browser has no identity: 1 GB of the address's day free, 149 GB billable (100 × 0.05 + 49 × 0.04)
    expect(r.body).toMatch(/id="preview-total">\$6\.96/);
    expect(r.body).toContain("max (chosen)");
    expect(r.body).toContain('<option value="max" selected>');
    const quotes = await h.app.services.db.kysely
      .selectFrom("quotes")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    expect(Number(quotes.n)).toBe(0);
    const free = await get("/jobs?bytes=300000");
    expect(free.body).toMatch(/id="preview-total">Free/);
    const blank = await get("/jobs?bytes=&op=");
    expect(blank.statusCode).toBe(200);
    expect(blank.body).not.toContain('id="preview"');

    const bad = await get("/jobs?bytes=0");
    expect(bad.statusCode).toBe(400);
    expect(bad.headers["content-type"]).toContain("text/html");
    expect(bad.body).toContain("validation_failed");
    const tooBig = await get("/jobs?bytes=1000000000000001");
    expect(tooBig.statusCode).toBe(400);
    const script = await get("/jobs?op=%3Cscript%3E");
    expect(script.statusCode).toBe(400);
    expect(script.body).not.toContain("<script>");
    const cancelled = await get("/jobs?checkout=cancelled");
    expect(cancelled.body).toContain('id="checkout-cancelled"');
  });

  it("a quote's card checkout returns to /jobs/paid, which shows the job and its token (never cached)", async () => {
    const q = await h.app.inject({
      method: "POST",
      url: "/api/ppp-quote",
      payload: { product: "auto", dataClass: "text", op: "compress", bytes: 100_000_000_001 },
    });
    const c = await h.app.inject({
      method: "POST",
      url: "/api/ppp-checkout",
      payload: { quote_id: q.json().quote_id, email: "human@example.com" },
    });
    expect(c.statusCode, c.body).toBe(200);
    const id = c.json().session_id as string;
    const session = h.stripe.sessions.get(id);
    expect(session?.success_url).toBe("http://lab.test/jobs/paid?session_id={CHECKOUT_SESSION_ID}");
    expect(session?.cancel_url).toBe("http://lab.test/jobs?checkout=cancelled");

    const open = await get(`/jobs/paid?session_id=${id}`);
    expect(open.statusCode).toBe(200);
    expect(open.body).toContain('id="confirming"');
    expect(open.body).toContain('<meta http-equiv="refresh" content="3">');

    h.stripe.pay(id);
    await h.deliver(h.stripe.sessionEvent("checkout.session.completed", id));
    const paid = await get(`/jobs/paid?session_id=${id}`);
    expect(paid.statusCode).toBe(200);
    expect(paid.headers["cache-control"]).toBe("no-store");
    expect(paid.headers["referrer-policy"]).toBe("no-referrer");
    const status = (await h.app.inject({ method: "GET", url: `/api/checkout/${id}` })).json();
    expect(paid.body).toContain(`id="paid-job-id">${status.job.job_id}<`);
    expect(paid.body).toContain(`value="${status.job.job_token}"`);
    expect(paid.body).toContain("Keep this job token.");

    const missing = await get("/jobs/paid");
    expect(missing.statusCode).toBe(400);
    expect(missing.body).toContain("session_id_required");
    const unknown = await get("/jobs/paid?session_id=cs_test_unknown");
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain("session_not_found");
  });
});

import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import type { Browser, BrowserContext, Page, Route } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompressStream } from "../../src/codec/index.js";
import {
  describeViolations,
  launchBrowser,
  type SiteHarness,
  screenshot,
  seriousA11yViolations,
  startSite,
  WIDTHS,
} from "../support/browser.js";

/** Text-like bytes (words from a small vocabulary, seeded): compressible, like a real log. */
function textBytes(n: number, seed: number): Buffer {
  const words = ["lab", "phi", "segment", "worker", "queue", "lease", "codec", "stream", "record", "job", "42", "\n"];
  const parts: string[] = [];
  let x = seed;
  let len = 0;
  while (len < n) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    const w = `${words[(x >>> 16) % words.length]} `;
    parts.push(w);
    len += w.length;
  }
  return Buffer.from(parts.join("")).subarray(0, n);
}

async function restore(stream: Buffer): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of Readable.from([stream]).pipe(decompressStream())) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

describe("suite jobs in a real browser (/jobs)", () => {
  let h: SiteHarness;
  let browser: Browser;
  let ctx: BrowserContext;
  let dir: string;
  /** every URL the page asked for: the job token must never be in one */
  const urls: string[] = [];

  const file = (name: string, bytes: Buffer) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, bytes);
    return p;
  };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "labphi-jobs-web-"));
    // a loopback receiver for the webhook test (WEBHOOK_ALLOW_PRIVATE), polled every second
    h = await startSite({ WEBHOOK_ALLOW_PRIVATE: "true", WEBHOOK_POLL_SECONDS: "1" });
    browser = await launchBrowser();
    ctx = await browser.newContext({ viewport: WIDTHS.desktop, acceptDownloads: true });
    ctx.on("request", (r) => urls.push(r.url()));
  }, 120_000);
  afterAll(async () => {
    await ctx?.close();
    await browser?.close();
    await h?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** Quote from the page (the size from a picked file, or typed) and start the free job; returns id and token. */
  async function startFreeJob(page: Page, opts: { pick?: string; bytes?: number }) {
    await page.goto(`${h.base}/jobs`);
    if (opts.pick) await page.setInputFiles("#q-file", opts.pick);
    if (opts.bytes) await page.fill("#q-bytes", String(opts.bytes));
    await page.selectOption("#q-class", "text");
    await page.click('#quote-form button[type="submit"]');
    await page.waitForSelector("#quote-view");
    expect(await page.textContent("#quote-total")).toBe("Free");
    await page.click("#start-free");
    await page.waitForSelector("#job-token-box:not([hidden])");
    const token = await page.inputValue("#job-token-once");
    const jobId = (await page.textContent("#job-id")) ?? "";
    expect(token).toMatch(/^jt_/);
    expect(jobId).toMatch(/^job_/);
    await page.click("#job-token-done");
    expect(await page.isHidden("#job-token-box")).toBe(true);
    return { jobId, token };
  }

  const progressValue = (page: Page) => page.evaluate<number>('document.querySelector("#u-progress").value');

  it("renders at phone and desktop width with no serious accessibility violation and no sideways scroll", async () => {
    for (const size of [WIDTHS.phone, WIDTHS.desktop]) {
      const page = await ctx.newPage();
      await page.setViewportSize(size);
      await page.goto(`${h.base}/jobs`);
      expect(await page.title()).toBe("Suite jobs · Lab Phi");
      expect(await page.textContent("#pricing-table")).toContain("$0.05 / GB");
      const scroll = await page.evaluate<number>("document.documentElement.scrollWidth");
      expect(scroll).toBeLessThanOrEqual(size.width);
      await screenshot(page, "jobs");
      const vs = await seriousA11yViolations(page);
      expect(vs, describeViolations(vs)).toEqual([]);
      await page.close();
    }
  }, 60_000);

  it("quotes from the picked file, starts free, uploads to 100%, watches it reach done and downloads a stream that restores the file", async () => {
    const input = textBytes(300_000, 11);
    const picked = file("log-300k.txt", input);
    const page = await ctx.newPage();
    const { jobId, token } = await startFreeJob(page, { pick: picked });
    expect(await page.inputValue("#q-bytes")).toBe("300000");
    // the quote's breakdown and the time by level were shown (GB = 10^9 bytes next to prices)
    expect(await page.textContent("#quote-view")).toContain("GB = 10^9 bytes");
    expect(await page.textContent("#quote-view")).toContain("balanced");
    // the panel's job is in this tab's sessionStorage; "Your jobs" keeps it in localStorage (issue #23)
    const held = await page.evaluate<string | null>('sessionStorage.getItem("labphi.jobs.current")');
    expect(JSON.parse(held ?? "{}")).toEqual({ job_id: jobId, job_token: token });
    const kept = await page.evaluate<string | null>('localStorage.getItem("labphi.jobs.kept")');
    expect(JSON.parse(kept ?? "[]")[0]).toMatchObject({ job_id: jobId, job_token: token });

    await page.click("#u-start"); // the file picked for the quote
    await expect.poll(() => progressValue(page), { timeout: 30_000 }).toBe(100);
    await expect.poll(() => page.textContent("#job-state"), { timeout: 60_000 }).toBe("done");
    expect(await page.textContent("#job-in")).toContain("300000 bytes");
    expect(await page.evaluate<number>('document.querySelector("#job-progress").value')).toBe(1);
    await screenshot(page, "jobs-done");

    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#d-start")]);
    // the same container extension as the CLI and the agent client write
    expect(download.suggestedFilename()).toMatch(/^job_[A-Za-z0-9_-]+\.lpz$/);
    const stream = fs.readFileSync((await download.path()) as string);
    expect(stream.length).toBeLessThan(input.length);
    expect((await restore(stream)).equals(input)).toBe(true);
    await expect.poll(() => page.textContent("#job-status")).toContain(`${stream.length} bytes`);
    expect(urls.some((u) => u.includes(token))).toBe(false);
    await page.close();
  }, 120_000);

  it("resumes an upload cut after its first chunk from the server's offset, after a reload", async () => {
    const input = textBytes(600_000, 23); // chunks of 256 KiB: 262144 + 262144 + 75712
    const picked = file("log-600k.txt", input);
    const page = await ctx.newPage();
    const { jobId, token } = await startFreeJob(page, { pick: picked });

    const before: { method: string; offset?: string }[] = [];
    let held: Route | undefined;
    const cut = async (route: Route) => {
      const req = route.request();
      before.push({ method: req.method(), offset: req.headers()["upload-offset"] });
      // the second chunk never arrives: the tab is reloaded while it is "on the wire"
      if (req.method() === "PATCH" && before.filter((r) => r.method === "PATCH").length === 2) {
        held = route;
        return;
      }
      await route.continue();
    };
    await page.route("**/api/jobs/uploads**", cut);
    await page.click("#u-start");
    await expect.poll(() => held !== undefined, { timeout: 30_000 }).toBe(true);
    expect(before.filter((r) => r.method === "PATCH").map((r) => r.offset)).toEqual(["0", "262144"]);

    // what the server holds: the first chunk
    const head = await h.app.inject({
      method: "HEAD",
      url: `/api/jobs/uploads/${jobId}`,
      headers: { authorization: `Bearer ${token}`, "tus-resumable": "1.0.0" },
    });
    expect(head.headers["upload-offset"]).toBe("262144");

    // the human pauses (the request on the wire is dropped), then reloads the tab
    await page.click("#u-pause");
    await (held as Route | undefined)?.abort().catch(() => {});
    await page.unroute("**/api/jobs/uploads**", cut);
    await page.reload();
    const after: { method: string; offset?: string }[] = [];
    await page.route("**/api/jobs/uploads**", async (route) => {
      after.push({ method: route.request().method(), offset: route.request().headers()["upload-offset"] });
      await route.continue();
    });
    // the tab kept the job; pick the same file again and resume
    await expect.poll(() => page.textContent("#job-id")).toBe(jobId);
    await expect.poll(() => page.isVisible("#upload-box")).toBe(true);
    await page.setInputFiles("#u-file", picked);
    await page.click("#u-start");
    await expect.poll(() => progressValue(page), { timeout: 30_000 }).toBe(100);
    expect(await page.getAttribute("#u-start", "data-from")).toBe("262144");
    expect(after.map((r) => r.method)).not.toContain("POST"); // no new upload: not restarted from 0
    expect(after.filter((r) => r.method === "PATCH").map((r) => r.offset)).toEqual(["262144", "524288"]);
    await expect.poll(() => page.textContent("#job-state"), { timeout: 60_000 }).toBe("done");

    const out = await h.app.inject({
      method: "GET",
      url: `/api/jobs/${jobId}/output`,
      headers: { authorization: `Bearer ${token}` },
    });
    expect((await restore(out.rawPayload)).equals(input)).toBe(true);
    await page.close();
  }, 120_000);

  it("shows the 413 of an upload larger than the quote, a bad token's 401 and an expired quote's 410, inline", async () => {
    const page = await ctx.newPage();
    const { jobId } = await startFreeJob(page, { bytes: 100_000 });
    await page.setInputFiles("#u-file", file("bigger.txt", textBytes(150_000, 5)));
    await page.click("#u-start");
    await expect.poll(() => page.textContent("#job-alert"), { timeout: 30_000 }).toContain("input_too_large");
    expect(await page.getAttribute("#job-alert", "role")).toBe("alert");
    expect(await page.textContent("#job-alert")).toContain("the job's quote covers 100000");

    await page.fill("#o-id", jobId);
    await page.fill("#o-token", "jt_not_the_token");
    await page.click('#open-form button[type="submit"]');
    await expect.poll(() => page.textContent("#job-alert")).toContain("job_token_invalid");

    // a quote that expired before it was paid: the checkout's 410 in the quote's alert
    await page.fill("#q-bytes", String(100_000_000_001));
    await page.fill("#q-email", "late@example.com");
    await page.click('#quote-form button[type="submit"]');
    await page.waitForSelector("#pay-card");
    const quoteId = ((await page.textContent("#quote-view h3")) ?? "").replace("Quote ", "");
    await h.app.services.db.kysely
      .updateTable("quotes")
      .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
      .where("id", "=", quoteId)
      .execute();
    await page.click("#pay-card");
    await expect.poll(() => page.textContent("#quote-alert")).toContain("quote_expired");
    expect(await page.getAttribute("#quote-alert", "role")).toBe("alert");
    await page.close();
  }, 60_000);

  it("takes a webhook URL with the quote, shows the secret once, and the job's events arrive signed with it", async () => {
    const got: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        got.push({ headers: req.headers, body });
        res.end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
    const port = (receiver.address() as { port: number }).port;
    const page = await ctx.newPage();
    try {
      await page.goto(`${h.base}/jobs`);
      await page.fill("#q-bytes", "30000");
      await page.fill("#q-callback", `http://127.0.0.1:${port}/hooks`);
      await page.click('#quote-form button[type="submit"]');
      await page.waitForSelector("#quote-view");
      await page.click("#start-free");
      await page.waitForSelector("#webhook-secret");
      const secret = ((await page.textContent("#webhook-secret code")) ?? "").trim();
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
      await page.waitForSelector("#job-token-box:not([hidden])");
      const token = await page.inputValue("#job-token-once");
      const jobId = ((await page.textContent("#job-id")) ?? "").trim();
      const cancel = await h.app.inject({
        method: "POST",
        url: `/api/jobs/${jobId}/cancel`,
        headers: { authorization: `Bearer ${token}` },
      });
      expect(cancel.statusCode).toBe(200);
      await expect.poll(() => got.length, { timeout: 15_000 }).toBeGreaterThan(0);
      const [first] = got;
      if (!first) throw new Error("no delivery");
      const event = new Webhook(secret).verify(first.body, first.headers as Record<string, string>) as {
        type: string;
        data: { job_id: string };
      };
      expect(event).toMatchObject({ type: "job.cancelled", data: { job_id: jobId } });
      // the secret is not part of what the page keeps
      const kept = await page.evaluate<string>("JSON.stringify(Object.assign({}, localStorage, sessionStorage))");
      expect(kept).not.toContain(secret);
    } finally {
      await page.close();
      await new Promise((r) => receiver.close(r));
    }
  }, 60_000);

  it('"Your jobs" lists the jobs this browser keeps: cancel and delete from the list, forget one that is gone (410)', async () => {
    const page = await ctx.newPage();
    const a = await startFreeJob(page, { bytes: 50_000 });
    const rowA = `#my-jobs-list li[data-job-id="${a.jobId}"]`;
    await expect.poll(() => page.getAttribute(rowA, "data-state")).toBe("awaiting_input");
    expect(await page.textContent(rowA)).toContain("compress");
    const asServer = (id: string, token: string, method: "GET" | "DELETE" = "GET") =>
      h.app.inject({ method, url: `/api/jobs/${id}`, headers: { authorization: `Bearer ${token}` } });

    // cancel from the list: the job ends cancelled, the list and the panel show it
    await page.click(`${rowA} button[data-action="cancel"]`);
    await expect.poll(() => page.getAttribute(rowA, "data-state")).toBe("cancelled");
    expect((await asServer(a.jobId, a.token)).json()).toMatchObject({
      state: "cancelled",
      error: { code: "cancelled" },
    });
    await expect.poll(() => page.textContent("#job-state")).toBe("cancelled");
    expect(await page.isVisible(`${rowA} button[data-action="cancel"]`)).toBe(false);
    const vs = await seriousA11yViolations(page);
    expect(vs, describeViolations(vs)).toEqual([]);
    await screenshot(page, "jobs-list");

    // delete from the list (after the confirmation): gone from the list, 410 on the server
    page.once("dialog", (d) => void d.accept());
    await page.click(`${rowA} button[data-action="delete"]`);
    await expect.poll(() => page.locator(rowA).count()).toBe(0);
    const deleted = await asServer(a.jobId, a.token);
    expect(deleted.statusCode).toBe(410);
    expect(deleted.json().code).toBe("job_deleted");

    // a job deleted elsewhere (here: through the API): the list says it is gone and forgets it on request
    const b = await startFreeJob(page, { bytes: 40_000 });
    expect((await asServer(b.jobId, b.token, "DELETE")).statusCode).toBe(204);
    await page.reload();
    const rowB = `#my-jobs-list li[data-job-id="${b.jobId}"]`;
    await expect.poll(() => page.getAttribute(rowB, "data-state")).toBe("gone");
    expect(await page.textContent(rowB)).toContain("job_deleted");
    expect(await page.isVisible(`${rowB} button[data-action="cancel"]`)).toBe(false);
    await page.click(`${rowB} button[data-action="forget"]`);
    await expect.poll(() => page.locator(rowB).count()).toBe(0);
    const kept = await page.evaluate<string>('localStorage.getItem("labphi.jobs.kept") ?? "[]"');
    expect(kept).not.toContain(b.jobId);
    expect(kept).not.toContain(a.jobId);
    // a job opened with a token that does not open it (the 401 test above) was never kept
    expect(kept).not.toContain("jt_not_the_token");
    expect(urls.some((u) => u.includes(a.token) || u.includes(b.token))).toBe(false);
    await page.close();
  }, 90_000);

  it("pays a quote above the free cap by card (Stripe stand-in) and comes back to /jobs with the job", async () => {
    const page = await ctx.newPage();
    await page.goto(`${h.base}/jobs`);
    // just past this IP's anonymous daily allowance (1 GB, less the small free jobs above): the minimum, $0.05
    await page.fill("#q-bytes", String(1_000_000_001));
    await page.fill("#q-email", "human@example.com");
    await page.click('#quote-form button[type="submit"]');
    await page.waitForSelector("#pay-card");
    expect(await page.textContent("#quote-total")).toContain("$0.05");
    await Promise.all([page.waitForURL(/\/c\/pay\/cs_test_/), page.click("#pay-card")]);
    await Promise.all([page.waitForURL(/\/jobs\/paid\?session_id=cs_test_/), page.click("#pay")]);
    await expect.poll(() => page.textContent("h1")).toContain("your job is ready");
    const jobId = (await page.textContent("#paid-job-id")) ?? "";
    const token = await page.inputValue("#paid-job-token");
    expect(token).toMatch(/^jt_/);
    const vs = await seriousA11yViolations(page);
    expect(vs, describeViolations(vs)).toEqual([]);
    await screenshot(page, "jobs-paid");
    await Promise.all([page.waitForURL(`${h.base}/jobs`), page.click("#paid-continue")]);
    await expect.poll(() => page.textContent("#job-id")).toBe(jobId);
    await expect.poll(() => page.textContent("#job-state")).toBe("awaiting input");
    expect(await page.isVisible("#upload-box")).toBe(true);
    expect(urls.some((u) => u.includes(token))).toBe(false);
    await page.close();
  }, 60_000);
});

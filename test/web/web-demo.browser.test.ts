import { createHash } from "node:crypto";
import fs from "node:fs";
import zlib from "node:zlib";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decompress } from "../../src/codec/index.js";
import {
  describeViolations,
  launchBrowser,
  type SiteHarness,
  screenshot,
  seriousA11yViolations,
  startSite,
  WIDTHS,
} from "../support/browser.js";

/** The codec demo (/web) in a real Chromium: compress, chart, download, round trip, problems inline. */

const SLOW = 64 * 1024;
/** codec requests a minute per address: room for this file's requests, exhausted by the last test */
const PER_MINUTE = 30;

const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** The peers as node:zlib measures them (gzip level 9; brotli quality 11 with a size hint). */
function peers(bytes: Buffer) {
  return {
    "gzip-9": zlib.gzipSync(bytes, { level: 9 }).length,
    "brotli-11": zlib.brotliCompressSync(bytes, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
      },
    }).length,
  };
}

function readings(n: number): Buffer {
  const rows = [];
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    rows.push({ id: i, sensor: `s-${x % 7}`, t: 1_700_000_000 + i * 60, value: (x % 10000) / 100 });
  }
  return Buffer.from(JSON.stringify(rows, null, 1));
}

/** The chart's rows as shown: method → { bytes, drawn bar and track widths in px, value text }. */
async function chartRows(page: Page) {
  const rows: Record<string, { bytes: number; width: number; track: number; value: string }> = {};
  const bars = page.locator("#demo-chart .bar");
  for (let i = 0; i < (await bars.count()); i++) {
    const bar = bars.nth(i);
    const method = (await bar.getAttribute("data-method")) ?? "";
    rows[method] = {
      bytes: Number(await bar.getAttribute("data-bytes")),
      width: (await bar.locator("span").boundingBox())?.width ?? 0,
      track: (await bar.boundingBox())?.width ?? 0,
      value: (await page.locator(`#demo-chart .value[data-method="${method}"]`).textContent()) ?? "",
    };
  }
  return rows;
}

/** The page is no wider than the viewport (evaluated in the page; this file has no DOM types). */
async function noHorizontalScroll(page: Page): Promise<boolean> {
  return page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth");
}

describe("codec demo in a real browser", () => {
  let h: SiteHarness;
  let browser: Browser;
  let page: Page;
  /** the omni container downloaded in the first test, with its input */
  let saved: { container: Buffer; input: Buffer } | undefined;
  /** the classic stream downloaded in the second test, with its name and input */
  let classicSaved: { stream: Buffer; name: string; input: Buffer } | undefined;

  beforeAll(async () => {
    h = await startSite({
      CODEC_SLOW_LIMIT_BYTES: String(SLOW),
      RATE_LIMIT_ENABLED: "true",
      RATE_LIMIT_CODEC_PER_MINUTE: String(PER_MINUTE),
    });
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: WIDTHS.desktop, acceptDownloads: true });
    page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (err) => errors.push(String(err)));
    page.on("console", (msg) => {
      if (msg.type() === "error") errors.push(msg.text());
    });
    await page.goto(`${h.base}/web`);
    await page.waitForSelector("#demo-compress:not([disabled])");
    expect(errors).toEqual([]);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it("compresses a chosen file with omni, charts it against gzip-9 and brotli-11, downloads and round-trips it", async () => {
    const file = readings(400);
    expect(file.length).toBeLessThan(SLOW);
    await page.setInputFiles("#demo-file", { name: "readings.json", mimeType: "application/json", buffer: file });
    await expect
      .poll(() => page.textContent("#demo-file-info"))
      .toContain(`readings.json (${file.length.toLocaleString("en-US")} bytes)`);
    await page.check('input[name="level"][value="balanced"]');
    await page.click("#demo-compress");
    await page.waitForSelector("#demo-result:not([hidden])");

    const route = (await page.textContent("#demo-route")) ?? "";
    expect(route).toMatch(/Pathomni\/\w+/);
    expect(route).toContain("Levelbalanced");
    expect(route).toContain("Data classjson");
    const counsel = (await page.textContent("#demo-counsel")) ?? "";
    expect(counsel).toContain("What the data is");
    expect(counsel).toContain("A JSON document");
    expect(counsel).toContain("router:");

    const rows = await chartRows(page);
    const measured = peers(file);
    expect(Object.keys(rows).sort()).toEqual(["brotli-11", "gzip-9", "input", "omni"]);
    expect(rows.input?.bytes).toBe(file.length);
    expect(rows["gzip-9"]?.bytes).toBe(measured["gzip-9"]);
    expect(rows["brotli-11"]?.bytes).toBe(measured["brotli-11"]);
    expect(rows["gzip-9"]?.value).toContain(`${measured["gzip-9"].toLocaleString("en-US")} bytes`);
    // bars are drawn to scale: the input is the full track, the others in proportion
    const input = rows.input as { width: number; track: number };
    expect(Math.abs(input.width - input.track)).toBeLessThan(1.5);
    for (const m of ["omni", "gzip-9", "brotli-11"]) {
      const r = rows[m] as { bytes: number; width: number };
      expect(Math.abs(r.width / input.width - r.bytes / file.length)).toBeLessThan(0.01);
    }

    // download the container: the codec library decodes it to the file's bytes
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#demo-download")]);
    expect(download.suggestedFilename()).toBe("readings.json.lpz");
    const container = fs.readFileSync((await download.path()) as string);
    expect(container.length).toBe(rows.omni?.bytes);
    expect(Buffer.from(await decompress(container)).equals(file)).toBe(true);
    saved = { container, input: file };

    // decompress through the page: the verdict says the round trip matched, with both digests
    await page.click("#demo-decompress");
    await page.waitForSelector("#demo-verdict:not([hidden])");
    const verdict = (await page.textContent("#demo-verdict")) ?? "";
    expect(verdict).toContain("Round trip matched.");
    expect(verdict).toContain(`decompressed to ${file.length.toLocaleString("en-US")} bytes, identical to your input`);
    expect(verdict.split(sha256(file)).length).toBe(3); // input and output digests, both the file's
    expect(await page.getAttribute("#demo-verdict", "data-verdict")).toBe("match");
    expect(await page.getAttribute("#demo-verdict", "class")).toContain("notice-ok");

    expect(await noHorizontalScroll(page)).toBe(true);
    const violations = await seriousA11yViolations(page);
    expect(violations, describeViolations(violations)).toEqual([]);
    await screenshot(page, "web-demo-result");
  }, 60_000);

  it("compresses pasted text with classic: its stream is the smaller peer and round-trips", async () => {
    await page.click("#demo-clear-file");
    expect(await page.isHidden("#demo-file-info")).toBe(true);
    const text = "Lab Phi compresses text, numbers and JSON. ".repeat(60) + "Grüße, φ ✓\n";
    const bytes = Buffer.from(text, "utf8");
    await page.fill("#demo-text", text);
    await page.check('input[name="engine"][value="classic"]');
    expect(await page.isDisabled('input[name="level"][value="max"]')).toBe(true);
    await page.click("#demo-compress");
    await expect.poll(() => page.textContent("#demo-route")).toContain("classic (");

    const rows = await chartRows(page);
    const measured = peers(bytes);
    expect(rows.input?.bytes).toBe(bytes.length);
    expect(rows.classic?.bytes).toBe(Math.min(measured["gzip-9"], measured["brotli-11"]));
    expect(rows["gzip-9"]?.bytes).toBe(measured["gzip-9"]);
    expect(rows["brotli-11"]?.bytes).toBe(measured["brotli-11"]);

    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#demo-download")]);
    const stream = fs.readFileSync((await download.path()) as string);
    const gzip = download.suggestedFilename().endsWith(".gz");
    expect(download.suggestedFilename()).toMatch(/^pasted-text\.txt\.(gz|br)$/);
    expect((gzip ? zlib.gunzipSync(stream) : zlib.brotliDecompressSync(stream)).equals(bytes)).toBe(true);
    classicSaved = { stream, name: download.suggestedFilename(), input: bytes };

    await page.click("#demo-decompress");
    await expect.poll(() => page.textContent("#demo-verdict")).toContain("Round trip matched.");
    expect(await page.textContent("#demo-verdict")).toContain(sha256(bytes));
    await page.check('input[name="engine"][value="omni"]');
  }, 60_000);

  it("decompresses a container file: restored size, SHA-256 and the bytes to download; a damaged one shows the problem", async () => {
    const { container, input } = saved as { container: Buffer; input: Buffer };
    await page.setInputFiles("#undo-file", {
      name: "readings.json.lpz",
      mimeType: "application/octet-stream",
      buffer: container,
    });
    expect(await page.isChecked('input[name="undo-engine"][value="omni"]')).toBe(true);
    await page.click("#undo-decompress");
    await page.waitForSelector("#undo-result:not([hidden])");
    const shown = (await page.textContent("#undo-result")) ?? "";
    expect(shown).toContain(
      `${container.length.toLocaleString("en-US")} bytes of omni container restored ${input.length.toLocaleString("en-US")} bytes`,
    );
    expect(shown).toContain(sha256(input));
    const [download] = await Promise.all([page.waitForEvent("download"), page.click("#undo-download")]);
    expect(download.suggestedFilename()).toBe("readings.json");
    expect(fs.readFileSync((await download.path()) as string).equals(input)).toBe(true);

    // the classic stream: picked as classic by its extension
    const c = classicSaved as { stream: Buffer; name: string; input: Buffer };
    await page.setInputFiles("#undo-file", { name: c.name, mimeType: "application/octet-stream", buffer: c.stream });
    expect(await page.isChecked('input[name="undo-engine"][value="classic"]')).toBe(true);
    await page.click("#undo-decompress");
    await expect.poll(() => page.textContent("#undo-result")).toContain(sha256(c.input));

    // a damaged container: the codec's problem, inline, never raw JSON
    const damaged = Buffer.from(container);
    damaged[0] = 0x00;
    await page.setInputFiles("#undo-file", {
      name: "damaged.lpz",
      mimeType: "application/octet-stream",
      buffer: damaged,
    });
    await page.click("#undo-decompress");
    const alert = page.locator('#undo-problem[role="alert"]');
    await expect.poll(() => alert.isVisible()).toBe(true);
    expect(await alert.textContent()).toMatch(/\(codec_[a-z_]+\)$/);
    expect(await alert.textContent()).not.toContain("{");
    expect(await page.isHidden("#undo-result")).toBe(true);
    expect(await page.isHidden("#undo-download")).toBe(true);
  }, 60_000);

  it("shows problems inline in the API's words: an empty input and one over the level's limit", async () => {
    await page.fill("#demo-text", "");
    await page.click("#demo-compress");
    const alert = page.locator('#demo-problem[role="alert"]');
    await expect.poll(() => alert.isVisible()).toBe(true);
    expect(await alert.textContent()).toContain("Nothing to compress");

    const big = Buffer.alloc(SLOW + 1000, "abcdefgh");
    await page.setInputFiles("#demo-file", { name: "big.txt", mimeType: "text/plain", buffer: big });
    await page.check('input[name="level"][value="max"]');
    await page.click("#demo-compress");
    await expect.poll(() => alert.textContent()).toContain("codec_input_too_large");
    const words = (await alert.textContent()) ?? "";
    expect(words).toContain(`takes inputs up to ${SLOW} bytes; this one is ${SLOW + 1000}`);
    expect(words).not.toContain("{");
    expect(await alert.getAttribute("class")).toContain("notice-error");
    expect(await page.isHidden("#demo-result")).toBe(true); // no stale result beside the problem
    await screenshot(page, "web-demo-problem");
  }, 60_000);

  it("fits a phone: no horizontal scrolling, usable form, no serious a11y violations", async () => {
    // the same page, resized (one browser context per file: Chromium runs as a single process here)
    const phone = page;
    await phone.setViewportSize(WIDTHS.phone);
    await phone.goto(`${h.base}/web`);
    await phone.waitForSelector("#demo-compress:not([disabled])");
    await phone.fill("#demo-text", "phone phone phone phone phone phone phone phone");
    // keyboard: the compress button is reachable and pressable
    await phone.focus("#demo-compress");
    await phone.keyboard.press("Enter");
    await phone.waitForSelector("#demo-result:not([hidden])");
    expect(await noHorizontalScroll(phone)).toBe(true);
    const violations = await seriousA11yViolations(phone);
    expect(violations, describeViolations(violations)).toEqual([]);
    await screenshot(phone, "web-demo-result");
  }, 60_000);

  it("shows the rate limit on the page and a 429 inline once it is used up", async () => {
    expect(await page.textContent(".demo-limits")).toContain(`${PER_MINUTE} codec requests a minute from one address`);
    // use up this address's budget (the browser and this test share 127.0.0.1)
    let status = 0;
    for (let i = 0; i <= PER_MINUTE && status !== 429; i++) {
      const r = await fetch(`${h.base}/api/web-codec`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ op: "compress", data: "x", level: "fast" }),
      });
      status = r.status;
    }
    expect(status).toBe(429);
    await page.fill("#demo-text", "rate limited text");
    await page.click("#demo-compress");
    const alert = page.locator('#demo-problem[role="alert"]');
    await expect.poll(() => alert.textContent()).toContain("(rate_limited)");
    expect(await alert.textContent()).toMatch(new RegExp(`at most ${PER_MINUTE} a minute\\. Retry after \\d+ s\\.`));
    expect(await alert.isVisible()).toBe(true);
  }, 60_000);
});

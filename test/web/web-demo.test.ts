import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testConfig } from "../../src/config.js";
import { binaryBytes, demoSettings, webDemoBody } from "../../src/web/pages/web-demo.js";
import { type TestApp, testApp } from "../support/app.js";

/** The server-rendered codec demo page (/web): form, controls and limits in the HTML. */

const SLOW = 65536;

describe("GET /web (server-rendered codec demo)", () => {
  let t: TestApp;
  let html: string;
  let headers: Record<string, unknown>;
  beforeAll(async () => {
    t = await testApp("sqlite", envOf(SLOW));
    const r = await t.app.inject({ method: "GET", url: "/web", headers: { accept: "text/html" } });
    expect(r.statusCode).toBe(200);
    html = r.body;
    headers = r.headers;
  });
  afterAll(() => t.close());

  it("is an HTML page with a title, a description, no-cache and the strict CSP", () => {
    expect(headers["content-type"]).toContain("text/html");
    expect(headers["cache-control"]).toBe("no-cache");
    expect(String(headers["content-security-policy"])).toContain("script-src 'self'");
    expect(html).toContain("<title>Codec demo · Lab Phi</title>");
    expect(html).toMatch(/<meta name="description" content="[^"]*gzip-9 and brotli-11[^"]*">/);
    expect(html).toContain('<a href="/web" aria-current="page">');
  });

  it("renders the form and every control without JavaScript", () => {
    expect(html).toContain('<form id="demo"');
    expect(html).toMatch(/<label for="demo-text">Paste text<\/label>\s*<textarea id="demo-text"/);
    expect(html).toMatch(/<label for="demo-file">Or choose a file<\/label>\s*<input type="file" id="demo-file"/);
    expect(html).toContain('<input type="radio" name="engine" value="omni" checked>');
    expect(html).toContain('<input type="radio" name="engine" value="classic">');
    for (const level of ["fast", "balanced", "max"]) expect(html).toContain(`name="level" value="${level}"`);
    expect(html).toMatch(/name="level" value="max" checked/);
    expect(html).toContain('<button type="submit" class="btn-primary" id="demo-compress" disabled>Compress</button>');
    expect(html).toContain('id="demo-problem" role="alert"');
    expect(html).toContain('id="demo-result-problem" role="alert"');
  });

  it("states the limits the engine applies, from the settings", () => {
    expect(html).toContain("level <strong>max</strong>: 64 KiB (65,536 bytes)");
    expect(html).toContain("level <strong>balanced</strong>: 64 KiB (65,536 bytes)");
    expect(html).toContain("level <strong>fast</strong>: 4 MiB (4,194,304 bytes)");
    expect(html).toContain("measured on inputs up to 64 KiB (65,536 bytes)");
    expect(html).toContain("17 codec requests a minute from one address");
    expect(html).toContain("POST /api/x402-suite");
    const block = html.match(/<script type="application\/json" id="demo-settings">([^<]*)<\/script>/);
    expect(block).not.toBeNull();
    const settings = JSON.parse(block?.[1] ?? "{}");
    expect(settings).toEqual(demoSettings(t.app.services.engine, testConfig(envOf(SLOW))));
    expect(settings.input_limit_bytes).toEqual({ fast: 4 * 1024 * 1024, balanced: SLOW, max: SLOW });
    expect(settings.peers_limit_bytes).toBe(SLOW);
    expect(settings.per_minute).toBe(17);
  });

  it("explains without JavaScript that the demo needs it, pointing to the CLI and the API", () => {
    const noscript = html.match(/<noscript>([\s\S]*?)<\/noscript>/)?.[1] ?? "";
    expect(noscript).toContain("needs JavaScript");
    expect(noscript).toContain("labphi compress FILE");
    expect(noscript).toContain("API");
    expect(html).toContain("curl -s http://lab.test/api/web-codec");
    expect(html).toContain("&quot;peers&quot;:true");
  });

  it("has no inline script, style attribute or handler; loads its bundled entry", async () => {
    expect(html).not.toMatch(/\sstyle=/);
    expect(html).not.toMatch(/\son[a-z]+=/);
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1] ?? "");
    for (const s of scripts) expect(s).toMatch(/type="module" src="\/assets\/|type="application\/json"/);
    const src = html.match(/<script type="module" src="(\/assets\/web-demo-[^"]+\.js)">/)?.[1];
    expect(src).toBeDefined();
    const js = await t.app.inject({ method: "GET", url: src as string });
    expect(js.statusCode).toBe(200);
    expect(js.headers["cache-control"]).toContain("immutable");
    expect(js.body).toContain("demo-settings");
  });

  it("escapes what it embeds and reports an unlimited rate when limits are off", () => {
    const body = webDemoBody(
      t.app.services.engine,
      testConfig({ BASE_URL: "http://x.test/<script>", RATE_LIMIT_ENABLED: "false" }),
    );
    expect(body).not.toContain("<script>");
    expect(body).toContain("http://x.test/&lt;script&gt;/api/web-codec");
    expect(body).toContain("This server sets no per-minute limit on codec requests.");
    expect(body).toContain('"per_minute":null');
  });

  it("formats limits in binary units", () => {
    expect(binaryBytes(131072)).toBe("128 KiB");
    expect(binaryBytes(8 * 1024 * 1024)).toBe("8 MiB");
    expect(binaryBytes(1500)).toBe("1.5 KiB");
    expect(binaryBytes(512)).toBe("512 bytes");
  });

  it("is in the OpenAPI document under the web tag", async () => {
    const doc = (await t.app.inject({ method: "GET", url: "/openapi.yaml" })).body;
    expect(doc).toMatch(/\n {2}\/web:\n/);
    expect(doc).toContain("The free codec demo (HTML)");
  });
});

function envOf(slow: number): Record<string, string> {
  return {
    CODEC_SLOW_LIMIT_BYTES: String(slow),
    CODEC_BODY_LIMIT_BYTES: String(4 * 1024 * 1024),
    RATE_LIMIT_ENABLED: "true",
    RATE_LIMIT_CODEC_PER_MINUTE: "17",
  };
}

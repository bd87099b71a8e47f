import { z } from "zod";
import { LEVELS, type Level } from "../../codec/index.js";
import type { Config } from "../../config.js";
import { type EngineService, LEVEL_TRADEOFF, SUITE_POINTER } from "../../engine/service.js";
import type { App } from "../../http/types.js";
import { escapeHtml as e } from "../html.js";
import { sendPage } from "../layout.js";

/**
 * /web: the free codec demo (issue #13). The server renders the whole form, the controls and the
 * limits (read from the engine and the settings, so the page never states a limit the API does
 * not apply); web/src/web-demo.ts enhances it: it calls POST /api/web-codec like any agent does,
 * draws the size chart, offers the container for download and checks the round trip. Without
 * JavaScript the page says so and points to the labphi CLI and the API.
 */

/** What the page's script needs, passed in a JSON data block (not executed; CSP-safe). */
export interface DemoSettings {
  endpoint: string;
  levels: Level[];
  default_level: Level;
  /** input limit per level of an omni compress */
  input_limit_bytes: Record<Level, number>;
  /** input limit of the classic engine and of measuring the gzip-9/brotli-11 peers */
  peers_limit_bytes: number;
  /** request body limit: the base64 of the input must fit */
  body_limit_bytes: number;
  /** codec requests per minute per IP, null when this server does not limit them */
  per_minute: number | null;
  /** each level's decode-speed trade-off, in words */
  tradeoffs: Record<Level, string>;
}

const DEFAULT_LEVEL: Level = "max";

/** 131072 → "128 KiB"; exact byte counts are shown next to it. */
export function binaryBytes(n: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB"];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1 && v % 1024 === 0) {
    v /= 1024;
    u++;
  }
  if (u === 0 && n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${v.toLocaleString("en-US")} ${units[u]}`;
}

const exact = (n: number) => `${n.toLocaleString("en-US")} bytes`;
const sized = (n: number) => `${binaryBytes(n)}${n >= 1024 ? ` (${exact(n)})` : ""}`;

export function demoSettings(engine: EngineService, config: Config): DemoSettings {
  const input_limit_bytes = {} as Record<Level, number>;
  for (const level of LEVELS) input_limit_bytes[level] = engine.inputLimit(level);
  return {
    endpoint: "/api/web-codec",
    levels: [...LEVELS],
    default_level: DEFAULT_LEVEL,
    input_limit_bytes,
    peers_limit_bytes: engine.inputLimit("bench"),
    body_limit_bytes: engine.limits.bodyLimitBytes,
    per_minute: config.rateLimit.enabled ? config.rateLimit.perMinute.codec : null,
    tradeoffs: { ...LEVEL_TRADEOFF },
  };
}

/** JSON inside <script type="application/json">: "<" escaped so no "</script>" can close it. */
function jsonBlock(id: string, value: unknown): string {
  const json = JSON.stringify(value).replace(/</g, "\\u003c");
  return `<script type="application/json" id="${e(id)}">${json}</script>`;
}

const LEVEL_NOTE: Record<Level, string> = {
  fast: "one chamber, quickest",
  balanced: "fast backends, quick to decode",
  max: "strongest models, smallest output",
};

function levelChoices(s: DemoSettings): string {
  return s.levels
    .map(
      (
        level,
      ) => `<label><input type="radio" name="level" value="${e(level)}"${level === s.default_level ? " checked" : ""} aria-describedby="level-${e(level)}-hint">
<span>${e(level)} <span class="muted small" id="level-${e(level)}-hint">— ${e(LEVEL_NOTE[level])}, up to ${e(binaryBytes(s.input_limit_bytes[level]))}</span></span></label>`,
    )
    .join("\n");
}

function limitsCard(s: DemoSettings, engine: EngineService): string {
  const d = engine.limitsDescriptor();
  const levels = s.levels
    .map((l) => `<li>level <strong>${e(l)}</strong>: ${e(sized(s.input_limit_bytes[l]))}</li>`)
    .join("");
  const rate =
    s.per_minute === null
      ? "This server sets no per-minute limit on codec requests."
      : `${s.per_minute} codec requests a minute from one address (each compress and each decompress counts); over that, the page shows the 429 answer and when to retry.`;
  return `<aside class="card demo-limits" aria-labelledby="limits-title">
<h2 id="limits-title">Free, with limits</h2>
<p class="small muted">No account and no payment. The same limits apply to agents calling the API.</p>
<dl class="kv small">
<dt>Input per compress</dt><dd><ul class="demo-list">${levels}<li>classic engine: ${e(sized(s.peers_limit_bytes))}</li></ul></dd>
<dt>gzip-9 and brotli-11</dt><dd>measured on inputs up to ${e(sized(s.peers_limit_bytes))}</dd>
<dt>Request body</dt><dd>${e(sized(s.body_limit_bytes))}; the page sends your bytes as base64 (a third larger)</dd>
<dt>Decompress output</dt><dd>${e(sized(d.output_limit_bytes.fast_chambers))} (context-mixing containers: ${e(sized(d.output_limit_bytes.context_mixing))})</dd>
<dt>Rate</dt><dd>${e(rate)}</dd>
<dt>At once</dt><dd>${e(String(d.slow_concurrency))} slow requests (levels max and balanced, classic); when busy the answer is 503 with a retry time</dd>
<dt>Larger data</dt><dd>the <code>labphi</code> CLI (no limit) or a <a href="/jobs">suite job</a> (<code>${e(SUITE_POINTER)}</code>)</dd>
<dt>Privacy</dt><dd>bytes are processed in memory and not stored</dd>
</dl>
</aside>`;
}

export function webDemoBody(engine: EngineService, config: Config): string {
  const s = demoSettings(engine, config);
  const base = config.baseUrl.replace(/\/$/, "");
  const curl = `curl -s ${base}/api/web-codec -H 'content-type: application/json' \\
  -d '{"op":"compress","data":"hello hello hello","engine":"omni","level":"max","peers":true}'`;
  return `<section class="hero">
<h1>Codec demo</h1>
<p class="lead">Compress text or a file with the omni engine or the classic one, see which path the router chose and why, compare the size with gzip-9 and brotli-11, then decompress the container and check that every byte came back.</p>
</section>
<noscript><div class="notice notice-warn demo-nojs"><p><strong>This demo needs JavaScript:</strong> the page reads your text or file in the browser and sends it to the codec API. Without JavaScript, use the <code>labphi</code> CLI (<code>npx labphi compress FILE -o FILE.lpz</code>, <code>npx labphi decompress FILE.lpz</code>) or call the API yourself (below).</p></div></noscript>
<div class="demo-layout">
<form id="demo" class="card" aria-labelledby="input-title" novalidate>
<h2 id="input-title">Your data</h2>
<div class="field">
<label for="demo-text">Paste text</label>
<textarea id="demo-text" name="text" rows="8" spellcheck="false" aria-describedby="demo-text-hint"></textarea>
<span class="hint" id="demo-text-hint">Sent as its UTF-8 bytes, exactly as typed. A chosen file takes precedence.</span>
</div>
<div class="dropzone" id="demo-drop">
<div class="field">
<label for="demo-file">Or choose a file</label>
<input type="file" id="demo-file" name="file" aria-describedby="demo-file-hint">
<span class="hint" id="demo-file-hint">You can also drop a file on this box.</span>
</div>
<p id="demo-file-info" class="small" aria-live="polite" hidden></p>
<button type="button" class="btn-secondary" id="demo-clear-file" hidden>Remove the file</button>
</div>
<fieldset>
<legend>Engine</legend>
<div class="choices">
<label><input type="radio" name="engine" value="omni" checked> <span>omni <span class="muted small">— profiles the bytes and routes them to a chamber</span></span></label>
<label><input type="radio" name="engine" value="classic"> <span>classic <span class="muted small">— the smaller of brotli-11 and gzip-9, a standard stream</span></span></label>
</div>
</fieldset>
<fieldset id="demo-levels">
<legend>Level (omni)</legend>
<div class="choices demo-levels">
${levelChoices(s)}
</div>
<p class="hint small" id="demo-level-note">${e(capitalise(LEVEL_TRADEOFF[s.default_level]))}.</p>
</fieldset>
<div id="demo-problem" role="alert" class="notice notice-error" hidden></div>
<div class="card-actions">
<button type="submit" class="btn-primary" id="demo-compress" disabled>Compress</button>
<span id="demo-busy" class="small muted" role="status" aria-live="polite"></span>
</div>
<p class="small muted demo-needs-js">The Compress button works once the page's script has loaded (JavaScript is needed).</p>
</form>
${limitsCard(s, engine)}
</div>
<section id="demo-result" class="demo-result" aria-labelledby="result-title" hidden>
<h2 id="result-title" tabindex="-1">Result</h2>
<div class="demo-layout">
<div class="card">
<h3>Path and counsel</h3>
<dl class="kv" id="demo-route"></dl>
<h4>Counsel</h4>
<dl class="kv small" id="demo-counsel"></dl>
</div>
<div class="card">
<h3>Sizes</h3>
<figure class="demo-figure">
<figcaption class="small muted">Bytes after compression (shorter is better), against the input</figcaption>
<div class="bars" id="demo-chart"></div>
</figure>
<p class="small muted" id="demo-chart-note"></p>
<div class="card-actions">
<button type="button" class="btn-primary" id="demo-decompress">Decompress and verify</button>
<button type="button" class="btn-secondary" id="demo-download">Download the container</button>
</div>
<div id="demo-result-problem" role="alert" class="notice notice-error" hidden></div>
<div id="demo-verdict" class="notice" role="status" aria-live="polite" hidden></div>
</div>
</div>
</section>
<section class="demo-undo" aria-labelledby="undo-title">
<h2 id="undo-title">Decompress a container</h2>
<form id="undo" class="card" aria-labelledby="undo-title" novalidate>
<p class="small muted">A container downloaded here or written by <code>labphi compress</code>; its restored bytes stay in your browser until you download them.</p>
<div class="field">
<label for="undo-file">Container file</label>
<input type="file" id="undo-file" name="container" aria-describedby="undo-file-hint">
<span class="hint" id="undo-file-hint">Up to ${e(sized(s.body_limit_bytes))} sent as base64 (about ${e(sized(Math.floor((s.body_limit_bytes * 3) / 4)))} of container).</span>
</div>
<fieldset>
<legend>Kind</legend>
<div class="choices">
<label><input type="radio" name="undo-engine" value="omni" checked> <span>omni container <span class="muted small">— .lpz, bare streams and gzip too</span></span></label>
<label><input type="radio" name="undo-engine" value="classic"> <span>classic stream <span class="muted small">— .br or .gz from the classic engine</span></span></label>
</div>
</fieldset>
<div id="undo-problem" role="alert" class="notice notice-error" hidden></div>
<div class="card-actions">
<button type="submit" class="btn-primary" id="undo-decompress" disabled>Decompress</button>
<button type="button" class="btn-secondary" id="undo-download" hidden>Download the restored bytes</button>
</div>
<div id="undo-result" class="notice notice-ok" role="status" aria-live="polite" hidden></div>
</form>
</section>
<section class="demo-api" aria-labelledby="api-title">
<h2 id="api-title">The same, from a program</h2>
<p>The page calls <code>POST /api/web-codec</code>, like agents do (<a href="/api/web-codec">descriptor</a>, <a href="/openapi.yaml">OpenAPI</a>). <code>peers: true</code> adds the measured gzip-9 and brotli-11 sizes.</p>
<pre><code>${e(curl)}</code></pre>
<p>Decompress with <code>{"op":"decompress","data":"&lt;container, base64&gt;","encoding":"base64"}</code> (and <code>"engine":"classic"</code> for a classic stream), or locally with <code>npx labphi decompress FILE.lpz</code>.</p>
</section>
${jsonBlock("demo-settings", s)}`;
}

const capitalise = (t: string) => t.charAt(0).toUpperCase() + t.slice(1);

export function webDemoPages(app: App, deps: { engine: EngineService; config: Config }) {
  const { engine, config } = deps;
  app.get(
    "/web",
    {
      schema: {
        summary: "The free codec demo (HTML): compress text or a file with omni or classic, compare, round-trip",
        tags: ["web"],
        response: { 200: z.string() },
      },
    },
    async (_request, reply) =>
      sendPage(reply, 200, {
        title: "Codec demo",
        description:
          "Try the Lab Phi codec for free: compress text or a file with omni or classic, compare with gzip-9 and brotli-11, download the container and check the round trip.",
        path: "/web",
        body: webDemoBody(engine, config),
        scripts: ["web-demo"],
      }),
  );
}

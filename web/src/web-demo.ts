/**
 * The codec demo (/web): enhances the server-rendered form. Reads pasted text or a chosen/dropped
 * file, calls POST /api/web-codec (compress with peers, then decompress) exactly as an agent
 * would, draws the size chart, offers the container for download and checks the round trip
 * (bytes and SHA-256). Problems (400, 413, 429, 503) are shown inline in the API's words.
 */
import { type Bytes, base64Length, bytesText, count, firstDifference, fromBase64, toBase64 } from "./_demo-bytes.js";
import { el, fillKv } from "./_demo-dom.js";
import { enhanceUndo } from "./_demo-undo.js";
import { $, api, download, problemText, ready, say, sha256Hex } from "./_lib.js";

type Level = "fast" | "balanced" | "max";
type EngineKind = "omni" | "classic";

interface Settings {
  endpoint: string;
  levels: Level[];
  default_level: Level;
  input_limit_bytes: Record<Level, number>;
  peers_limit_bytes: number;
  body_limit_bytes: number;
  per_minute: number | null;
  tradeoffs: Record<Level, string>;
}

interface Counsel {
  heart: string;
  brain: string;
  cloak: string;
}

interface CompressAnswer {
  engine: EngineKind;
  method: string;
  path: string;
  chamber: string | null;
  level: Level | null;
  data_class: string;
  original_bytes: number;
  compressed_bytes: number;
  ratio: number;
  sizes?: { "brotli-11": number; "gzip-9": number };
  verified: true;
  data: string;
  counsel?: Counsel;
}

interface DecompressAnswer {
  engine: EngineKind;
  method: string;
  original_bytes: number;
  compressed_bytes: number;
  data: string;
}

/** The last compress: what the download and the round trip work on. */
interface Done {
  input: Bytes;
  name: string;
  engine: EngineKind;
  answer: CompressAnswer;
  container: Bytes;
}

/** JSON request bodies leave room for the other fields within the body limit. */
const JSON_OVERHEAD = 1024;

const COUNSEL_LABELS: [keyof Counsel, string][] = [
  ["heart", "What the data is"],
  ["brain", "Why this path"],
  ["cloak", "What is kept"],
];

const pct = (part: number, whole: number): string =>
  whole > 0 ? `${((part / whole) * 100).toFixed(part / whole < 0.1 ? 1 : 0)}%` : "—";

function fileNameFor(name: string, a: CompressAnswer): string {
  if (a.engine === "classic") return `${name}.${a.method === "gzip-9" ? "gz" : "br"}`;
  return `${name}.lpz`;
}

ready(() => {
  const settings = JSON.parse($("#demo-settings").textContent ?? "{}") as Settings;
  const form = $<HTMLFormElement>("#demo");
  const text = $<HTMLTextAreaElement>("#demo-text");
  const fileInput = $<HTMLInputElement>("#demo-file");
  const drop = $("#demo-drop");
  const fileInfo = $("#demo-file-info");
  const clearFile = $<HTMLButtonElement>("#demo-clear-file");
  const levels = $<HTMLFieldSetElement>("#demo-levels");
  const levelNote = $("#demo-level-note");
  const problem = $("#demo-problem");
  const compressBtn = $<HTMLButtonElement>("#demo-compress");
  const busy = $("#demo-busy");
  const result = $("#demo-result");
  const route = $("#demo-route");
  const counsel = $("#demo-counsel");
  const chart = $("#demo-chart");
  const chartNote = $("#demo-chart-note");
  const decompressBtn = $<HTMLButtonElement>("#demo-decompress");
  const downloadBtn = $<HTMLButtonElement>("#demo-download");
  const resultProblem = $("#demo-result-problem");
  const verdict = $("#demo-verdict");

  let file: File | null = null;
  let done: Done | null = null;

  for (const n of document.querySelectorAll<HTMLElement>(".demo-needs-js")) n.hidden = true;
  compressBtn.disabled = false;
  enhanceUndo(settings.endpoint);

  const engineKind = (): EngineKind =>
    (form.querySelector<HTMLInputElement>('input[name="engine"]:checked')?.value as EngineKind) ?? "omni";
  const level = (): Level =>
    (form.querySelector<HTMLInputElement>('input[name="level"]:checked')?.value as Level) ?? settings.default_level;

  const syncControls = () => {
    levels.disabled = engineKind() === "classic";
    const tradeoff = settings.tradeoffs[level()];
    levelNote.textContent =
      engineKind() === "classic"
        ? "The classic engine has no levels: it runs brotli-11 and gzip-9 and keeps the smaller."
        : `${tradeoff.charAt(0).toUpperCase()}${tradeoff.slice(1)}.`;
  };
  form.addEventListener("change", (ev) => {
    if ((ev.target as HTMLInputElement).name !== "file") syncControls();
  });
  syncControls();

  const setFile = (f: File | null) => {
    file = f;
    if (f) {
      fileInfo.textContent = `File chosen: ${f.name} (${bytesText(f.size)}). It is used instead of the text.`;
      fileInfo.hidden = false;
      clearFile.hidden = false;
    } else {
      fileInput.value = "";
      fileInfo.textContent = "";
      fileInfo.hidden = true;
      clearFile.hidden = true;
    }
  };
  fileInput.addEventListener("change", () => setFile(fileInput.files?.[0] ?? null));
  clearFile.addEventListener("click", () => {
    setFile(null);
    fileInput.focus();
  });
  drop.addEventListener("dragover", (ev) => {
    ev.preventDefault();
    drop.classList.add("is-over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("is-over"));
  drop.addEventListener("drop", (ev) => {
    ev.preventDefault();
    drop.classList.remove("is-over");
    const files = ev.dataTransfer?.files;
    if (!files?.length) return;
    try {
      fileInput.files = files; // keeps the input showing the dropped file
    } catch {
      // older browsers: the dropped file is still used
    }
    setFile(files[0] ?? null);
  });

  const setBusy = (what: string) => {
    busy.textContent = what;
    compressBtn.disabled = what !== "";
    decompressBtn.disabled = what !== "";
    downloadBtn.disabled = what !== "";
  };

  async function readInput(): Promise<{ bytes: Bytes; name: string }> {
    if (file) return { bytes: new Uint8Array(await file.arrayBuffer()), name: file.name };
    return { bytes: new TextEncoder().encode(text.value), name: "pasted-text.txt" };
  }

  function drawChart(a: CompressAnswer) {
    type Row = { label: string; method: string; bytes: number; cls: string };
    const own: Row = {
      label: a.engine === "omni" ? `omni (${a.path})` : `classic (${a.method})`,
      method: a.engine === "omni" ? "omni" : "classic",
      bytes: a.compressed_bytes,
      cls: "",
    };
    const rows: Row[] = [{ label: "Input", method: "input", bytes: a.original_bytes, cls: "alt" }, own];
    if (a.sizes) {
      rows.push({ label: "gzip-9", method: "gzip-9", bytes: a.sizes["gzip-9"], cls: "peer" });
      rows.push({ label: "brotli-11", method: "brotli-11", bytes: a.sizes["brotli-11"], cls: "peer" });
    }
    const max = Math.max(1, ...rows.map((r) => r.bytes));
    const smallest = Math.min(...rows.slice(1).map((r) => r.bytes));
    chart.replaceChildren();
    for (const r of rows) {
      const label = el("div", r.label, "demo-bar-label");
      if (r.method !== "input" && r.bytes === smallest && rows.length > 2) {
        label.append(" ", el("span", "smallest", "badge badge-ok"));
      }
      const bar = el("div", undefined, `bar${r.cls ? ` ${r.cls}` : ""}`);
      bar.setAttribute("aria-hidden", "true");
      bar.dataset.method = r.method;
      bar.dataset.bytes = String(r.bytes);
      const fill = el("span");
      // CSSOM from a script: allowed by the CSP (no style attribute in the markup)
      fill.style.width = `${Math.max(0.5, (r.bytes / max) * 100)}%`;
      bar.append(fill);
      const value = el(
        "div",
        r.method === "input" ? bytesText(r.bytes) : `${bytesText(r.bytes)} · ${pct(r.bytes, a.original_bytes)}`,
        "value",
      );
      value.dataset.method = r.method;
      chart.append(label, bar, value);
    }
    if (a.sizes) {
      chartNote.textContent =
        a.engine === "classic"
          ? `Classic returned ${a.method}, the smaller of the two standard streams. Percentages are of the input.`
          : "gzip-9 and brotli-11 were run on the same bytes by the server (measured, not estimated). Percentages are of the input.";
    } else {
      chartNote.textContent = `gzip-9 and brotli-11 are measured for inputs up to ${bytesText(settings.peers_limit_bytes)}; this input is ${bytesText(a.original_bytes)}, so only omni is shown.`;
    }
  }

  function showResult(a: CompressAnswer) {
    const rows: [string, string, string?][] = [
      ["Engine", a.engine === "omni" ? "omni" : `classic (${a.method})`],
      ["Path", a.path, "mono"],
    ];
    if (a.chamber) rows.push(["Chamber", a.chamber, "mono"]);
    rows.push(["Data class", a.data_class]);
    if (a.level) rows.push(["Level", a.level]);
    rows.push(
      ["Size", `${bytesText(a.original_bytes)} → ${bytesText(a.compressed_bytes)}`],
      ["Ratio", `${a.ratio.toFixed(2)}× (input ÷ output)`],
      ["Checked", "the server decoded the container back byte for byte before answering"],
    );
    fillKv(route, rows);
    fillKv(
      counsel,
      a.counsel
        ? COUNSEL_LABELS.map(([k, label]) => [label, a.counsel?.[k] ?? ""] as [string, string])
        : [["Counsel", "none in this answer"]],
    );
    drawChart(a);
    resultProblem.hidden = true;
    verdict.hidden = true;
    verdict.replaceChildren();
    result.hidden = false;
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    problem.hidden = true;
    // a new attempt replaces the last result, whether it succeeds or not
    result.hidden = true;
    done = null;
    const { bytes, name } = await readInput();
    if (bytes.length === 0) {
      say(problem, "Nothing to compress: paste some text or choose a file that is not empty.", "error");
      text.focus();
      return;
    }
    if (base64Length(bytes.length) + JSON_OVERHEAD > settings.body_limit_bytes) {
      say(
        problem,
        `This input is ${bytesText(bytes.length)}; a request to the demo carries at most ${bytesText(settings.body_limit_bytes)} of base64, about ${bytesText(Math.floor(((settings.body_limit_bytes - JSON_OVERHEAD) * 3) / 4))} of input. Use the labphi CLI (no limit) or a suite job on /jobs.`,
        "error",
      );
      return;
    }
    const kind = engineKind();
    const body =
      kind === "omni"
        ? {
            op: "compress",
            engine: kind,
            level: level(),
            peers: bytes.length <= settings.peers_limit_bytes,
            data: toBase64(bytes),
            encoding: "base64",
          }
        : { op: "compress", engine: kind, data: toBase64(bytes), encoding: "base64" };
    setBusy(`Compressing ${bytesText(bytes.length)}…`);
    try {
      const answer = await api<CompressAnswer>(settings.endpoint, { method: "POST", body: JSON.stringify(body) });
      done = { input: bytes, name, engine: kind, answer, container: fromBase64(answer.data) };
      showResult(answer);
      $("#result-title").focus();
    } catch (err) {
      say(problem, problemText(err), "error");
    } finally {
      setBusy("");
    }
  });

  downloadBtn.addEventListener("click", () => {
    if (!done) return;
    download(done.container, fileNameFor(done.name, done.answer));
  });

  decompressBtn.addEventListener("click", async () => {
    if (!done) return;
    const current = done;
    resultProblem.hidden = true;
    verdict.hidden = true;
    setBusy("Decompressing…");
    try {
      const answer = await api<DecompressAnswer>(settings.endpoint, {
        method: "POST",
        body: JSON.stringify({
          op: "decompress",
          engine: current.engine,
          data: toBase64(current.container),
          encoding: "base64",
          output_encoding: "base64",
        }),
      });
      const output = fromBase64(answer.data);
      const [inHash, outHash] = await Promise.all([sha256Hex(current.input), sha256Hex(output)]);
      const diff = firstDifference(current.input, output);
      const matched = diff === -1 && inHash === outHash;
      verdict.replaceChildren();
      verdict.className = `notice ${matched ? "notice-ok" : "notice-error"}`;
      const head = el("p");
      head.append(
        el("strong", matched ? "Round trip matched." : "Round trip did NOT match."),
        matched
          ? ` The ${bytesText(current.container.length)} container decompressed to ${bytesText(output.length)}, identical to your input byte for byte.`
          : ` The container decompressed to ${bytesText(output.length)}; your input has ${bytesText(current.input.length)}; first difference at byte ${count(diff)}.`,
      );
      const dl = el("dl", undefined, "kv small");
      fillKv(dl, [
        ["Input SHA-256", inHash, "mono"],
        ["Output SHA-256", outHash, "mono"],
      ]);
      verdict.append(head, dl);
      verdict.hidden = false;
      verdict.dataset.verdict = matched ? "match" : "mismatch";
    } catch (err) {
      say(resultProblem, problemText(err), "error");
    } finally {
      setBusy("");
    }
  });
});

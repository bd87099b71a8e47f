/**
 * "Decompress a container" on /web: a chosen container (omni .lpz, or a classic .gz/.br stream)
 * goes to POST /api/web-codec op decompress; the restored size and SHA-256 are shown and the
 * bytes offered for download. Problems (a damaged container, limits) are shown inline.
 */
import { type Bytes, bytesText, fromBase64, toBase64 } from "./_demo-bytes.js";
import { el, fillKv } from "./_demo-dom.js";
import { $, api, download, problemText, say, sha256Hex } from "./_lib.js";

interface DecompressAnswer {
  method: string;
  original_bytes: number;
  compressed_bytes: number;
  data: string;
}

/** "data.json.lpz" → "data.json"; other names get ".out" */
export function restoredName(name: string): string {
  const m = name.match(/^(.+)\.(lpz|gz|br)$/i);
  return m?.[1] ?? `${name}.out`;
}

export function enhanceUndo(endpoint: string): void {
  const form = $<HTMLFormElement>("#undo");
  const fileInput = $<HTMLInputElement>("#undo-file");
  const button = $<HTMLButtonElement>("#undo-decompress");
  const save = $<HTMLButtonElement>("#undo-download");
  const problem = $("#undo-problem");
  const result = $("#undo-result");
  let restored: { bytes: Bytes; name: string } | null = null;
  button.disabled = false;

  const kind = () => form.querySelector<HTMLInputElement>('input[name="undo-engine"]:checked')?.value ?? "omni";

  fileInput.addEventListener("change", () => {
    const f = fileInput.files?.[0];
    if (!f) return;
    // a brotli stream has no signature: its extension says it is a classic one
    const classic = /\.(br|gz)$/i.test(f.name);
    const radio = form.querySelector<HTMLInputElement>(
      `input[name="undo-engine"][value="${classic ? "classic" : "omni"}"]`,
    );
    if (radio) radio.checked = true;
  });

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    problem.hidden = true;
    result.hidden = true;
    save.hidden = true;
    restored = null;
    const f = fileInput.files?.[0];
    if (!f || f.size === 0) {
      say(problem, "Choose a container file first (it cannot be empty).", "error");
      fileInput.focus();
      return;
    }
    button.disabled = true;
    try {
      const container = new Uint8Array(await f.arrayBuffer());
      const a = await api<DecompressAnswer>(endpoint, {
        method: "POST",
        body: JSON.stringify({
          op: "decompress",
          engine: kind(),
          data: toBase64(container),
          encoding: "base64",
          output_encoding: "base64",
        }),
      });
      const bytes = fromBase64(a.data);
      restored = { bytes, name: restoredName(f.name) };
      result.replaceChildren();
      const head = el("p");
      head.append(
        el("strong", "Decompressed."),
        ` ${bytesText(container.length)} of ${a.method === "omni" ? "omni container" : `${a.method} stream`} restored ${bytesText(bytes.length)}.`,
      );
      const dl = el("dl", undefined, "kv small");
      fillKv(dl, [["SHA-256", await sha256Hex(bytes), "mono"]]);
      result.append(head, dl);
      result.hidden = false;
      save.hidden = false;
    } catch (err) {
      say(problem, problemText(err), "error");
    } finally {
      button.disabled = false;
    }
  });

  save.addEventListener("click", () => {
    if (restored) download(restored.bytes, restored.name);
  });
}

/**
 * The suite jobs page (/jobs) and the card checkout's return page (/jobs/paid): quote, start free
 * or pay by card, upload with tus (progress, pause, resume), watch the job, download the result.
 * Problems (413 over the quote, an expired quote, a bad token) are shown in the API's words.
 */
import {
  bearer,
  cancelJob,
  cardCheckout,
  deleteJob,
  jobView as fetchJob,
  type HeldJob,
  heldJob,
  holdJob,
  type JobView,
  output,
  problemOf,
  type Quote,
  type QuoteRequest,
  quote,
  startFree,
} from "./_jobs-api";
import { actionsFor, type KeptJob, lookupOutcome, readKept, withJob, withoutJob, writeKept } from "./_jobs-list";
import { type Running, startUpload } from "./_jobs-upload";
import { $, download, formatBytes, problemText, ready, say } from "./_lib";

const GB_NOTE = "GB = 10^9 bytes";
const TERMINAL = new Set(["done", "failed", "cancelled"]);

function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} s`;
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  return `${m} min${seconds % 60 ? ` ${seconds % 60} s` : ""}`;
}

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
}

/** The webhook secret, shown once (the service returns it only with the job): to copy into the receiver. */
function showWebhookSecret(into: HTMLElement, secret: string): void {
  const box = el("div", undefined, "notice notice-warn");
  box.id = "webhook-secret";
  box.setAttribute("role", "status");
  box.append(
    el("p", "Webhook secret (shown once: copy it into your receiver to verify the signatures):"),
    el("code", secret, "mono"),
  );
  into.append(box);
}

function hide(node: HTMLElement): void {
  node.hidden = true;
  node.textContent = "";
}

/**
 * The output a compressed stream declares (what `labphi compress` writes: records of a uvarint
 * length and a framed container whose header holds the original length), read from the record
 * headers only (a few bytes per record); null when the file is not such a stream. For
 * `op: decompress` the quote is this decompressed size (issue #21): the service refuses a stream
 * that declares more than its quote, before decoding anything.
 */
async function declaredOutput(file: Blob): Promise<number | null> {
  let at = 0;
  let total = 0;
  while (at < file.size) {
    const head = new Uint8Array(await file.slice(at, at + 32).arrayBuffer());
    let i = 0;
    let len = 0;
    for (let shift = 0; ; shift += 7) {
      if (i >= head.length || shift > 49) return null;
      const b = head[i++] as number;
      len += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) break;
    }
    if (len < 11 || head[i] !== 0xcf || head[i + 1] !== 0x86 || at + i + len > file.size) return null;
    let size = 0;
    let j = i + 5;
    for (let shift = 0; ; shift += 7) {
      if (j >= head.length || shift > 49) return null;
      const b = head[j++] as number;
      size += (b & 0x7f) * 2 ** shift;
      if (!(b & 0x80)) break;
    }
    total += size;
    at += i + len;
  }
  return total;
}

// ---------------------------------------------------------------- the jobs this browser keeps

/** Keeps a job (and its token) in this browser's "Your jobs" list (localStorage). */
function keep(job: HeldJob): void {
  writeKept(localStorage, withJob(readKept(localStorage), job, Date.now()));
}

/** Drops a job from the list, and from this tab's panel if it holds it (else the next visit would keep it again). */
function forget(jobId: string): void {
  writeKept(localStorage, withoutJob(readKept(localStorage), jobId));
  if (heldJob()?.job_id === jobId) holdJob(null);
}

/** A job's status by its kept token: its view, or the HTTP status that refused it. */
async function lookup(job: KeptJob): Promise<{ view: JobView } | { status: number; text: string }> {
  const res = await fetch(`/api/jobs/${encodeURIComponent(job.job_id)}`, {
    headers: { ...bearer(job), Accept: "application/json" },
  });
  const text = await res.text();
  if (res.ok) return { view: JSON.parse(text) as JobView };
  return { status: res.status, text };
}

/**
 * "Your jobs": one row per kept job (state, bytes, ratio, created) with what its state allows:
 * open, download, cancel, delete; forget for a job that is gone (410) or refuses its token.
 */
function myJobs(opts: { open(job: HeldJob): void; changed(jobId: string): void }): { refresh(): Promise<void> } {
  const list = $<HTMLUListElement>("#my-jobs-list");
  const empty = $("#my-jobs-empty");
  const alert = $("#my-jobs-alert");
  let generation = 0;

  const button = (label: string, action: string, jobId: string, cls = "btn-secondary") => {
    const b = el("button", label, cls);
    b.type = "button";
    b.dataset.action = action;
    b.setAttribute("aria-label", `${label} job ${jobId}`);
    return b;
  };

  function row(job: KeptJob, found: Awaited<ReturnType<typeof lookup>>): HTMLLIElement {
    const li = el("li", undefined, "my-job");
    li.dataset.jobId = job.job_id;
    const head = el("p");
    head.append(el("span", job.job_id, "mono"), " ");
    const state = el("span", undefined, "badge");
    state.dataset.role = "state";
    head.append(state);
    li.append(head);
    const actions = el("div", undefined, "cluster");
    if ("view" in found) {
      const v = found.view;
      li.dataset.state = v.state;
      state.textContent = v.state.replace("_", " ");
      const facts = [
        `${v.op}, ${formatBytes(v.bytes_in)} in`,
        `${formatBytes(v.bytes_out)} out`,
        `ratio ${v.ratio === null ? "—" : v.ratio.toFixed(3)}`,
        `created ${new Date(v.created_at).toLocaleString()}`,
      ];
      li.append(el("p", facts.join(" · "), "small"));
      if (v.error) li.append(el("p", `${v.error.code}${v.error.detail ? `: ${v.error.detail}` : ""}`, "small muted"));
      const can = actionsFor(v.state);
      const open = button("Open", "open", job.job_id);
      open.addEventListener("click", () => opts.open(job));
      actions.append(open);
      if (can.download) {
        const d = button("Download", "download", job.job_id, "btn-primary");
        d.addEventListener("click", () =>
          act(d, async () => {
            const blob = await output(job);
            download(blob, `${job.job_id}.${v.op === "decompress" ? "out" : "lpz"}`);
          }),
        );
        actions.append(d);
      }
      if (can.cancel) {
        const c = button("Cancel", "cancel", job.job_id);
        c.addEventListener("click", () =>
          act(c, async () => {
            await cancelJob(job);
            opts.changed(job.job_id);
          }),
        );
        actions.append(c);
      }
      if (can.delete) {
        const d = button("Delete", "delete", job.job_id);
        d.addEventListener("click", () => {
          if (!window.confirm(`Delete job ${job.job_id}? Its input and output are removed for good.`)) return;
          void act(d, async () => {
            await deleteJob(job);
            forget(job.job_id);
            opts.changed(job.job_id);
          });
        });
        actions.append(d);
      }
    } else {
      const outcome = lookupOutcome(found.status);
      const problem = problemOf(found.status, found.text);
      li.dataset.state = outcome;
      state.textContent = outcome === "gone" ? "gone" : outcome === "refused" ? "token refused" : "unavailable";
      li.append(el("p", problemText(problem), "small muted"));
    }
    const f = button("Forget", "forget", job.job_id);
    f.title = "Remove it from this browser's list (the job itself stays as it is)";
    f.addEventListener("click", () => {
      forget(job.job_id);
      opts.changed(job.job_id);
      void refresh();
    });
    actions.append(f);
    li.append(actions);
    return li;
  }

  async function act(b: HTMLButtonElement, fn: () => Promise<void>): Promise<void> {
    b.disabled = true;
    alert.hidden = true;
    try {
      await fn();
    } catch (err) {
      say(alert, problemText(err), "error");
    } finally {
      b.disabled = false;
      await refresh();
    }
  }

  async function refresh(): Promise<void> {
    const mine = ++generation;
    const kept = readKept(localStorage);
    const rows = await Promise.all(
      kept.map(async (job) => {
        try {
          return row(job, await lookup(job));
        } catch (err) {
          return row(job, { status: 0, text: JSON.stringify({ detail: problemText(err) }) });
        }
      }),
    );
    if (mine !== generation) return; // a newer refresh is under way
    list.replaceChildren(...rows);
    list.hidden = rows.length === 0;
    empty.hidden = rows.length > 0;
  }

  return { refresh };
}

// ---------------------------------------------------------------- /jobs/paid

function paidPage(box: HTMLElement): void {
  const jobId = box.dataset.jobId;
  const token = $<HTMLInputElement>("#paid-job-token").value;
  if (jobId && token) {
    holdJob({ job_id: jobId, job_token: token });
    keep({ job_id: jobId, job_token: token });
  }
  $<HTMLInputElement>("#paid-job-token").addEventListener("focus", (ev) => (ev.target as HTMLInputElement).select());
}

// ---------------------------------------------------------------- /jobs

function jobsPage(): void {
  const form = $<HTMLFormElement>("#quote-form");
  const quoteFile = $<HTMLInputElement>("#q-file");
  const bytesInput = $<HTMLInputElement>("#q-bytes");
  const bytesHuman = $<HTMLOutputElement>("#q-bytes-human");
  const quoteAlert = $("#quote-alert");
  const result = $("#quote-result");
  const cardOn = result.dataset.card === "on";
  const x402On = result.dataset.x402 === "on";
  const jobAlert = $("#job-alert");
  const jobStatus = $("#job-status");
  const uploadBox = $("#upload-box");
  const uploadFile = $<HTMLInputElement>("#u-file");
  const uploadStart = $<HTMLButtonElement>("#u-start");
  const uploadPause = $<HTMLButtonElement>("#u-pause");
  const uploadBar = $<HTMLProgressElement>("#u-progress");
  const uploadText = $("#u-text");
  const downloadBox = $("#download-box");
  let chosen: File | null = null;
  let current: HeldJob | null = null;
  let running: Running | null = null;
  let timer: number | undefined;
  let lastState = "";
  let lastOp = "";
  const listing = myJobs({
    open(job) {
      openJob(job, false);
      $("#job-panel").scrollIntoView({ block: "start" });
    },
    changed(jobId) {
      if (current?.job_id !== jobId) return;
      // the panel shows that job: forgotten or deleted from the list, the panel lets it go too;
      // otherwise it shows the new state at once
      if (heldJob()?.job_id === jobId) void poll();
      else closePanel();
    },
  });

  const showBytes = () => {
    const n = Number(bytesInput.value);
    bytesHuman.textContent = Number.isSafeInteger(n) && n > 0 ? `= ${formatBytes(n)}` : "";
  };
  bytesInput.addEventListener("input", showBytes);
  /** the chosen file's size, or for decompress the size its stream records declare */
  const sizeFromFile = async () => {
    const file = chosen;
    if (!file) return;
    const op = String(new FormData(form).get("op"));
    const declared = op === "decompress" ? await declaredOutput(file).catch(() => null) : null;
    if (file !== chosen) return; // another file was picked meanwhile
    bytesInput.value = String(declared ?? file.size);
    showBytes();
  };
  quoteFile.addEventListener("change", () => {
    chosen = quoteFile.files?.[0] ?? null;
    void sizeFromFile();
  });
  $<HTMLSelectElement>("#q-op").addEventListener("change", () => void sizeFromFile());

  const request = (): QuoteRequest => {
    const data = new FormData(form);
    const email = String(data.get("email") ?? "").trim();
    const callback = String(data.get("callback_url") ?? "").trim();
    return {
      product: String(data.get("product")),
      dataClass: String(data.get("dataClass")),
      op: String(data.get("op")),
      level: String(data.get("level")),
      bytes: Number(bytesInput.value),
      ...(email ? { email } : {}),
      ...(callback ? { callback_url: callback } : {}),
    };
  };

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    hide(quoteAlert);
    result.textContent = "";
    const req = request();
    if (!Number.isSafeInteger(req.bytes) || req.bytes < 1) {
      say(quoteAlert, "Enter the size in bytes (a whole number, at least 1), or pick your file.", "error");
      bytesInput.focus();
      return;
    }
    try {
      showQuote(await quote(req), req);
    } catch (err) {
      say(quoteAlert, problemText(err, form), "error");
    }
  });

  function showQuote(q: Quote, req: QuoteRequest): void {
    const card = el("div", undefined, "stack");
    card.id = "quote-view";
    card.append(el("h3", `Quote ${q.quote_id}`, "mono small"));
    const total = el("p", q.free ? "Free" : `$${q.amount_usd}`, "price");
    total.id = "quote-total";
    if (!q.free) total.append(" ", el("small", `(card: $${(q.amount_cents / 100).toFixed(2)})`));
    card.append(total);
    card.append(
      el(
        "p",
        `${formatBytes(q.bytes)} (${q.bytes} bytes; ${GB_NOTE}): ${formatBytes(q.free_bytes)} free, ${formatBytes(q.billable_bytes)} billable. Valid until ${new Date(q.expires_at).toLocaleString()}.`,
        "small",
      ),
    );
    // the breakdown
    const wrap = el("div", undefined, "table-wrap");
    wrap.setAttribute("role", "region");
    wrap.setAttribute("aria-label", "Price breakdown");
    wrap.tabIndex = 0;
    const table = el("table");
    table.setAttribute("aria-label", `Price breakdown (${GB_NOTE})`);
    const head = el("tr");
    for (const h of ["Tier", "Bytes", `Price (${GB_NOTE})`, "Amount"]) {
      const th = el("th", h);
      th.scope = "col";
      head.append(th);
    }
    table.append(el("thead"), el("tbody"));
    table.tHead?.append(head);
    for (const t of q.tiers) {
      const row = el("tr");
      const th = el("th", t.tier);
      th.scope = "row";
      row.append(
        th,
        el("td", t.tier === "minimum" ? "—" : formatBytes(t.bytes), "num"),
        el("td", t.usd_per_gb === null ? "—" : `$${t.usd_per_gb} / GB`, "num"),
        el("td", `$${t.amount_usd}`, "num"),
      );
      table.tBodies[0]?.append(row);
    }
    wrap.append(table);
    card.append(wrap);
    // time by level
    const dl = el("dl", undefined, "kv");
    for (const [level, seconds] of Object.entries(q.estimate.by_level)) {
      dl.append(
        el("dt", level === q.level ? `${level} (chosen)` : level),
        el("dd", `about ${duration(seconds)} of codec time`),
      );
    }
    card.append(el("h4", "What each level costs in time"), dl, el("p", q.estimate.level_note, "small muted"));
    // the next step
    const actions = el("div", undefined, "card-actions");
    if (q.free) {
      const start = el("button", "Start the free job", "btn-primary");
      start.type = "button";
      start.id = "start-free";
      start.addEventListener("click", async () => {
        start.disabled = true;
        hide(quoteAlert);
        try {
          const job = await startFree(req, q.quote_id);
          start.textContent = "Started";
          if (job.webhook_secret) showWebhookSecret(actions, job.webhook_secret);
          openJob({ job_id: job.job_id, job_token: job.job_token }, true);
          $("#job-panel").scrollIntoView({ block: "start" });
        } catch (err) {
          say(quoteAlert, problemText(err, form), "error");
          start.disabled = false;
        }
      });
      actions.append(start);
    } else if (cardOn) {
      const pay = el("button", `Pay $${(q.amount_cents / 100).toFixed(2)} by card`, "btn-primary");
      pay.type = "button";
      pay.id = "pay-card";
      pay.addEventListener("click", async () => {
        pay.disabled = true;
        hide(quoteAlert);
        try {
          const session = await cardCheckout(q.quote_id, req.email);
          location.assign(session.url);
        } catch (err) {
          say(quoteAlert, problemText(err, form), "error");
          pay.disabled = false;
        }
      });
      actions.append(pay);
      if (!req.email) actions.append(el("p", "Enter an e-mail address above for the receipt.", "small"));
    } else {
      actions.append(
        el(
          "p",
          x402On
            ? "Paying by card is not set up on this server. Agents pay with x402: POST /api/x402-suite with the same request."
            : "This job is above the free allowance, and paid jobs cannot be bought on this server yet: choose a smaller job, or see the notice at the top of the page.",
        ),
      );
    }
    card.append(actions);
    result.replaceChildren(card);
    result.focus();
  }

  // --- the job

  function openJob(job: HeldJob, fresh: boolean): void {
    current = job;
    holdJob(job);
    // a job started here is kept at once; one opened by id and token once its token works (poll)
    if (fresh) {
      keep(job);
      void listing.refresh();
    }
    lastState = "";
    hide(jobAlert);
    $("#job-empty").hidden = true;
    $("#job-facts").hidden = false;
    $("#job-progress-box").hidden = false;
    $("#job-forget").hidden = false;
    $("#job-id").textContent = job.job_id;
    const tokenBox = $("#job-token-box");
    const tokenOnce = $<HTMLInputElement>("#job-token-once");
    if (fresh) {
      tokenOnce.value = job.job_token;
      tokenBox.hidden = false;
    } else {
      tokenOnce.value = "";
      tokenBox.hidden = true;
    }
    void poll();
  }

  /** The panel without a job (as a fresh page shows it). */
  function closePanel(): void {
    void running?.pause();
    running = null;
    window.clearTimeout(timer);
    current = null;
    lastState = "";
    $("#job-empty").hidden = false;
    for (const id of [
      "#job-facts",
      "#job-progress-box",
      "#job-forget",
      "#job-token-box",
      "#upload-box",
      "#download-box",
    ]) {
      $(id).hidden = true;
    }
    hide(jobAlert);
    hide(jobStatus);
  }

  $("#job-token-done").addEventListener("click", () => {
    $<HTMLInputElement>("#job-token-once").value = "";
    $("#job-token-box").hidden = true;
  });
  $<HTMLInputElement>("#job-token-once").addEventListener("focus", (ev) => (ev.target as HTMLInputElement).select());

  function render(v: JobView): void {
    $("#job-state").textContent = v.state.replace("_", " ");
    $("#job-quoted").textContent = `${formatBytes(v.bytes_quoted)} (${v.bytes_quoted} bytes)`;
    $("#job-in").textContent = `${formatBytes(v.bytes_in)} (${v.bytes_in} bytes)`;
    $("#job-out").textContent = `${formatBytes(v.bytes_out)} (${v.bytes_out} bytes)`;
    $("#job-ratio").textContent = v.ratio === null ? "—" : v.ratio.toFixed(3);
    $("#job-attempts").textContent = String(v.attempts);
    $<HTMLProgressElement>("#job-progress").value = v.progress;
    uploadBox.hidden = !(v.state === "awaiting_input" || v.state === "uploading");
    downloadBox.hidden = v.state !== "done";
    if (v.state !== lastState) {
      if (lastState !== "") void listing.refresh();
      lastState = v.state;
      if (v.state === "done") say(jobStatus, `Done: ${v.bytes_in} bytes in, ${v.bytes_out} bytes out.`, "ok");
      else if (v.state === "failed")
        say(jobAlert, `The job failed: ${v.error?.detail ?? ""} (${v.error?.code ?? "failed"})`, "error");
      else if (v.state === "cancelled")
        say(jobStatus, `The job was cancelled (${v.error?.code ?? "cancelled"}).`, "warn");
      else if (v.state === "queued" || v.state === "running")
        say(jobStatus, `The job is ${v.state}: ${v.segments_done} of ${v.segments_total} segments done.`);
      else hide(jobStatus);
    }
  }

  async function poll(): Promise<void> {
    window.clearTimeout(timer);
    const job = current;
    if (!job) return;
    try {
      const v = await jobView(job);
      if (job !== current) return;
      if (!readKept(localStorage).some((k) => k.job_id === job.job_id)) {
        keep(job);
        void listing.refresh();
      }
      render(v);
      // quick while the job moves or an upload runs; slow while it waits for its input
      const waiting = v.state === "awaiting_input" && running === null;
      if (!TERMINAL.has(v.state)) timer = window.setTimeout(() => void poll(), waiting ? 5000 : 1000);
    } catch (err) {
      if (job !== current) return;
      say(jobAlert, problemText(err), "error");
    }
  }

  // --- upload

  uploadStart.addEventListener("click", async () => {
    const job = current;
    const file = uploadFile.files?.[0] ?? chosen;
    if (!job) return;
    hide(jobAlert);
    if (!file) {
      say(jobAlert, "Choose the file to upload.", "error");
      uploadFile.focus();
      return;
    }
    uploadStart.disabled = true;
    uploadPause.disabled = false;
    uploadText.textContent = "Asking the server what it already has…";
    try {
      running = await startUpload(job, file, {
        onProgress(sent, total) {
          uploadBar.value = total > 0 ? (sent / total) * 100 : 0;
          uploadText.textContent = `${formatBytes(sent)} of ${formatBytes(total)} sent (${Math.floor(uploadBar.value)}%)`;
        },
        onSuccess() {
          running = null;
          uploadBar.value = 100;
          uploadText.textContent = `Upload complete: ${formatBytes(file.size)} (${file.size} bytes).`;
          uploadPause.disabled = true;
          void poll();
        },
        onError(err) {
          running = null;
          say(jobAlert, problemText(err), "error");
          uploadStart.disabled = false;
          uploadStart.textContent = "Retry the upload";
          uploadPause.disabled = true;
        },
      });
      uploadStart.dataset.from = String(running.from);
      if (running.from > 0) {
        uploadText.textContent = `Resuming at ${formatBytes(running.from)} (${running.from} bytes already on the server).`;
      }
      void poll();
    } catch (err) {
      say(jobAlert, problemText(err), "error");
      uploadStart.disabled = false;
      uploadPause.disabled = true;
    }
  });

  uploadPause.addEventListener("click", async () => {
    const r = running;
    running = null;
    uploadPause.disabled = true;
    await r?.pause();
    uploadStart.disabled = false;
    uploadStart.textContent = "Resume the upload";
    uploadText.textContent = `Paused. Resume continues from what the server has.`;
  });

  // --- download

  $("#d-start").addEventListener("click", async () => {
    const job = current;
    if (!job) return;
    hide(jobAlert);
    const button = $<HTMLButtonElement>("#d-start");
    button.disabled = true;
    say(jobStatus, "Downloading…");
    try {
      const blob = await output(job);
      download(blob, `${job.job_id}.${lastOp === "decompress" ? "out" : "lpz"}`);
      say(jobStatus, `Downloaded ${formatBytes(blob.size)} (${blob.size} bytes).`, "ok");
    } catch (err) {
      say(jobAlert, problemText(err), "error");
    } finally {
      button.disabled = false;
    }
  });
  // --- open, forget

  $<HTMLFormElement>("#open-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const id = $<HTMLInputElement>("#o-id").value.trim();
    const token = $<HTMLInputElement>("#o-token");
    if (!/^job_[A-Za-z0-9_-]{1,64}$/.test(id) || !token.value.trim()) {
      say(jobAlert, "Enter the job id (job_…) and its token.", "error");
      return;
    }
    openJob({ job_id: id, job_token: token.value.trim() }, false);
    token.value = "";
    $("#job-panel").scrollIntoView({ block: "start" });
  });

  $("#job-forget").addEventListener("click", () => {
    void running?.pause();
    running = null;
    window.clearTimeout(timer);
    current = null;
    holdJob(null);
    location.reload();
  });

  // the job this tab was working on (after a reload, or back from the card checkout)
  const held = heldJob();
  if (held) openJob(held, false);
  void listing.refresh();
  showBytes();

  async function jobView(job: HeldJob): Promise<JobView> {
    const v = await fetchJob(job);
    lastOp = v.op;
    return v;
  }
}

ready(() => {
  const paid = document.querySelector<HTMLElement>("#paid-job");
  if (paid) paidPage(paid);
  if (document.querySelector("#quote-form")) jobsPage();
});

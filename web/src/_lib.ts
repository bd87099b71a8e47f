/**
 * Shared by the page scripts (bundled into each; files starting with "_" are not entries).
 * Talks to the same JSON API as agents and shows problems (RFC 9457) in the page's words.
 */
import { validationSentence } from "./_field-words";

export interface ProblemBody {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  [key: string]: unknown;
}

/** An API answer that was not 2xx, carrying the problem's words. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: ProblemBody,
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
  }
  get code(): string {
    return this.problem.code ?? `http_${this.status}`;
  }
}

/** fetch → JSON; a non-2xx answer throws ApiError with the problem body. */
export async function api<T>(url: string, init: RequestInit = {}): Promise<T> {
  const headers = new Headers(init.headers);
  if (!headers.has("Accept")) headers.set("Accept", "application/json");
  if (init.body && typeof init.body === "string" && !headers.has("Content-Type")) {
    headers.set("Content-Type", "application/json");
  }
  const res = await fetch(url, { ...init, headers });
  const text = await res.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = { detail: text.slice(0, 300) };
  }
  if (!res.ok) throw new ApiError(res.status, (body ?? {}) as ProblemBody);
  return body as T;
}

/** querySelector that throws a clear error when the page lacks the element. */
export function $<E extends Element = HTMLElement>(selector: string, root: ParentNode = document): E {
  const el = root.querySelector<E>(selector);
  if (!el) throw new Error(`missing element ${selector}`);
  return el;
}

/** Shows a message in a `.notice` element (role="status" or "alert" set by the page). */
export function say(el: HTMLElement, text: string, kind: "ok" | "error" | "warn" | "info" = "info"): void {
  el.hidden = false;
  el.className = `notice${kind === "info" ? "" : ` notice-${kind}`}`;
  el.textContent = text;
}

/**
 * The problem's words for a failure of any kind. A form's validation problem is one plain
 * sentence naming the field ("Name: enter at least 1 character."), with the form's own label
 * texts when `form` is given; any other problem keeps its title, detail and code.
 */
export function problemText(err: unknown, form?: HTMLFormElement | null): string {
  if (err instanceof ApiError) {
    const p = err.problem;
    const sentence = validationSentence(p, form ? formLabels(form) : {});
    if (sentence) return sentence;
    return `${p.title ?? `Error ${err.status}`}: ${p.detail ?? ""}${p.code ? ` (${p.code})` : ""}`.trim();
  }
  return err instanceof Error ? err.message : String(err);
}

/** A form's fields by name → their label's own text ("E-mail (optional)" → "E-mail"). */
export function formLabels(form: HTMLFormElement): Record<string, string> {
  const out: Record<string, string> = {};
  for (const el of form.querySelectorAll<HTMLInputElement>("input[name], select[name], textarea[name]")) {
    const label = el.id ? form.querySelector(`label[for="${CSS.escape(el.id)}"]`) : null;
    const text = label?.firstChild?.textContent?.trim().replace(/\s*\([^)]*\)$/, "");
    if (text && el.name) out[el.name] = text;
  }
  return out;
}

/**
 * Marks the field a validation problem names (aria-invalid, focus) and clears earlier marks;
 * returns whether a field was found.
 */
export function markInvalid(form: HTMLFormElement, err: unknown): boolean {
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  if (!(err instanceof ApiError)) return false;
  const errors = Array.isArray(err.problem.errors) ? (err.problem.errors as { path?: string }[]) : [];
  const name = (errors[0]?.path ?? "").split("/").filter(Boolean)[0];
  const field = name ? (form.elements.namedItem(name) as HTMLElement | null) : null;
  if (!field || !("focus" in field)) return false;
  field.setAttribute("aria-invalid", "true");
  field.focus();
  return true;
}

/** 1234567 → "1.23 MB" (decimal units, as prices use). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n;
  let u = -1;
  do {
    v /= 1000;
    u++;
  } while (v >= 1000 && u < units.length - 1);
  return `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)} ${units[u]}`;
}

/** Lowercase hex SHA-256 of bytes (Web Crypto). */
export async function sha256Hex(bytes: BufferSource): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Offers bytes as a file download. */
export function download(bytes: BlobPart, name: string, type = "application/octet-stream"): void {
  const url = URL.createObjectURL(new Blob([bytes], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Runs fn once the DOM is ready (scripts are modules, so usually at once). */
export function ready(fn: () => void | Promise<void>): void {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => void fn());
  else void fn();
}

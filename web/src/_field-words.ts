/**
 * Form errors in plain words (issue #25 item 4): a `validation_failed` or `invalid_text` problem
 * names a field by its path (`body/name`) and a rule in zod's words ("Too small: expected string to
 * have >=1 characters"); a person reads "Name: enter at least 1 character." instead.
 *
 * Pure and without imports: bundled into the page scripts (web/src/_lib.ts) and imported by the
 * server's HTML problem page (src/web/problem-page.ts), so both say the same sentence.
 */

/** One entry of a problem's `errors` (src/http/errors.ts): where, which field, zod's message. */
export interface FieldIssue {
  in?: string;
  path?: string;
  message?: string;
}

/** What this module reads of a problem+json body. */
export interface ProblemLike {
  code?: string;
  detail?: string;
  errors?: unknown;
}

const WORDS: Record<string, string> = { url: "URL", id: "id", email: "e-mail", sku: "SKU", tx: "transaction" };

const capital = (s: string) => (s ? s[0]?.toUpperCase() + s.slice(1) : s);

/**
 * The field a path names, in words: "/name" → "Name", "/callback_url" → "Callback URL",
 * "/agent_id" → "Agent id", "/items/0" → "Items (item 1)". `labels` (a form's own label texts, by
 * field name) win.
 */
export function fieldName(path: string | undefined, labels: Record<string, string> = {}): string {
  const parts = (path ?? "").split("/").filter(Boolean);
  let last = parts[parts.length - 1] ?? "";
  let item = "";
  if (/^\d+$/.test(last) && parts.length > 1) {
    item = ` (item ${Number(last) + 1})`;
    last = parts[parts.length - 2] ?? "";
  }
  if (!last) return "The request";
  const label = labels[last];
  if (label) return `${label}${item}`;
  const words = last
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[_\-\s]+/)
    .filter(Boolean)
    .map((w) => WORDS[w.toLowerCase()] ?? w.toLowerCase());
  return `${capital(words.join(" "))}${item}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

const TYPE_WORDS: Record<string, string> = {
  number: "enter a number",
  int: "enter a whole number",
  string: "enter text",
  boolean: "choose yes or no",
  array: "give a list",
  object: "give the whole group of fields",
};

/** Reads a "Too small/Too big" bound: the number, made inclusive (">5" → 6, "<5" → 4). */
const bound = (op: string | undefined, n: string | undefined, up: boolean) =>
  Number(n) + (op === ">" || op === "<" ? (up ? 1 : -1) : 0);

/** zod's messages (its English locale) and what each asks the person to do. */
const RULES: [RegExp, (r: RegExpExecArray) => string][] = [
  // lengths of text and lists
  [
    /^Too small: expected string to have (>=?)(\d+) characters?$/,
    (r) => `enter at least ${plural(bound(r[1], r[2], true), "character")}`,
  ],
  [
    /^Too big: expected string to have (<=?)(\d+) characters?$/,
    (r) => `use at most ${plural(bound(r[1], r[2], false), "character")}`,
  ],
  [
    /^Too small: expected array to have (>=?)(\d+) items?$/,
    (r) => `give at least ${plural(bound(r[1], r[2], true), "item")}`,
  ],
  [
    /^Too big: expected array to have (<=?)(\d+) items?$/,
    (r) => `give at most ${plural(bound(r[1], r[2], false), "item")}`,
  ],
  // numbers
  [
    /^Too small: expected (?:number|int|bigint) to be (>=?)(-?[\d.]+)$/,
    (r) => (r[1] === ">" ? `enter a number greater than ${r[2]}` : `enter a number of at least ${r[2]}`),
  ],
  [
    /^Too big: expected (?:number|int|bigint) to be (<=?)(-?[\d.]+)$/,
    (r) => (r[1] === "<" ? `enter a number less than ${r[2]}` : `enter a number of at most ${r[2]}`),
  ],
  // missing or of the wrong kind
  [
    /^Invalid input: expected (\w+), received (\w+)$/,
    (r) => (r[2] === "undefined" ? "fill this in" : (TYPE_WORDS[r[1] ?? ""] ?? `enter a ${r[1]}`)),
  ],
  [
    /^Invalid option: expected one of (.+)$/,
    (r) => `choose one of ${(r[1] ?? "").replace(/"/g, "").split("|").join(", ")}`,
  ],
  [/^Invalid input: expected "?([^"]*)"?$/, (r) => `must be ${r[1]}`],
  // formats
  [/^Invalid email( address)?$/i, () => "enter an e-mail address such as name@example.com"],
  [/^Invalid URL$/i, () => "enter a full web address starting with https://"],
  [/^Invalid string: must match pattern /, () => "use only the characters the hint names"],
  [/^Invalid string: must start with "(.*)"$/, (r) => `start it with ${r[1]}`],
  [
    /^(text )?must not contain control characters/,
    () => "remove the control characters (such as a tab or a line break): plain text only",
  ],
  [/^Unrecognized keys?: (.+)$/, (r) => `remove the unknown ${r[1]}`],
  [/^Invalid number: must be a multiple of (.+)$/, (r) => `enter a multiple of ${r[1]}`],
  [/^Invalid (\w[\w ]*)$/, (r) => `enter a valid ${r[1]?.toLowerCase()}`],
];

/** zod's message for one rule, as what to do: "enter at least 1 character". */
export function ruleWords(message: string | undefined): string {
  const m = (message ?? "").trim().replace(/\.$/, "");
  for (const [re, say] of RULES) {
    const r = re.exec(m);
    if (r) return say(r);
  }
  return m ? m[0]?.toLowerCase() + m.slice(1) : "check this value";
}

/** "Name: enter at least 1 character." */
export function issueSentence(issue: FieldIssue, labels: Record<string, string> = {}): string {
  const field = fieldName(issue.path, labels);
  const words = ruleWords(issue.message);
  return field === "The request" ? `${capital(words)}.` : `${field}: ${words}.`;
}

const VALIDATION_CODES = new Set(["validation_failed", "invalid_text"]);
/** "Invalid body/name: Too small: …." as src/http/errors.ts writes a detail. */
const DETAIL = /^Invalid (body|querystring|params|headers|request)(\/[^:\s]*)?: (?:text )?(.*?)\.?$/;

/**
 * The plain sentence of a form's validation problem, naming the field (from `errors[0]`, else
 * parsed from the detail); undefined for any other problem (its own detail is already a sentence).
 */
export function validationSentence(p: ProblemLike, labels: Record<string, string> = {}): string | undefined {
  if (!p.code || !VALIDATION_CODES.has(p.code)) return undefined;
  const errors = Array.isArray(p.errors) ? (p.errors as FieldIssue[]) : [];
  const first = errors.find((x) => x && typeof x === "object" && typeof x.message === "string");
  if (first) {
    const message = p.code === "invalid_text" ? "must not contain control characters" : first.message;
    return issueSentence({ path: first.path, message }, labels);
  }
  const d = DETAIL.exec(p.detail ?? "");
  if (!d) return undefined;
  const message = p.code === "invalid_text" ? "must not contain control characters" : d[3];
  return issueSentence({ path: d[2] ?? "", message }, labels);
}

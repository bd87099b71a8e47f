import { z } from "zod";

/**
 * User text in route schemas. Every string a client sends that the service stores, searches
 * or shows (claims, e-mail addresses, operator notes and searches, identity names, reasons,
 * path and query identifiers) goes through one of these helpers, so that a control character
 * is refused at the edge with a 400 `invalid_text` naming the field, on both engines, instead of
 * reaching the database (PostgreSQL refuses NUL in text columns: that used to be a 500) or an
 * operator's terminal (ANSI escapes) or log.
 *
 * Refused: C0 controls U+0000–U+001F (NUL included), DEL U+007F and the C1 controls
 * U+0080–U+009F. `multiLineText` alone keeps tab, line feed and carriage return, for fields
 * that are legitimately several lines (a billing address typed in a textarea).
 *
 * The rule is a zod `regex` check, so it shows in `/openapi.yaml` as the field's `pattern`;
 * `src/http/errors.ts` recognises the pattern (`isTextIssue`) and answers `invalid_text`.
 * Payload strings the service never interprets as text (codec `data`) do not use these helpers.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const ONE_LINE = /^[^\u0000-\u001f\u007f-\u009f]*$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const MULTI_LINE = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]*$/;

export const ONE_LINE_MESSAGE = "must not contain control characters (U+0000-U+001F, U+007F-U+009F)";
export const MULTI_LINE_MESSAGE =
  "must not contain control characters other than tab and line breaks (U+0000-U+001F, U+007F-U+009F)";

const TEXT_PATTERNS = new Set([ONE_LINE.toString(), MULTI_LINE.toString()]);

/** Adds the one-line control-character rule to a string schema (also a format, e.g. `z.email()`). */
export const controlFree = <T extends z.ZodString | z.ZodStringFormat>(schema: T): T =>
  (schema as z.ZodString).regex(ONE_LINE, { message: ONE_LINE_MESSAGE }) as unknown as T;

/** One line of text, at most `max` characters (UTF-16 units, as zod counts). */
export const plainText = (max: number) => controlFree(z.string().max(max));

/** Several lines of text (tab, LF and CR allowed; other control characters refused). */
export const multiLineText = (max: number) => z.string().max(max).regex(MULTI_LINE, { message: MULTI_LINE_MESSAGE });

/**
 * An e-mail address as sent: one line, at most 254 characters. Its format is checked by the
 * service (400 `invalid_email`), after trimming, so that code stays what it was.
 */
export const emailText = () => plainText(254);

/** A search string of an operator list: one line, 1 to `max` characters. */
export const searchText = (max = 200) => plainText(max).min(1);

/** An identifier in a path or query (order id, session id, sku): one line, 1 to `max` characters. */
export const idText = (max: number) => plainText(max).min(1);

/** True for a validation issue raised by one of the helpers above (as fastify-type-provider-zod reports it). */
export function isTextIssue(issue: { keyword?: string; params?: Record<string, unknown> }): boolean {
  return issue.keyword === "invalid_format" && TEXT_PATTERNS.has(String(issue.params?.pattern));
}

/** The same test on a raw zod issue (for handlers that validate bodies themselves). */
export function isZodTextIssue(issue: z.core.$ZodIssue): boolean {
  return issue.code === "invalid_format" && "pattern" in issue && TEXT_PATTERNS.has(String(issue.pattern));
}

import { z } from "zod";

/**
 * RFC 9457 problem details. Every error the service answers is one of these,
 * with a stable machine-readable `code`.
 */
export class Problem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = "Problem";
  }

  get title(): string {
    return TITLES[this.status] ?? "Error";
  }

  body(instance?: string): ProblemBody {
    return {
      type: `https://labphi.dev/problems/${this.code}`,
      title: this.title,
      status: this.status,
      code: this.code,
      detail: this.detail,
      ...(instance ? { instance } : {}),
      ...this.extra,
    };
  }
}

export const TITLES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  402: "Payment Required",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  422: "Unprocessable Content",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  507: "Insufficient Storage",
  504: "Gateway Timeout",
};

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: string;
  detail: string;
  instance?: string;
  [key: string]: unknown;
}

/** The schema every route lists for its error responses (feeds OpenAPI). */
export const problemSchema = z
  .object({
    type: z.string().describe("URI naming the problem type"),
    title: z.string(),
    status: z.number().int(),
    code: z.string().describe("stable machine-readable error code"),
    detail: z.string(),
    instance: z.string().optional(),
  })
  .catchall(z.unknown())
  .describe("RFC 9457 problem details (application/problem+json)");

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8";

export const badRequest = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new Problem(400, code, detail, extra);
export const notFound = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new Problem(404, code, detail, extra);
export const conflict = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new Problem(409, code, detail, extra);
export const unavailable = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new Problem(503, code, detail, extra);

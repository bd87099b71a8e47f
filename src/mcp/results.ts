import type { CallToolResult } from "@modelcontextprotocol/server";
import { z } from "zod";
import { Problem } from "../http/problem.js";

/**
 * Tool results: a success carries its JSON as structured content (and the same JSON as text); a
 * failure is a tool error (isError) whose structured content is the RFC 9457 problem body with its
 * stable `code`, the same body the HTTP routes answer. 1.x MCP clients check structured content
 * against the tool's output schema even on errors, so every output schema admits the problem too.
 */

export const toolProblemSchema = z
  .looseObject({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    code: z.string().describe("stable machine-readable error code (docs/errors.md)"),
    detail: z.string(),
  })
  .describe("a tool error: the RFC 9457 problem body (isError: true)");

/** The output schema of a tool: its answer, or the problem of a failed call. */
export function outputOf<T extends z.ZodType>(ok: T) {
  return z.union([ok, toolProblemSchema]);
}

export function okResult(structured: Record<string, unknown>, extra: Partial<CallToolResult> = {}): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured, ...extra };
}

export function problemResult(problem: Problem): CallToolResult {
  const body = problem.body();
  return {
    isError: true,
    content: [
      { type: "text", text: JSON.stringify(body) },
      { type: "text", text: `${problem.code}: ${problem.detail}` },
    ],
    structuredContent: body,
  };
}

/** Any thrown error as a problem: a Problem keeps its code; anything else is a 500 with no internals. */
export function asProblem(err: unknown): Problem {
  if (err instanceof Problem) return err;
  if (err instanceof z.ZodError) {
    return new Problem(400, "invalid_arguments", `The arguments are not valid: ${z.prettifyError(err).slice(0, 500)}`);
  }
  return new Problem(500, "internal_error", "The tool failed unexpectedly; nothing was charged by this call.");
}

/** Runs a tool body: its answer as a structured result, or its failure as a problem tool error. */
export async function run(
  fn: () => Promise<object> | object,
  onUnexpected?: (err: unknown) => void,
): Promise<CallToolResult> {
  try {
    return okResult((await fn()) as Record<string, unknown>);
  } catch (err) {
    if (!(err instanceof Problem) && !(err instanceof z.ZodError)) onUnexpected?.(err);
    return problemResult(asProblem(err));
  }
}

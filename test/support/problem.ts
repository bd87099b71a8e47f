import type { Problem } from "../../src/http/problem.js";

/** The Problem a service call throws (fails the test if it resolves instead). */
export async function problemOf(p: Promise<unknown>): Promise<Problem> {
  try {
    await p;
  } catch (err) {
    return err as Problem;
  }
  throw new Error("expected a problem");
}

import type { Services } from "../services.js";

/** What the MCP server is built from: the same services as the HTTP routes (no HTTP round trip). */
export type McpDeps = Pick<
  Services,
  | "config"
  | "catalog"
  | "x402"
  | "engine"
  | "identities"
  | "quotes"
  | "jobs"
  | "participants"
  | "governance"
  | "olympiad"
  | "olympiadRecords"
> & {
  /**
   * Whether this deployment serves an HTTP route (the payments matrix lists only rails whose
   * routes exist): the app passes its route table; `labphi mcp` runs beside the full service.
   */
  hasRoute?: (method: string, path: string) => boolean;
  /** Reports unexpected (non-problem) failures; never sees secrets. */
  onError?: (err: unknown) => void;
};

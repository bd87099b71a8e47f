import type { RateLimiter } from "../http/rate-limit.js";
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
  | "jobManager"
  | "suitePurchase"
  | "transfers"
  | "participants"
  | "governance"
  | "olympiad"
  | "olympiadRecords"
  | "olympiadTasks"
> & {
  /**
   * Whether this deployment serves an HTTP route (the payments matrix lists only rails whose
   * routes exist): the app passes its route table; `labphi mcp` runs beside the full service.
   */
  hasRoute?: (method: string, path: string) => boolean;
  /**
   * The per-IP limits of the HTTP routes (absent when RATE_LIMIT_ENABLED is off): over `/mcp` each
   * tool call counts against the group of the route it stands for (`MCP_TOOL_ROUTES`).
   */
  rateLimiter?: RateLimiter | undefined;
  /** Reports unexpected (non-problem) failures; never sees secrets. */
  onError?: (err: unknown) => void;
  /** MPP beside x402 on the paid tools (its MCP transport: challenges and credential in `_meta`); absent: x402 only. */
  mpp?: Services["mpp"] | undefined;
};

/** Who is calling, for one request over `/mcp` (absent over stdio: `labphi mcp` is local and not limited). */
export interface McpCaller {
  /** The client address as the HTTP routes see it (`request.ip`, TRUST_PROXY applied). */
  ip: string;
}

/**
 * The `operationId` of every OpenAPI operation, keyed by `METHOD /path/{param}`: one explicit,
 * stable, camelCase name per operation that client generators use as the method name. Renaming
 * one breaks generated clients: add, never rename. A route registered without an entry here still
 * gets a derived id (`deriveOperationId`), but test/http/openapi-operation-ids.test.ts fails until
 * it has one. Scheme (docs/engine-api.md, "Operation ids"): `<verb><Thing>`; verbs get (one), list
 * (many), create, update/put, delete, plus the action's own verb (buy, cancel, approve, recover);
 * operator routes start with `admin`; HTML pages end with `Page`.
 */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  "GET /healthz": "getHealth",
  "GET /readyz": "getReadiness",
  "GET /api/lab/metrics": "getMetrics",
  "GET /metrics": "getPrometheusMetrics",
  "GET /api/x402-products": "listProducts",
  "POST /api/x402-products": "buyProductX402",
  "GET /access/{token}": "openAccess",
  "POST /api/admin/orders/{id}/revoke": "adminRevokeOrder",
  "GET /.well-known/jwks.json": "getReceiptKeys",
  "GET /access/{token}/receipt.jws": "getOrderReceipt",
  "GET /api/licenses/{key}": "validateLicence",
  "POST /api/orders/recover/challenge": "createOrderRecoveryChallenge",
  "POST /api/orders/recover": "recoverOrders",
  "POST /api/admin/orders/{id}/refund": "adminRefundOrder",
  "GET /api/admin/refunds": "adminListRefunds",
  "POST /api/admin/refunds/{id}/approve": "adminApproveRefund",
  "POST /api/admin/refunds/{id}/reject": "adminRejectRefund",
  "POST /api/admin/refunds/{id}/paid": "adminMarkRefundPaid",
  "POST /api/orders/{id}/refund-request/challenge": "createRefundRequestChallenge",
  "POST /api/orders/{id}/refund-request": "requestRefund",
  "POST /api/checkout": "createCheckout",
  "GET /api/checkout/{session_id}": "getCheckout",
  "POST /api/claims": "createClaim",
  "GET /api/claims/{id}": "getClaim",
  "GET /.well-known/x402": "getX402Resources",
  "GET /api/admin/x402/proofs": "adminListX402Proofs",
  "POST /api/admin/x402/reconcile": "adminReconcileX402",
  "GET /api/admin/orders": "adminListOrders",
  "GET /api/admin/orders/{id}": "adminGetOrder",
  "POST /api/admin/orders/{id}/refunded": "adminMarkOrderRefunded",
  "GET /api/admin/claims": "adminListClaims",
  "GET /api/admin/claims/{id}": "adminGetClaim",
  "POST /api/admin/claims/{id}/approve": "adminApproveClaim",
  "POST /api/admin/claims/{id}/check": "adminCheckClaim",
  "POST /api/admin/claims/{id}/reject": "adminRejectClaim",
  "POST /api/admin/claims/{id}/revoke": "adminRevokeClaim",
  "GET /api/admin/webhook-events": "adminListWebhookEvents",
  "GET /api/admin/audit": "adminListAudit",
  "GET /": "getHomePage",
  "GET /mcp-help": "getMcpHelpPage",
  "GET /pay": "getPayPage",
  "POST /pay": "submitPayForm",
  "GET /pay/success": "getPaySuccessPage",
  "GET /pay/cancel": "getPayCancelPage",
  "GET /web": "getWebCodecPage",
  "GET /jobs": "getJobsPage",
  "GET /jobs/paid": "getJobsPaidPage",
  "GET /olympiad": "getOlympiadPage",
  "GET /olympiad/proposals/{id}": "getOlympiadProposalPage",
  "GET /olympiad/events/{event_id}": "getOlympiadEventPage",
  "GET /standings": "getStandingsPage",
  "GET /api/payments": "getPaymentsMatrix",
  "GET /api/welcome": "getWelcome",
  "GET /api/agent": "getAgentDiscovery",
  "GET /platform.json": "getPlatformMap",
  "GET /agents.json": "getAgentsJson",
  "GET /.well-known/agent-card.json": "getAgentCard",
  "GET /.well-known/mcp.json": "getMcpCard",
  "GET /.well-known/mcp/server-card.json": "getMcpServerCard",
  "GET /toys.json": "getToys",
  "GET /ideas.json": "getIdeas",
  "GET /.well-known/api-catalog": "getApiCatalog",
  "GET /llms.txt": "getLlmsTxt",
  "GET /llms-full.txt": "getLlmsFullTxt",
  "GET /pricing.md": "getPricingMarkdown",
  "GET /agents.txt": "getAgentsTxt",
  "GET /openapi.yaml": "getOpenApiYaml",
  "GET /openapi.json": "getOpenApiJson",
  "POST /api/join-work": "joinWork",
  "POST /api/join-work/renew": "renewIdentity",
  "GET /api/ppp-quote": "getSuitePricing",
  "POST /api/ppp-quote": "createSuiteQuote",
  "POST /api/ppp-checkout": "createSuiteCheckout",
  "GET /api/jobs": "listJobs",
  "POST /api/jobs/{id}/cancel": "cancelJob",
  "DELETE /api/jobs/{id}": "deleteJob",
  "GET /api/jobs/{id}": "getJob",
  "GET /api/olympiad": "getOlympiad",
  "POST /api/olympiad": "postOlympiadAction",
  "GET /olympiad.json": "getOlympiadMap",
  "GET /api/olympiad/me": "getOlympiadMe",
  "GET /api/olympiad/proposals/{id}": "getOlympiadProposal",
  "GET /api/admin/olympiad/roles": "adminListOlympiadRoles",
  "POST /api/admin/olympiad/roles": "adminSetOlympiadRole",
  "POST /api/admin/olympiad/results": "adminRecordOlympiadResults",
  "GET /standings.json": "getStandings",
  "GET /olympiad-records.json": "getOlympiadRecords",
  "GET /api/admin/audit/verify": "adminVerifyAudit",
  "PUT /api/admin/olympiad/events/{event_id}/task": "adminPutOlympiadTask",
  "POST /api/admin/olympiad/events/{event_id}/rescore": "adminRescoreOlympiadEvent",
  "GET /api/olympiad/events": "listOlympiadEvents",
  "GET /api/olympiad/events/{event_id}": "getOlympiadEvent",
  "GET /api/olympiad/events/{event_id}/files/{name}": "getOlympiadEventFile",
  "GET /api/olympiad/events/{event_id}/key": "getOlympiadEventKey",
  "GET /api/olympiad/events/{event_id}/leaderboard": "getOlympiadLeaderboard",
  "POST /api/olympiad/events/{event_id}/submissions": "createOlympiadSubmission",
  "GET /api/olympiad/events/{event_id}/submissions": "listOlympiadSubmissions",
  "POST /api/olympiad/events/{event_id}/finals": "selectOlympiadFinals",
  "POST /api/stripe/webhook": "receiveStripeWebhook",
  "POST /pay/claim": "submitClaimForm",
  "GET /api/omni": "getEngine",
  "POST /api/omni": "runEngine",
  "GET /api/web-codec": "getWebCodec",
  "POST /api/web-codec": "runWebCodec",
  "POST /api/compress": "compressBytes",
  "POST /api/decompress": "decompressContainer",
  "POST /api/process": "processRoundTrip",
  "POST /api/x402-suite": "createX402Suite",
  "PUT /api/jobs/{id}/input": "putJobInput",
  "GET /api/jobs/{id}/output": "getJobOutput",
  "POST /api/jobs/uploads": "createJobUpload",
  "PATCH /api/jobs/uploads/{upload_id}": "appendJobUpload",
  "POST /mcp": "postMcp",
  "GET /mcp": "getMcp",
  "DELETE /mcp": "deleteMcp",
};

/** The table's key of an operation: `GET /access/{token}` (Fastify's `:token` written the OpenAPI way). */
export function operationKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`;
}

/** A camelCase id made from the method and the path: the fallback for a route missing from the table. */
export function deriveOperationId(method: string, path: string): string {
  const words = path
    .replace(/[{}:]/g, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  const cap = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);
  return [method.toLowerCase(), ...words.map((w) => cap(w.toLowerCase()))].join("");
}

/** The operation's id: the table's, else derived. */
export function operationIdOf(method: string, path: string): string {
  return OPERATION_IDS[operationKey(method, path)] ?? deriveOperationId(method, path);
}

/** camelCase as client generators want it: a lower-case letter, then letters and digits. */
export const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;

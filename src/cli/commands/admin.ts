import { type CliIO, type Command, UsageError } from "../command.js";

/**
 * `labphi admin …`: the operator API over HTTP. Talks to a running service at --url
 * (or BASE_URL) with the bearer token from ADMIN_TOKEN; never opens the database itself.
 */

const HELP = `Usage: labphi admin <action> [arguments] [options]

Operator tools for a running Lab Phi service (the same actions as the /api/admin routes).

Actions:
  orders                      list orders     (--search, --status active|revoked|refunded, --sku, --rail)
  order <order_id>            show one order with its access URL
  revoke <order_id>           revoke an order's entitlement          (--reason)
  refunded <order_id>         mark an order refunded (access ends)    (--reason)
  claims                      list manual-payment claims (--search, --state submitted|approved|rejected|revoked, --rail)
  claim <claim_id>            show one claim
  check <claim_id>            check the claim's transaction on chain (USDC on Base; advisory)
  approve <claim_id>          approve a claim: creates the order, prints its access URL (--note)
  reject <claim_id>           reject a claim                          (--reason)
  revoke-claim <claim_id>     revoke an approved claim and its order  (--reason)
  events                      list received webhook events (--search, --type, --unprocessed)
  audit                       the audit log   (--search, --actor, --action, --subject)

Options:
  --url <base>       service address (default: $BASE_URL, else http://127.0.0.1:$PORT or :8080)
  --limit <n>        page size for lists (1-200, default 20)
  --offset <n>       skip n rows;  --page <n>  1-based page number (instead of --offset)
  --search <text>    case-insensitive substring search (lists)
  --as <name>        operator name recorded in the audit log (default: $LABPHI_OPERATOR or $USER)
  --json             print the raw JSON answer
  -h, --help         this help

Environment: ADMIN_TOKEN (required: the service's operator token), BASE_URL, PORT, LABPHI_OPERATOR.

Examples:
  ADMIN_TOKEN=… labphi admin orders --search alice@example.com --limit 10 --page 2
  ADMIN_TOKEN=… labphi admin claims --state submitted
  ADMIN_TOKEN=… labphi admin approve clm_… --note "tx checked on basescan"`;

const VALUE_FLAGS = new Set([
  "url",
  "limit",
  "offset",
  "page",
  "search",
  "status",
  "state",
  "sku",
  "rail",
  "type",
  "actor",
  "action",
  "subject",
  "reason",
  "note",
  "as",
]);
const BOOL_FLAGS = new Set(["json", "unprocessed"]);

interface Parsed {
  positional: string[];
  flags: Record<string, string>;
  bools: Set<string>;
}

export function parseArgs(args: string[]): Parsed {
  const out: Parsed = { positional: [], flags: {}, bools: new Set() };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    if (!arg.startsWith("--")) {
      out.positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (BOOL_FLAGS.has(name)) {
      out.bools.add(name);
      continue;
    }
    if (!VALUE_FLAGS.has(name)) throw new UsageError(`unknown option --${name}`);
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined || (eq === -1 && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
    out.flags[name] = value;
  }
  return out;
}

function intFlag(flags: Record<string, string>, name: string, min: number, max: number): number | undefined {
  const v = flags[name];
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
    throw new UsageError(`--${name} must be an integer between ${min} and ${max}`);
  }
  return Number(v);
}

const LISTS: Record<string, { path: string; filters: string[]; columns: string[] }> = {
  orders: {
    path: "/api/admin/orders",
    filters: ["search", "status", "sku", "rail"],
    columns: ["order_id", "created_at", "sku", "amount_usd", "rail", "status", "email", "agent_id"],
  },
  claims: {
    path: "/api/admin/claims",
    filters: ["search", "state", "rail"],
    columns: ["claim_id", "created_at", "sku", "amount_usd", "rail", "state", "email", "tx"],
  },
  events: {
    path: "/api/admin/webhook-events",
    filters: ["search", "type"],
    columns: ["id", "received_at", "type", "object_id", "outcome", "attempts"],
  },
  audit: {
    path: "/api/admin/audit",
    filters: ["search", "actor", "action", "subject"],
    columns: ["at", "actor", "action", "subject", "detail"],
  },
};

const ACTIONS: Record<string, { method: "GET" | "POST"; path: (id: string) => string; body?: "reason" | "note" }> = {
  order: { method: "GET", path: (id) => `/api/admin/orders/${id}` },
  revoke: { method: "POST", path: (id) => `/api/admin/orders/${id}/revoke`, body: "reason" },
  refunded: { method: "POST", path: (id) => `/api/admin/orders/${id}/refunded`, body: "reason" },
  claim: { method: "GET", path: (id) => `/api/admin/claims/${id}` },
  check: { method: "POST", path: (id) => `/api/admin/claims/${id}/check` },
  approve: { method: "POST", path: (id) => `/api/admin/claims/${id}/approve`, body: "note" },
  reject: { method: "POST", path: (id) => `/api/admin/claims/${id}/reject`, body: "reason" },
  "revoke-claim": { method: "POST", path: (id) => `/api/admin/claims/${id}/revoke`, body: "reason" },
};

function cell(v: unknown, max = 60): string {
  if (v === null || v === undefined) return "-";
  const s = typeof v === "object" ? JSON.stringify(v) : String(v);
  return s.length > max ? `${s.slice(0, max - 3)}...` : s;
}

/**
 * Shown names of fields whose value is not what the name alone suggests: an order's agent id is
 * whatever the buyer wrote in `note: agent:<id>`, never verified (`agent_id_source`).
 */
const LABELS: Record<string, string> = { agent_id: "agent (self-asserted)" };
const label = (key: string) => LABELS[key] ?? key;

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  const cells = rows.map((r) => columns.map((c) => cell(r[c])));
  const heads = columns.map(label);
  const widths = heads.map((c, i) => Math.max(c.length, ...cells.map((row) => (row[i] ?? "").length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  return [line(heads), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

function baseUrl(flags: Record<string, string>, env: NodeJS.ProcessEnv): string {
  const raw = flags.url ?? env.BASE_URL ?? `http://127.0.0.1:${env.PORT || "8080"}`;
  if (!/^https?:\/\/[^\s]+$/i.test(raw)) throw new UsageError(`--url must be an http(s) address, got ${raw}`);
  return raw.replace(/\/+$/, "");
}

async function call(
  io: CliIO,
  base: string,
  token: string,
  operator: string | undefined,
  method: "GET" | "POST",
  path: string,
  body?: Record<string, string>,
): Promise<{ ok: boolean; status: number; json: Record<string, unknown> }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: "application/json" };
  if (operator) headers["x-operator"] = operator;
  if (method === "POST") headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(method === "POST" ? { body: JSON.stringify(body ?? {}) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
  } catch (err) {
    throw new Error(`cannot reach ${base}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    json = { detail: text.slice(0, 200) };
  }
  if (!res.ok) {
    io.stderr.write(`labphi admin: ${res.status} ${String(json.code ?? "error")}: ${String(json.detail ?? "")}\n`);
  }
  return { ok: res.ok, status: res.status, json };
}

export const adminCommand: Command = {
  name: "admin",
  summary: "Operator tools over HTTP: orders, claims (approve/reject), revoke, refunded, webhook events, audit",
  help: HELP,
  async run(args, io) {
    const { positional, flags, bools } = parseArgs(args);
    const [action, id, ...extra] = positional;
    if (!action) throw new UsageError("an action is required (orders, claims, approve, …)");
    const token = io.env.ADMIN_TOKEN;
    if (!token) throw new UsageError("ADMIN_TOKEN is not set (the service's operator token)");
    const base = baseUrl(flags, io.env);
    const operator = flags.as ?? io.env.LABPHI_OPERATOR ?? io.env.USER;
    const asOperator = operator && /^[A-Za-z0-9._@-]{1,64}$/.test(operator) ? operator : undefined;

    const list = LISTS[action];
    if (list) {
      if (id !== undefined) throw new UsageError(`${action} takes no argument (use --search)`);
      const limit = intFlag(flags, "limit", 1, 200) ?? 20;
      const page = intFlag(flags, "page", 1, 1_000_000);
      const offset = page !== undefined ? (page - 1) * limit : (intFlag(flags, "offset", 0, 100_000_000) ?? 0);
      const q = new URLSearchParams({ limit: String(limit), offset: String(offset) });
      for (const f of list.filters) if (flags[f] !== undefined) q.set(f, flags[f] as string);
      if (action === "events" && bools.has("unprocessed")) q.set("unprocessed", "true");
      const r = await call(io, base, token, asOperator, "GET", `${list.path}?${q}`);
      if (!r.ok) return 1;
      if (bools.has("json")) {
        io.stdout.write(`${JSON.stringify(r.json, null, 2)}\n`);
        return 0;
      }
      const items = (r.json.items ?? []) as Record<string, unknown>[];
      const total = Number(r.json.total ?? 0);
      io.stdout.write(`${table(items, list.columns)}\n`);
      const from = items.length === 0 ? 0 : offset + 1;
      const more = offset + items.length < total ? `; next page: --offset ${offset + items.length}` : "";
      io.stdout.write(`${from}-${offset + items.length} of ${total}${more}\n`);
      return 0;
    }

    const act = ACTIONS[action];
    if (!act) throw new UsageError(`unknown action '${action}'`);
    if (!id) throw new UsageError(`${action} needs an id`);
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`);
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new UsageError(`'${id}' is not an order or claim id`);
    const body: Record<string, string> = {};
    if (act.body && flags[act.body] !== undefined) body[act.body] = flags[act.body] as string;
    const r = await call(io, base, token, asOperator, act.method, act.path(id), body);
    if (!r.ok) return 1;
    if (bools.has("json")) {
      io.stdout.write(`${JSON.stringify(r.json, null, 2)}\n`);
      return 0;
    }
    const shown =
      action === "approve"
        ? { ...(r.json.claim as object), access_url: r.json.access_url, order_id: r.json.order_id }
        : r.json;
    for (const [k, v] of Object.entries(shown)) {
      if (k === "agent_id_source") continue; // said by the agent_id label
      io.stdout.write(`${label(k).padEnd(16)} ${cell(v, Number.POSITIVE_INFINITY)}\n`);
    }
    return 0;
  },
};

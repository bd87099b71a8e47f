import { z } from "zod";
import { suitePricingSchema } from "../payments/matrix/schemas.js";

/** Wire shapes of the JSON discovery documents. Documented in docs/discovery.md. */

export const linkMapSchema = z.record(z.string(), z.string()).describe("name → absolute URL (only served routes)");

export const routeEntrySchema = z.object({
  method: z.string(),
  path: z.string(),
  summary: z.string().nullable(),
  operation_id: z.string().optional().describe("the operation's operationId in /openapi.yaml"),
});

export const productBriefSchema = z.object({
  sku: z.string(),
  name: z.string(),
  kind: z.string(),
  blurb: z.string(),
  aliases: z.array(z.string()),
  amount_cents: z.number().int(),
  amount_usd: z.string(),
  max_amount_required: z.string().describe("x402 amount in USDC atomic units (cents × 10,000)"),
  over_default_client_cap: z.boolean().describe("true when stock x402 v2 clients refuse it without a raised cap"),
  agent_buy: z.string(),
  checkout: z.string(),
});

const railFlagSchema = z.object({
  id: z.string(),
  name: z.string(),
  configured: z.boolean(),
  missing: z.array(z.string()).describe("settings still needed before the rail can settle"),
});

export const x402RailSchema = z.object({
  id: z.string(),
  chain: z.enum(["solana", "base"]),
  scheme: z.literal("exact"),
  network: z.string(),
  caip2: z.string(),
  asset: z.string(),
  payTo: z.string().nullable(),
  decimals: z.number().int(),
  configured: z.boolean(),
  missing: z.array(z.string()).describe("settings still needed before the rail can settle"),
  extra: z.record(z.string(), z.string()),
  proofs: z.array(z.string()),
  note: z.string(),
});

export const x402HeadersSchema = z.object({
  payment: z.array(z.string()).describe("request headers that carry the payment proof"),
  required: z.string().describe("response header of the 402 (base64 v2 PaymentRequired)"),
  response: z.array(z.string()).describe("response headers of a paid answer (base64 SettleResponse)"),
  note: z.string(),
});

export const capsSchema = z.object({
  default_client_cap_usd: z.string(),
  default_client_cap_units: z.string(),
  note: z.string(),
  skus_over_default_cap: z.array(z.string()),
});

export const paidOperationSchema = z.object({
  method: z.string(),
  path: z.string(),
  summary: z.string(),
  body: z.string(),
  pricing: z.string(),
  served: z.boolean(),
});

export const buyExampleSchema = z.object({
  title: z.string(),
  rail: z.string(),
  curl: z.string(),
  expect: z.string(),
});

// ---------------------------------------------------------------- /api/welcome

export const welcomeSchema = z.object({
  hello: z.string(),
  service: z.string(),
  version: z.string(),
  you_are: z.string(),
  if_you_are_human: z.object({ links: linkMapSchema, how_to_pay: z.array(z.string()) }),
  if_you_are_agent: z.object({
    links: linkMapSchema,
    payment_header: z.literal("X-PAYMENT"),
    payment_headers: z.array(z.string()),
    networks: z.array(z.string()),
    how_to_pay: z.array(z.string()),
  }),
  next_30_seconds: z.object({ human: z.array(z.string()), agent: z.array(z.string()) }),
  suite_pricing: suitePricingSchema,
  modules: z.array(z.string()),
  toy_store: z.object({ aisles: z.array(z.string()), url: z.string().optional() }),
  contact: z.string().nullable(),
});

// ---------------------------------------------------------------- /platform.json

export const surfaceSchema = z.object({
  id: z.string(),
  audience: z.string(),
  commerce: z.enum(["stripe", "x402"]),
  description: z.string(),
  entry: z.string().nullable(),
  rails: z.array(railFlagSchema),
  networks: z.array(z.string()).optional(),
  payment_header: z.string().optional(),
});

export const moduleSchema = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  routes: z.array(routeEntrySchema),
});

export const platformSchema = z.object({
  name: z.string(),
  version: z.string(),
  site: z.string(),
  summary: z.string(),
  surfaces: z.object({ humans: surfaceSchema, agents: surfaceSchema }),
  modules: z.array(moduleSchema),
  discovery: linkMapSchema,
  versions: z.record(z.string(), z.string()),
  contact: z.string().nullable(),
});

// ---------------------------------------------------------------- MCP and service endpoints

export const mcpFactsSchema = z.object({
  endpoint: z.string().nullable().describe("streamable HTTP endpoint; null when this deployment does not serve it"),
  transport: z.literal("streamable-http"),
  stdio: z.string().describe("the command that runs the same server over stdio"),
  server_card: z.string().nullable(),
  payments: z.string(),
  tools: z.array(z.object({ name: z.string(), description: z.string(), paid: z.boolean() })),
});

export const serviceEndpointsSchema = z.object({
  codec: z.array(routeEntrySchema),
  suite: z.array(routeEntrySchema),
});

// ---------------------------------------------------------------- /api/agent

export const agentSchema = z.object({
  name: z.string(),
  version: z.string(),
  api_version: z.string(),
  source_of_truth: z.literal(true),
  note: z.string(),
  base_url: z.string(),
  platform: z.object({
    map: z.string().nullable(),
    surfaces: z.object({ humans: z.array(railFlagSchema), agents: z.array(railFlagSchema) }),
  }),
  discovery: linkMapSchema,
  catalog: z.object({
    url: z.string().nullable(),
    count: z.number().int(),
    aliases: z.record(z.string(), z.string()),
    retired: z.record(z.string(), z.string()),
    products: z.array(productBriefSchema),
  }),
  rails: z.object({
    agent: z.object({
      protocol: z.literal("x402"),
      versions: z.array(z.number().int()),
      configured: z.boolean(),
      payment_header: z.literal("X-PAYMENT"),
      headers: x402HeadersSchema,
      rails: z.array(x402RailSchema),
      max_timeout_seconds: z.number().int(),
      atomic_units: z.string(),
      client_compat: z.string(),
      caps: capsSchema,
    }),
    human: z.object({
      rails: z.array(railFlagSchema),
      payment_methods: z.array(z.string()),
      payment_methods_note: z.string(),
    }),
    universal: z.object({
      matrix: z.string().nullable(),
      configured_rails: z.array(z.string()),
      missing_or_optional: z.array(z.string()),
      preferred: z.object({ human: z.string(), agent: z.string(), enterprise: z.string() }),
    }),
  }),
  paid_operations: z.array(paidOperationSchema),
  mcp: mcpFactsSchema,
  endpoints: serviceEndpointsSchema,
  flows: z.object({ product_x402: z.array(z.string()), product_card: z.array(z.string()) }),
  buy_examples: z.array(buyExampleSchema),
  suite_pricing: suitePricingSchema,
  olympiad: z
    .object({
      entry_sku: z.string(),
      entry_usd: z.string(),
      entry_cents: z.number().int(),
      buy: z.string(),
      links: linkMapSchema,
    })
    .nullable(),
  toy_store: z.object({ aisles: z.array(z.string()), url: z.string().nullable() }),
  contact: z.string().nullable(),
});

// ---------------------------------------------------------------- /agents.json

export const agentsJsonSchema = z.object({
  format: z.literal("labphi-agents/1"),
  name: z.string(),
  version: z.string(),
  base_url: z.string(),
  description: z.string(),
  protocol: z.literal("x402"),
  x402_versions: z.array(z.number().int()),
  headers: x402HeadersSchema,
  units: z.object({ decimals: z.number().int(), units_per_cent: z.string(), note: z.string() }),
  caps: capsSchema,
  rails: z.array(x402RailSchema),
  skus: z.array(
    z.object({
      sku: z.string(),
      name: z.string(),
      kind: z.string(),
      aliases: z.array(z.string()),
      amount_cents: z.number().int(),
      amount_usd: z.string(),
      over_default_client_cap: z.boolean(),
      buy: z.object({ method: z.literal("POST"), path: z.string(), body: z.record(z.string(), z.string()) }),
      requirements: z.array(
        z.object({
          rail: z.string(),
          scheme: z.literal("exact"),
          network: z.string(),
          asset: z.string(),
          payTo: z.string().nullable(),
          amount: z.string().describe("x402 amount in USDC atomic units (cents × 10,000)"),
          maxAmountRequired: z.string().describe("the same amount under its x402 v1 name"),
          decimals: z.number().int(),
          configured: z.boolean(),
          missing: z.array(z.string()),
        }),
      ),
    }),
  ),
  flows: z.object({
    x402_product: z.array(z.string()),
    card_checkout: z.array(z.string()),
    manual_claim: z.array(z.string()),
  }),
  paid_operations: z.array(paidOperationSchema),
  mcp: mcpFactsSchema,
  endpoints: serviceEndpointsSchema,
  links: linkMapSchema,
});

// ---------------------------------------------------------------- /toys.json

export const AISLES = ["fun", "theory", "artifact", "history"] as const;
export const TOY_STATUSES = ["live", "parked", "story"] as const;

export const toySchema = z.object({
  id: z.string(),
  name: z.string(),
  aisle: z.enum(AISLES),
  status: z.enum(TOY_STATUSES),
  price: z.literal("free / not for sale"),
  commercial_sku: z.literal(false),
  blurb: z.string(),
  tags: z.array(z.string()),
  links: z.array(z.object({ label: z.string(), href: z.string() })),
  waiting_for: z.array(z.string()).describe("endpoints this toy needs that this deployment does not serve yet"),
  idea_id: z.string().nullable(),
});

export const toysSchema = z.object({
  service: z.string(),
  version: z.string(),
  site: z.string(),
  policy: z.object({ what_belongs: z.string(), not_for_sale: z.literal(true), note: z.string() }),
  aisles: z.record(z.string(), z.object({ title: z.string(), description: z.string(), count: z.number().int() })),
  count: z.number().int(),
  toys: z.array(toySchema),
});

// ---------------------------------------------------------------- /ideas.json

export const IDEA_STATUSES = ["shipped", "partial", "proposed", "open"] as const;

export const ideaSchema = z.object({
  id: z.string(),
  bucket: z.string(),
  title: z.string(),
  summary: z.string(),
  status: z.enum(IDEA_STATUSES),
  lands_as: z.array(z.string()).describe('endpoints ("METHOD /path") that deliver the idea'),
  served: z.array(z.string()).describe("the lands_as endpoints this deployment serves"),
  links: z.array(z.string()),
});

export const ideasSchema = z.object({
  service: z.string(),
  version: z.string(),
  site: z.string(),
  note: z.string(),
  buckets: z.record(z.string(), z.string()),
  statuses: z.record(z.string(), z.string()),
  count: z.number().int(),
  ideas: z.array(ideaSchema),
});

export type Welcome = z.infer<typeof welcomeSchema>;
export type Platform = z.infer<typeof platformSchema>;
export type AgentDocument = z.infer<typeof agentSchema>;
export type AgentsJson = z.infer<typeof agentsJsonSchema>;
export type ProductBrief = z.infer<typeof productBriefSchema>;
export type Toy = z.infer<typeof toySchema>;
export type Toys = z.infer<typeof toysSchema>;
export type Idea = z.infer<typeof ideaSchema>;
export type Ideas = z.infer<typeof ideasSchema>;

// ---------------------------------------------------------------- /.well-known/api-catalog (RFC 9727)

export const linkTargetSchema = z.object({ href: z.string(), type: z.string().optional() });

export const apiCatalogSchema = z.object({
  linkset: z.array(
    z
      .record(z.string(), z.union([z.string(), z.array(linkTargetSchema)]))
      .describe("one link context (RFC 9264): `anchor` (URL) plus relation → targets"),
  ),
});

export type ApiCatalog = z.infer<typeof apiCatalogSchema>;

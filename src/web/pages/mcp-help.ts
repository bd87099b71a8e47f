import { z } from "zod";
import type { Config } from "../../config.js";
import { MCP_CARD_PATHS, MCP_PATH, MCP_SERVER_NAME, MCP_STDIO_COMMAND, MCP_TOOLS } from "../../discovery/mcp-card.js";
import type { App } from "../../http/types.js";
import { escapeHtml as e } from "../html.js";
import { sendPage } from "../layout.js";
import { saleWays } from "./sell-facts.js";

/** Where the home page sends a person who follows "MCP at /mcp" (/mcp itself speaks JSON-RPC only). */
export const MCP_HELP_PATH = "/mcp-help";

/**
 * `/mcp-help`: how a person connects an MCP client to this server. `/mcp` is the streamable-HTTP
 * endpoint for MCP clients (src/mcp/http.ts): a browser opening it gets a JSON-RPC refusal, so the
 * human link points here.
 */
export function mcpHelpPage(app: App, deps: { config: Config }) {
  app.get(
    MCP_HELP_PATH,
    {
      schema: {
        summary: "How to connect an MCP client to this server (HTML); the MCP endpoint itself is /mcp",
        tags: ["web"],
        response: { 200: z.string() },
      },
    },
    async (_request, reply) =>
      sendPage(reply, 200, {
        title: "Connect an MCP client",
        description: "How to connect an MCP client (an AI assistant or agent) to Lab Phi's MCP server.",
        path: MCP_HELP_PATH,
        body: mcpHelpBody(deps.config),
      }),
  );
}

export function mcpHelpBody(config: Config): string {
  const url = `${config.baseUrl}${MCP_PATH}`;
  const x402 = saleWays(config).x402.length > 0;
  const remote = JSON.stringify({ mcpServers: { [MCP_SERVER_NAME]: { type: "http", url } } }, null, 2);
  const [bin, sub] = MCP_STDIO_COMMAND.split(" ");
  const local = JSON.stringify(
    { mcpServers: { [MCP_SERVER_NAME]: { command: "node", args: [`/path/to/labphi/bin/${bin}.mjs`, sub] } } },
    null,
    2,
  );
  const tools = MCP_TOOLS.map(
    (t) =>
      `<tr><td class="mono">${e(t.name)}</td><td>${e(t.description)}</td><td>${t.paid ? (x402 ? "x402 (USDC)" : "x402: not set up here") : "free"}</td></tr>`,
  ).join("");
  return `<section class="hero">
<h1>Connect an MCP client</h1>
<p class="lead">Lab Phi is an MCP server: an AI assistant or agent that speaks the Model Context Protocol can list the catalog, compress and decompress with the codec, quote and run suite jobs and take part in the olympiad, as tools.</p>
</section>
<div class="notice" role="note"><p><code>${e(url)}</code> is the endpoint for MCP clients (JSON-RPC over streamable HTTP, POST). Opening it in a browser shows an error: that is expected; point your MCP client at it instead.</p></div>
<div class="stack">
<section class="card" aria-labelledby="mcp-remote-h">
<h2 id="mcp-remote-h">Over HTTP (remote)</h2>
<p>In a client that supports remote servers, add a server of type streamable HTTP with the URL <code>${e(url)}</code>. In a JSON configuration file (the <code>mcpServers</code> form most clients read):</p>
<pre class="command"><code>${e(remote)}</code></pre>
<p>With Claude Code: <code>claude mcp add --transport http ${e(MCP_SERVER_NAME)} ${e(url)}</code>. To try it by hand, the MCP Inspector: <code>npx @modelcontextprotocol/inspector</code>, transport "Streamable HTTP", URL <code>${e(url)}</code>.</p>
</section>
<section class="card" aria-labelledby="mcp-local-h">
<h2 id="mcp-local-h">Over stdio (local)</h2>
<p>In a clone of this service, <code>${e(MCP_STDIO_COMMAND)}</code> runs the same server over standard input and output, for clients that start their servers as programs:</p>
<pre class="command"><code>${e(local)}</code></pre>
</section>
<section class="card" aria-labelledby="mcp-tools-h">
<h2 id="mcp-tools-h">Tools</h2>
<div class="table-wrap"><table>
<thead><tr><th scope="col">Tool</th><th scope="col">What it does</th><th scope="col">Cost</th></tr></thead>
<tbody>${tools}</tbody>
</table></div>
<p class="small">Paid tools use the x402 MCP transport: the first call answers with the payment requirements; the client pays and calls again with <code>_meta["x402/payment"]</code>.${x402 ? "" : " No x402 network can settle on this server yet, so paid calls answer that x402 is not configured."}</p>
<p class="small">Machine-readable: <a href="${e(MCP_CARD_PATHS[0])}">server card</a> · <a href="/llms.txt">llms.txt</a> · <a href="/openapi.yaml">OpenAPI</a>.</p>
</section>
</div>`;
}

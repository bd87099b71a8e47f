import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { bundleModule } from "../../src/threads/bundle.mjs";

const root = path.resolve(import.meta.dirname, "../..");

describe("bundleModule: a TypeScript entry as bundled JavaScript", () => {
  it("bundles into node_modules/.cache/labphi, reuses the same file, and keeps each source's import.meta.url", async () => {
    const entry = pathToFileURL(path.join(root, "src/jobs/segment-job.ts"));
    const url = await bundleModule(entry);
    expect(url).toMatch(/\/node_modules\/\.cache\/labphi\/segment-job-[0-9a-f]{16}\/segment-job\.mjs$/);
    expect(await bundleModule(entry)).toBe(url);
    const job = (await import(url as string)) as typeof import("../../src/jobs/segment-job.js");
    // level max runs the context-mixing model, whose WebAssembly file is found next to its source
    // (src/codec/entropy/cm-wasm/model.wasm) through that source's own import.meta.url
    const input = new TextEncoder().encode("the quick brown fox jumps over the lazy dog\n".repeat(2000));
    const reply = await job.run({ op: "roundtrip", level: "max", input: input.slice() });
    if (!("out" in reply)) throw new Error(`roundtrip failed: ${reply.error.message}`);
    const back = await job.run({ op: "decompress", level: "max", input: Buffer.concat(reply.out) });
    if (!("out" in back)) throw new Error(`decompress failed: ${back.error.message}`);
    expect(Buffer.concat(back.out).equals(Buffer.from(input))).toBe(true);
    // every import.meta.url of the sources became that source's own URL
    const dir = path.dirname(fileURLToPath(url as string));
    const code = fs
      .readdirSync(dir)
      .map((f) => fs.readFileSync(path.join(dir, f), "utf8"))
      .join("\n");
    expect(code).not.toContain("import.meta.url");
    expect(code).toContain(JSON.stringify(pathToFileURL(path.join(root, "src/codec/entropy/cm-wasm.ts")).href));
  });

  it("answers undefined (the caller falls back to tsx) for a source outside a src/ tree", async () => {
    expect(await bundleModule(pathToFileURL("/nonexistent/entry.ts"))).toBeUndefined();
  });

  it("bin/labphi.mjs runs the bundled CLI in its own process: compress | decompress restores the bytes", () => {
    const bin = path.join(root, "bin/labphi.mjs");
    const text = "bundled launcher ".repeat(500);
    const packed = execFileSync(process.execPath, [bin, "compress", "--level", "fast"], { input: text });
    const restored = execFileSync(process.execPath, [bin, "decompress"], { input: packed });
    expect(restored.toString()).toBe(text);
    expect(execFileSync(process.execPath, [bin, "--help"]).toString()).toMatch(/^ {2}worker /m);
  }, 60_000);
});

describe("bundleModule: code splitting", () => {
  it("keeps a dynamic import's packages out of the entry: the CLI's entry does not load the payment or MCP packages", async () => {
    const url = await bundleModule(pathToFileURL(path.join(root, "src/cli/main.ts")));
    const entry = fs.readFileSync(fileURLToPath(url as string), "utf8");
    const staticImports = [...entry.matchAll(/^import[^;]*?from\s*"([^"]+)"/gm)].map((m) => m[1]);
    // the packages of commands that load them on demand (agent, mcp, sandbox, serve) stay in chunks
    for (const pkg of ["@modelcontextprotocol/server", "@x402/evm", "stripe", "fastify", "litesvm"]) {
      expect(staticImports.some((p) => p === pkg || p?.startsWith(`${pkg}/`))).toBe(false);
    }
  });
});

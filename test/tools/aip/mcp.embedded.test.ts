/**
 * `aip mcp`'s embedded agency follows the client's roots: the roots it lists at start are allowed, and
 * after `notifications/roots/list_changed` the new list is, without dropping the configured root.
 * Driven by the MCP SDK's own Client over stdio.
 */
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../../helpers.js";
import { AipCaller } from "../../../tools/aip/agency.js";
import { AIP } from "./bridge-helpers.js";

type Json = Record<string, any>;

const t = tempDir("aipme-");
afterAll(() => t.cleanup());

/** `allowed`: the only configured root (empty); `project`: the client's first root; `added`: a root it adds later. */
const dirs = Object.fromEntries(
  ["allowed", "project", "added", "cache", "tmp"].map((d) => {
    mkdirSync(join(t.dir, d), { recursive: true });
    return [d, join(t.dir, d)];
  }),
) as Record<"allowed" | "project" | "added" | "cache" | "tmp", string>;
writeFileSync(
  join(dirs.project, "meter.ts"),
  "export function readMeter(id: string): number {\n  return id.length;\n}\n",
);
writeFileSync(join(dirs.added, "tariff.ts"), "export const peakTariff = 0.42;\n");
const config = join(t.dir, "agency.json");
writeFileSync(
  config,
  JSON.stringify({
    vetting: "off",
    limits: { health_interval_ms: 60_000, start_timeout_ms: 90_000 },
    agents: [{ name: "search", command: ["dist/agents/search/main.js"], manifest: "manifests/search.json" }],
  }),
);

const text = (r: Json): string => (r.content as { text: string }[]).map((c) => c.text).join("\n");

describe("aip mcp's embedded agency and the client's roots", () => {
  it("allows the roots the client adds (roots/list_changed) and keeps the configured one", async () => {
    let roots = [dirs.project];
    const client = new Client({ name: "test", version: "1.0.0" }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((r) => ({ uri: pathToFileURL(r).href, name: r.split("/").at(-1)! })),
    }));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [AIP, "mcp", "--socket", join(t.dir, "nobody.sock"), "--config", config],
      env: {
        ...(process.env as Record<string, string>),
        TMPDIR: dirs.tmp,
        XDG_CACHE_HOME: dirs.cache,
        AIP_WORKSPACE_ROOTS: dirs.allowed,
        AIP_WORKSPACE_ROOTS_DEFAULTS: "off",
      },
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    await client.connect(transport);
    const search = async (query: string): Promise<Json> =>
      (await client.callTool({ name: "search_workspace", arguments: { query } })) as Json;
    // The embedded agency itself, asked for a root directly: allowed or refused.
    const agencyAllows = async (root: string): Promise<string> => {
      const embedded = readdirSync(dirs.tmp).find((d) => d.startsWith("aip-embedded-"))!;
      const r = await new AipCaller(join(dirs.tmp, embedded, "aip.sock")).invoke({
        action: "search",
        context: { workspace_root: root, query: "x" },
        constraints: {},
      });
      return r.ok ? "allowed" : r.problem.type;
    };
    try {
      const first = await search("read meter");
      expect(first.isError, text(first)).toBeFalsy();
      expect(JSON.stringify(first.structuredContent)).toContain("meter.ts");
      expect(await agencyAllows(dirs.added)).toBe("AIP_ERR_FORBIDDEN_PATH");

      roots = [dirs.added, dirs.project];
      await client.sendRootsListChanged();
      // The next tool call waits for the agency to allow the new list; the first root is now `added`.
      const after = await search("peak tariff");
      expect(after.isError, text(after)).toBeFalsy();
      expect(JSON.stringify(after.structuredContent)).toContain("tariff.ts");
      expect(stderr).toContain(`now allows the client's roots ${dirs.added}, ${dirs.project}`);
      // Nothing dropped: the earlier root and the configured one are still allowed.
      for (const root of [dirs.added, dirs.project, dirs.allowed])
        expect(await agencyAllows(root), root).toBe("allowed");
    } finally {
      await client.close();
    }
  }, 240_000);
});

/**
 * Two attacks through the real agency (a real testgen process behind the orchestrator): a workspace
 * with a planted `node_modules/.bin/vitest` and `vitest.config.ts`, asked for tests through `aip mcp`'s
 * generate_tests by the MCP SDK's own client, runs nothing (marker files absent); and testgen keeps
 * answering other requests while requests whose types include a FIFO `.d.ts` come in.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { invokeHttp } from "../../protocol/transport/client.js";
import { tempDir } from "../helpers.js";
import type { Agency } from "../orchestrator/harness.js";
import { AIP, bundledAgency, workspace } from "../tools/aip/bridge-helpers.js";

type Json = Record<string, any>;

describe("attacks through the agency", { timeout: 240_000 }, () => {
  let agency: Agency;
  const outside = tempDir("aipsec-br-");
  const temps: { cleanup: () => void }[] = [];
  beforeAll(async () => {
    agency = await bundledAgency(["testgen"]);
  }, 150_000);
  afterAll(async () => {
    await agency?.stop();
    temps.forEach((t) => t.cleanup());
    outside.cleanup();
  });

  it("aip mcp's generate_tests never runs a planted runner or config", async () => {
    const ws = workspace();
    temps.push(ws);
    const marker = join(outside.dir, "runner-ran");
    const configMarker = join(outside.dir, "config-ran");
    mkdirSync(join(ws.root, "node_modules/.bin"), { recursive: true });
    writeFileSync(join(ws.root, "node_modules/.bin/vitest"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    writeFileSync(
      join(ws.root, "vitest.config.ts"),
      `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(configMarker)}, "x");\nexport default {};\n`,
    );
    const client = new Client({ name: "attacker", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [AIP, "mcp", "--socket", agency.socket, "--workspace", ws.root],
        stderr: "pipe",
      }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === "generate_tests")!.description).toContain("workspace not trusted");
      for (let i = 0; i < 2; i++) {
        const r = (await client.callTool({
          name: "generate_tests",
          arguments: { path: "src/math.ts", function: "add" },
        })) as Json;
        expect(r.isError, JSON.stringify(r.content)).toBeFalsy();
        expect(r.structuredContent.content).toContain("add(");
        expect(r.structuredContent.checks).toMatchObject({ run: "skipped", skipped: { run: "workspace not trusted" } });
        expect(existsSync(marker)).toBe(false);
        expect(existsSync(configMarker)).toBe(false);
      }
    } finally {
      await client.close();
    }
  });

  it("testgen answers other requests while FIFO-typed requests come in", async () => {
    const fifo = tempDir("aipsec-fifo-");
    temps.push(fifo);
    mkdirSync(join(fifo.dir, "src"));
    writeFileSync(
      join(fifo.dir, "src/a.ts"),
      'import type { Evil } from "evil";\nexport function f(x: Evil): number {\n  return 1;\n}\n',
    );
    writeFileSync(join(fifo.dir, "package.json"), JSON.stringify({ name: "fifo", type: "module" }));
    mkdirSync(join(fifo.dir, "node_modules/evil"), { recursive: true });
    writeFileSync(
      join(fifo.dir, "node_modules/evil/package.json"),
      JSON.stringify({ name: "evil", types: "index.d.ts" }),
    );
    execFileSync("mkfifo", [join(fifo.dir, "node_modules/evil/index.d.ts")]);
    const ws = workspace();
    temps.push(ws);
    const testgen = agency.orchestrator.agents.find((a) => a.name === "testgen")!;
    const pid = testgen.pid;
    const ask = (root: string, file: string, fn: string) =>
      invokeHttp(agency.socket, {
        action: "testgen",
        context: { workspace_root: root, file_path: file },
        constraints: { function: fn },
      }).then((r) => r.json as Json);
    const hostile = Array.from({ length: 8 }, () => ask(fifo.dir, "src/a.ts", "f"));
    const others = Array.from({ length: 3 }, () => ask(ws.root, "src/math.ts", "add"));
    const [h, o] = await Promise.all([Promise.all(hostile), Promise.all(others)]);
    for (const r of o) expect(r.status, JSON.stringify(r.error)).toBe("success");
    for (const r of h) {
      // The FIFO is skipped (the types are unknown) or the request refused: never a crash or a timeout.
      const code = r.status === "success" ? "success" : r.error.type;
      expect(["success", "AIP_ERR_FORBIDDEN_PATH", "AIP_ERR_INVALID_FIELD"]).toContain(code);
    }
    expect(testgen.pid).toBe(pid);
    expect(testgen.restarts).toBe(0);
    expect(testgen.state).toBe("healthy");
  });
});

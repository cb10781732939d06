/** The editor and coding-agent snippets of docs/integrations.md start working servers (the Neovim one runs in test/tools/aip/lsp.nvim.test.ts). */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DidOpenTextDocumentNotification,
  DocumentSymbolRequest,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
  type DocumentSymbol,
} from "vscode-languageserver-protocol/node";
import { ROOT } from "../helpers.js";
import type { Agency } from "../orchestrator/harness.js";
import { AIP, MATH_TS, bundledAgency, readmeBlock, workspace } from "../tools/aip/bridge-helpers.js";

/** `aip` as docs/integrations.md runs it (npm link puts it on PATH): here node + dist/scripts/aip.js. */
function argv(command: string, args: string[]): string[] {
  expect(command).toBe("aip");
  return [AIP, ...args];
}

describe("docs/integrations.md: Use it from your editor / from a coding agent", () => {
  let agency: Agency;
  let ws: { root: string; cleanup: () => void };
  beforeAll(async () => {
    agency = await bundledAgency(["summarize"]);
    ws = workspace();
  }, 150_000);
  afterAll(async () => {
    await agency?.stop();
    ws?.cleanup();
  });

  /**
   * Blocks whose command and arguments make the same command line share one run of it (the editors'
   * blocks all start `aip lsp --stdio`): each block's test checks that server's answer.
   */
  const servers = new Map<string, Promise<string[]>>();
  function symbolsVia(command: string, args: string[]): Promise<string[]> {
    const key = JSON.stringify(argv(command, args));
    const answer = servers.get(key) ?? symbolsOf(command, args);
    servers.set(key, answer);
    return answer;
  }

  async function symbolsOf(command: string, args: string[]): Promise<string[]> {
    const child = spawn(process.execPath, argv(command, args), {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, AIP_SOCKET: agency.socket },
    });
    const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    conn.listen();
    try {
      await conn.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri: pathToFileURL(ws.root).href,
        capabilities: {},
        workspaceFolders: null,
      });
      await conn.sendNotification(InitializedNotification.type, {});
      const uri = pathToFileURL(join(ws.root, "src/math.ts")).href;
      await conn.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "typescript", version: 1, text: MATH_TS },
      });
      const symbols = (await conn.sendRequest(DocumentSymbolRequest.type, {
        textDocument: { uri },
      })) as DocumentSymbol[];
      await conn.sendRequest(ShutdownRequest.type);
      await conn.sendNotification(ExitNotification.type);
      return symbols.map((s) => s.name);
    } finally {
      conn.dispose();
      child.kill();
    }
  }

  it("the VS Code (generic LSP client) block starts a server that answers", async () => {
    const cfg = JSON.parse(readmeBlock("Use it from your editor", "json")) as {
      command: string;
      args: string[];
      languages: string[];
    };
    expect(cfg.languages).toEqual(expect.arrayContaining(["typescript", "python"]));
    expect(await symbolsVia(cfg.command, cfg.args)).toEqual(["add", "Counter", "total"]);
  }, 60_000);

  it("the Helix block's command and args start a server that answers", async () => {
    const toml = readmeBlock("Use it from your editor", "toml");
    const command = /^command = "([^"]+)"$/m.exec(toml)![1]!;
    const args = JSON.parse(/^args = (\[.*\])$/m.exec(toml)![1]!) as string[];
    expect(toml).toMatch(/language-servers = \[.*"aip"\]/);
    expect(toml).toMatch(/name = "python"\nlanguage-servers = \[.*"aip"\]/);
    expect(await symbolsVia(command, args)).toEqual(["add", "Counter", "total"]);
  }, 60_000);

  it("the VS Code Generic LSP Client settings start a server that answers", async () => {
    const section = readFileSync(join(ROOT, "docs/integrations.md"), "utf8");
    const block = /```json\n(\{\n {2}"glspc[\s\S]*?)```/.exec(section)![1]!;
    const cfg = JSON.parse(block) as Record<string, string | string[]>;
    expect(cfg["glspc.server.languageId"]).toEqual(expect.arrayContaining(["typescript", "python"]));
    expect(
      await symbolsVia(cfg["glspc.server.command"] as string, cfg["glspc.server.commandArguments"] as string[]),
    ).toEqual(["add", "Counter", "total"]);
  }, 60_000);

  it("the Emacs eglot block's command list starts a server that answers", async () => {
    const elisp = readmeBlock("Use it from your editor", "elisp");
    expect(elisp).toMatch(/eglot-server-programs/);
    expect(elisp).toMatch(/typescript-ts-mode[^.]*python-ts-mode/);
    const list = /\. \(("[^)]*")\)/.exec(elisp)![1]!;
    const [command, ...args] = [...list.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
    expect(await symbolsVia(command!, args)).toEqual(["add", "Counter", "total"]);
  }, 60_000);

  it("the MCP configuration starts a server whose tools answer", async () => {
    const cfg = JSON.parse(readmeBlock("Use it from a coding agent", "json")) as {
      mcpServers: Record<string, { command: string; args: string[] }>;
    };
    const server = cfg.mcpServers.aip!;
    const client = new Client({ name: "readme", version: "1.0.0" });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: argv(server.command, server.args),
        cwd: ws.root,
        env: { ...(process.env as Record<string, string>), AIP_SOCKET: agency.socket },
        stderr: "pipe",
      }),
    );
    try {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual([
        "complete_at",
        "diagnose",
        "generate_tests",
        "search_workspace",
        "summarize_file",
      ]);
      const r = (await client.callTool({ name: "summarize_file", arguments: { path: "src/math.ts" } })) as unknown as {
        structuredContent: { outline: { functions: { name: string }[] } };
      };
      expect(r.structuredContent.outline.functions.map((f) => f.name)).toEqual(["add"]);
    } finally {
      await client.close();
    }
  }, 60_000);
});

/** `aip lsp` as a real child process over stdio, driven with vscode-languageserver-protocol's client-side connection. */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CancellationTokenSource,
  CodeActionRequest,
  CodeActionResolveRequest,
  CompletionRequest,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentSymbolRequest,
  ExitNotification,
  HoverRequest,
  InitializeRequest,
  InitializedNotification,
  InlineCompletionRequest,
  LogMessageNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgressCreateRequest,
  WorkspaceSymbolRequest,
  createProtocolConnection,
  type CodeAction,
  type CompletionList,
  type DocumentSymbol,
  type ProtocolConnection,
  type SymbolInformation,
  type TextDocumentEdit,
  type TextEdit,
  type WorkspaceEdit,
} from "vscode-languageserver-protocol/node";
import { tempDir } from "../../helpers.js";
import type { Agency } from "../../orchestrator/harness.js";
import { AIP, MATH_TS, bundledAgency, workspace } from "./bridge-helpers.js";

type Json = Record<string, any>;

interface Lsp {
  conn: ProtocolConnection;
  child: ChildProcess;
  logs: string[];
  progress: Json[];
  stop(): Promise<number | null>;
}

/** Spawn `aip lsp` and complete the initialize handshake. */
async function startLsp(
  args: string[],
  rootUri: string | null,
  initializationOptions: Json = {},
): Promise<Lsp & { init: Json }> {
  const child = spawn(process.execPath, [AIP, "lsp", "--stdio", ...args], { stdio: ["pipe", "pipe", "pipe"] });
  const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const logs: string[] = [];
  const progress: Json[] = [];
  conn.onNotification(LogMessageNotification.type, (m: { message: string }) => {
    logs.push(m.message);
  });
  conn.onRequest(WorkDoneProgressCreateRequest.method, () => null);
  conn.onNotification("$/progress", (p: Json) => {
    progress.push({ ...(p.value as Json), token: p.token });
  });
  conn.listen();
  const init = await conn.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri,
    capabilities: { window: { workDoneProgress: true } },
    initializationOptions,
    workspaceFolders: rootUri ? [{ uri: rootUri, name: "w" }] : null,
  });
  await conn.sendNotification(InitializedNotification.type, {});
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    conn,
    child,
    logs,
    progress,
    init: init as Json,
    async stop() {
      await conn.sendRequest(ShutdownRequest.type);
      await conn.sendNotification(ExitNotification.type);
      const code = await exited;
      conn.dispose();
      return code;
    },
  };
}

/** An automatic inline completion request at the end of `text`, the document's content. */
async function inlineAtEnd(
  lsp: Lsp,
  uri: string,
  text: string,
): Promise<{ at: { line: number; character: number }; out: Json }> {
  const lines = text.split("\n");
  const at = { line: lines.length - 1, character: lines.at(-1)!.length };
  const out = (await lsp.conn.sendRequest(InlineCompletionRequest.type, {
    textDocument: { uri },
    position: at,
    context: { triggerKind: 2 },
  })) as Json;
  return { at, out };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 20_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

/**
 * A byte proxy on a Unix socket in front of the agency's. While held, what clients send is kept back (and
 * dropped if they hang up first); `heldCalls(action)` counts the AIP calls for an action that were held.
 */
async function holdingProxy(
  target: string,
  path: string,
): Promise<{ path: string; hold(on: boolean): void; heldCalls(action: string): number; close(): Promise<void> }> {
  let holding = false;
  let heldText = "";
  const queues = new Map<Socket, Buffer[]>();
  const upstreams = new Map<Socket, Socket>();
  const server = createServer((client) => {
    const upstream = connect(target);
    upstreams.set(client, upstream);
    queues.set(client, []);
    upstream.pipe(client);
    client.on("data", (chunk: Buffer) => {
      if (!holding) return void upstream.write(chunk);
      heldText += chunk.toString("utf8");
      queues.get(client)!.push(chunk);
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      queues.delete(client);
      upstreams.delete(client);
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return {
    path,
    hold(on) {
      holding = on;
      if (on) return;
      for (const [client, queue] of queues) for (const chunk of queue.splice(0)) upstreams.get(client)!.write(chunk);
    },
    heldCalls: (action) => heldText.split(`"action":"${action}"`).length - 1,
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of queues.keys()) client.destroy();
        server.close(() => resolve());
      }),
  };
}

describe("aip lsp over stdio", () => {
  let agency: Agency;
  let ws: { root: string; cleanup: () => void };
  let lsp: Lsp & { init: Json };
  let uri: string;
  beforeAll(async () => {
    agency = await bundledAgency(["summarize", "search", "testgen", "complete-lite"], true);
    ws = workspace();
    // The tiny test model writes noise: inline_best_effort lets its candidate through the syntax check. Its
    // inference gets 20 s, not the default 800 ms, so that the suite's load on the cores cannot time it out.
    lsp = await startLsp(["--socket", agency.socket], pathToFileURL(ws.root).href, {
      inline_best_effort: true,
      inline_timeout_ms: 20_000,
    });
    uri = pathToFileURL(join(ws.root, "src/math.ts")).href;
    await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "typescript", version: 1, text: MATH_TS },
    });
  }, 150_000);
  afterAll(async () => {
    if (lsp) expect(await lsp.stop()).toBe(0);
    await agency?.stop();
    ws?.cleanup();
  });

  it("announces its capabilities and the agency it uses on the log channel", async () => {
    expect(lsp.init.capabilities).toMatchObject({
      textDocumentSync: 2,
      inlineCompletionProvider: true,
      documentSymbolProvider: true,
      hoverProvider: true,
      workspaceSymbolProvider: true,
      completionProvider: { triggerCharacters: ["."] },
    });
    await until(() => lsp.logs.length > 0, "log message");
    expect(lsp.logs[0]).toBe(`aip lsp: using the agency on ${agency.socket}`);
  });

  it("completion: complete-lite items with kinds and text edits, LSP's 0-based lines converted; incremental and full sync", async () => {
    // Incremental: type "this.c" on a new line inside increment (line 9, 0-based 8).
    await lsp.conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 2 },
      contentChanges: [
        { range: { start: { line: 8, character: 4 }, end: { line: 8, character: 4 } }, text: "this.c\n    " },
      ],
    });
    const list = (await lsp.conn.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position: { line: 8, character: 10 },
    })) as CompletionList;
    const count = list.items.find((i) => i.label === "count")!;
    expect(count).toMatchObject({
      kind: 10,
      textEdit: { range: { start: { line: 8, character: 9 }, end: { line: 8, character: 10 } }, newText: "count" },
    });
    expect(list.items.map((i) => i.label)).not.toContain("add");
    // Full sync: the whole text replaced; `ad` at the end completes to the function add.
    const full = `${MATH_TS}const again = ad`;
    await lsp.conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 3 },
      contentChanges: [{ text: full }],
    });
    const lines = full.split("\n");
    const at = { line: lines.length - 1, character: lines.at(-1)!.length };
    const list2 = (await lsp.conn.sendRequest(CompletionRequest.type, {
      textDocument: { uri },
      position: at,
    })) as CompletionList;
    expect(list2.items[0]).toMatchObject({
      label: "add",
      kind: 3,
      textEdit: { range: { start: { line: at.line, character: 14 }, end: at }, newText: "add" },
    });
  });

  it("inline completion: the model engine's text at the cursor (best effort, as initialised)", async () => {
    const { at, out } = await inlineAtEnd(lsp, uri, `${MATH_TS}const again = ad`);
    expect(out.items, lsp.logs.join("\n")).toHaveLength(1);
    expect(typeof out.items[0].insertText).toBe("string");
    expect(out.items[0].range).toEqual({ start: at, end: at });
  });

  it("inline completion: a model that misses inline_timeout_ms gives an empty list and a log line, not an error", async () => {
    const rootUri = pathToFileURL(ws.root).href;
    const quick = await startLsp(["--socket", agency.socket], rootUri, {
      inline_best_effort: true,
      inline_timeout_ms: 1,
    });
    const odd = await startLsp(["--socket", agency.socket], rootUri, { inline_timeout_ms: "soon" });
    try {
      const text = `${MATH_TS}const again = ad`;
      await quick.conn.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "typescript", version: 1, text },
      });
      const { out } = await inlineAtEnd(quick, uri, text);
      expect(out).toEqual({ items: [] });
      expect(quick.logs.join("\n")).toMatch(/no inline completion: AIP_ERR_MODEL_TIMEOUT/);
      await until(() => odd.logs.some((l) => l.includes("inline_timeout_ms")), "the warning about inline_timeout_ms");
      expect(odd.logs.join("\n")).toContain(
        'initializationOptions.inline_timeout_ms must be an integer from 1 to 60000, got "soon"',
      );
    } finally {
      expect(await quick.stop()).toBe(0);
      expect(await odd.stop()).toBe(0);
    }
  });

  it("document symbols and hover from summarize", async () => {
    await lsp.conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 4 },
      contentChanges: [{ text: MATH_TS }],
    });
    const symbols = (await lsp.conn.sendRequest(DocumentSymbolRequest.type, {
      textDocument: { uri },
    })) as DocumentSymbol[];
    expect(symbols.map((s) => [s.name, s.kind, s.range.start.line, s.range.end.line])).toEqual([
      ["add", 12, 0, 3],
      ["Counter", 5, 5, 11],
      ["total", 14, 13, 13],
    ]);
    expect(symbols[1]!.children!.map((c) => [c.name, c.kind, c.range.start.line])).toEqual([
      ["count", 7, 6],
      ["increment", 6, 7],
    ]);
    const hover = (await lsp.conn.sendRequest(HoverRequest.type, {
      textDocument: { uri },
      position: { line: 2, character: 4 },
    })) as Json;
    expect(hover.contents.kind).toBe("markdown");
    expect(hover.contents.value).toContain("export function add(a: number, b: number): number");
    expect(hover.range.start.line).toBe(0);
    expect(
      await lsp.conn.sendRequest(HoverRequest.type, { textDocument: { uri }, position: { line: 13, character: 2 } }),
    ).toBeNull();
  });

  it("workspace symbols from search, with work-done progress while it indexes", async () => {
    lsp.progress.length = 0;
    const hits = (await lsp.conn.sendRequest(WorkspaceSymbolRequest.type, {
      query: "counter increment",
    })) as SymbolInformation[];
    expect(hits[0]).toMatchObject({
      name: "increment",
      location: { uri: pathToFileURL(join(ws.root, "src/math.ts")).href, range: { start: { line: 7 } } },
      containerName: "src/math.ts",
    });
    // Only this search's progress: the type checker's loading may report on its own token meanwhile.
    const begin = lsp.progress.find((p) => p.kind === "begin" && p.title === "Searching the workspace");
    expect(begin, JSON.stringify(lsp.progress)).toBeDefined();
    expect(lsp.progress.filter((p) => p.token === begin!.token).map((p) => p.kind)).toEqual(["begin", "end"]);
  });

  it("code action: listed without running anything; Generate tests, once picked, creates the test file, then extends it", async () => {
    const listed = (await lsp.conn.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range: { start: { line: 2, character: 4 }, end: { line: 2, character: 4 } },
      context: { diagnostics: [] },
    })) as Json[];
    expect(listed).toHaveLength(1);
    expect(listed[0]!.edit).toBeUndefined();
    const actions = [(await lsp.conn.sendRequest(CodeActionResolveRequest.type, listed[0]! as CodeAction)) as Json];
    expect(actions[0]!.title).toBe("Generate tests for add (test/src/math.test.ts)");
    const testUri = pathToFileURL(join(ws.root, "test/src/math.test.ts")).href;
    const edit = actions[0]!.edit as WorkspaceEdit;
    expect(edit.documentChanges![0]).toEqual({ kind: "create", uri: testUri, options: { ignoreIfExists: true } });
    const created = ((edit.documentChanges![1] as TextDocumentEdit).edits[0] as TextEdit).newText;
    expect(created).toContain('import { add } from "../../src/math.js";');
    expect(created).toContain("add(");
    // The file exists now (as the editor would have applied it): the action extends it.
    mkdirSync(join(ws.root, "test/src"));
    writeFileSync(
      join(ws.root, "test/src/math.test.ts"),
      'import { describe, it, expect } from "vitest";\n\ndescribe("old", () => {});\n',
    );
    const listedAgain = (await lsp.conn.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range: { start: { line: 8, character: 6 }, end: { line: 8, character: 6 } },
      context: { diagnostics: [] },
    })) as Json[];
    const again = [(await lsp.conn.sendRequest(CodeActionResolveRequest.type, listedAgain[0]! as CodeAction)) as Json];
    const edits = ((again[0]!.edit as WorkspaceEdit).documentChanges![0] as TextDocumentEdit).edits as TextEdit[];
    expect(again[0]!.title).toBe("Generate tests for increment (test/src/math.test.ts)");
    expect(edits[0]!.newText).toBe('import { Counter } from "../../src/math.js";\n');
    expect(edits.at(-1)!.range.start).toEqual({ line: 3, character: 0 });
    expect(edits.at(-1)!.newText).toMatch(/^\ndescribe\(/);
  });

  it("document symbols of a Python buffer: classes with methods, functions, constants", async () => {
    const pyUri = pathToFileURL(join(ws.root, "src/geo.py")).href;
    await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: {
        uri: pyUri,
        languageId: "python",
        version: 1,
        text: [
          "import math",
          "",
          "LIMIT = 10",
          "",
          "class Circle:",
          '    """A circle."""',
          "    def __init__(self, r):",
          "        self.r = r",
          "",
          "    def area(self):",
          "        return math.pi * self.r ** 2",
          "",
          "async def fetch(url):",
          "    return url",
          "",
        ].join("\n"),
      },
    });
    const symbols = (await lsp.conn.sendRequest(DocumentSymbolRequest.type, {
      textDocument: { uri: pyUri },
    })) as DocumentSymbol[];
    expect(symbols.map((s) => [s.name, s.kind, s.range.start.line])).toEqual([
      ["LIMIT", 14, 2],
      ["Circle", 5, 4],
      ["fetch", 12, 12],
    ]);
    expect(symbols[1]!.children!.map((c) => [c.name, c.range.start.line])).toEqual([
      ["__init__", 6],
      ["area", 9],
    ]);
  });

  it("$/cancelRequest and a newer document version cancel the in-flight request", async () => {
    // A proxy in front of the agency holds the calls back, so that each request is surely in flight when
    // its cancellation comes: an answer from the agency's cache could otherwise win the race.
    const dir = tempDir("aip-lsp-hold-");
    const proxy = await holdingProxy(agency.socket, join(dir.dir, "hold.sock"));
    const held = await startLsp(["--socket", proxy.path], pathToFileURL(ws.root).href);
    try {
      await held.conn.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "typescript", version: 1, text: MATH_TS },
      });
      proxy.hold(true);
      const source = new CancellationTokenSource();
      const pending = held.conn.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } }, source.token);
      await until(() => proxy.heldCalls("summarize") === 1, "the first call held");
      source.cancel();
      await expect(pending).rejects.toMatchObject({ code: -32800 });
      const stale = held.conn.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } });
      await until(() => proxy.heldCalls("summarize") === 2, "the second call held");
      await held.conn.sendNotification(DidChangeTextDocumentNotification.type, {
        textDocument: { uri, version: 5 },
        contentChanges: [{ text: `${MATH_TS}\n` }],
      });
      await expect(stale).rejects.toMatchObject({ code: -32800, message: `Cancelled: summarize on ${uri}` });
      // The server goes on answering.
      proxy.hold(false);
      expect(
        ((await held.conn.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } })) as DocumentSymbol[])
          .length,
      ).toBe(3);
    } finally {
      expect(await held.stop()).toBe(0);
      await proxy.close();
      dir.cleanup();
    }
  });

  it("a request on a document never opened is a clear error; an AIP problem comes back with its code and detail in data", async () => {
    const never = pathToFileURL(join(ws.root, "src/never.ts")).href;
    await expect(
      lsp.conn.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: never } }),
    ).rejects.toMatchObject({
      code: -32602,
      message: `Document ${never} is not open: send textDocument/didOpen before requests on it`,
    });
    // Over the agency's 1 MiB body limit: AIP_ERR_PAYLOAD_TOO_LARGE, as an LSP RequestFailed.
    const big = pathToFileURL(join(ws.root, "src/big.ts")).href;
    await lsp.conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: big, languageId: "typescript", version: 1, text: "export const a = 1;\n".repeat(60_000) },
    });
    const failure = (await lsp.conn.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri: big } }).then(
      () => undefined,
      (e: unknown) => e,
    )) as Json;
    expect(failure.code).toBe(-32803);
    expect(failure.data).toMatchObject({ type: "AIP_ERR_PAYLOAD_TOO_LARGE", status: 413 });
    expect(failure.message).toBe(`${failure.data.type}: ${failure.data.detail}`);
  });
});

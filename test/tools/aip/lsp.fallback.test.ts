/**
 * The editor fallback: after three consecutive AIP_ERR_UNAVAILABLE answers `aip lsp` serves document
 * symbols and completion from the model-free engines in its own process, tells the user once, and
 * switches back (telling the user) when the agency answers again. The agency here is a real HTTP
 * server on a Unix socket whose answers the test switches.
 */
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CompletionRequest,
  DidOpenTextDocumentNotification,
  DocumentSymbolRequest,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  ShowMessageNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
  type CompletionList,
  type DocumentSymbol,
} from "vscode-languageserver-protocol/node";
import { tempDir } from "../../helpers.js";
import { AIP, MATH_TS } from "./bridge-helpers.js";

const t = tempDir("aiplfb-");
const socket = join(t.dir, "agency.sock");
let down = true;
let server: Server;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/healthz") return void res.end("{}");
      res.setHeader("content-type", "application/json");
      if (down) {
        res.statusCode = 503;
        return void res.end(
          JSON.stringify({
            status: "error",
            error: {
              type: "AIP_ERR_UNAVAILABLE",
              title: "Unavailable",
              status: 503,
              detail: "no agent",
              suggestion: "",
            },
          }),
        );
      }
      const fn = { name: "fromAgency", line_start: 1, line_end: 1, text: "function fromAgency()" };
      res.end(
        JSON.stringify({
          status: "success",
          payload: { outline: { functions: [fn], classes: [], types: [], consts: [] } },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  t.cleanup();
});

describe("aip lsp's editor fallback", () => {
  it("serves symbols and completion locally after three unavailable answers, tells the user once, and switches back", async () => {
    const child = spawn(process.execPath, [AIP, "lsp", "--socket", socket], { stdio: ["pipe", "pipe", "pipe"] });
    const exited = new Promise((resolve) => child.once("exit", resolve));
    const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const messages: string[] = [];
    conn.onNotification(ShowMessageNotification.type, (m: { message: string }) => {
      messages.push(m.message);
    });
    conn.listen();
    try {
      await conn.sendRequest(InitializeRequest.type, { processId: process.pid, rootUri: null, capabilities: {} });
      await conn.sendNotification(InitializedNotification.type, {});
      const uri = pathToFileURL(join(t.dir, "math.ts")).href;
      await conn.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "typescript", version: 1, text: MATH_TS },
      });
      const symbols = () =>
        conn.sendRequest(DocumentSymbolRequest.type, { textDocument: { uri } }) as Promise<DocumentSymbol[]>;
      // Two unavailable answers: errors, as before.
      for (let i = 0; i < 2; i++) await expect(symbols()).rejects.toThrow(/AIP_ERR_UNAVAILABLE/);
      expect(messages).toEqual([]);
      // The third: answered from the local outline, and the user is told once.
      expect((await symbols()).map((s) => s.name)).toEqual(["add", "Counter", "total"]);
      expect((await symbols()).map((s) => s.name)).toEqual(["add", "Counter", "total"]);
      const lines = MATH_TS.split("\n");
      const completion = (await conn.sendRequest(CompletionRequest.type, {
        textDocument: { uri },
        position: { line: lines.length - 1, character: 0 },
      })) as CompletionList;
      expect(completion.items.map((i) => i.label)).toEqual(expect.arrayContaining(["add", "Counter", "total"]));
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(
        /unavailable 3 times in a row; completion and document symbols now come from the local/,
      );
      // The agency is back: its answer, and one message saying so.
      down = false;
      expect((await symbols()).map((s) => s.name)).toEqual(["fromAgency"]);
      expect(messages).toHaveLength(2);
      expect(messages[1]).toMatch(/answers again/);
    } finally {
      await conn.sendRequest(ShutdownRequest.type);
      await conn.sendNotification(ExitNotification.type);
      await exited;
      conn.dispose();
    }
  }, 60_000);
});

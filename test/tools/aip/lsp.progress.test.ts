/**
 * `aip lsp` while complete-lite's checker loads a workspace: the first member completion still lists
 * what the declarations say (an imported class's members), and the editor sees a work-done progress
 * ($/progress begin, reports, end) until the checker answers; the next completion is the checker's.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CompletionRequest,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgressCreateRequest,
  createProtocolConnection,
  type CompletionList,
} from "vscode-languageserver-protocol/node";
import type { Agency } from "../../orchestrator/harness.js";
import { until } from "../../orchestrator/harness.js";
import { AIP, bundledAgency, workspace } from "./bridge-helpers.js";

type Json = Record<string, any>;

let agency: Agency;
let ws: ReturnType<typeof workspace>;
beforeAll(async () => {
  agency = await bundledAgency(["complete-lite"]);
  ws = workspace();
  // Enough files that loading them takes longer than a completion's budget for the checker.
  for (let i = 0; i < 300; i++)
    writeFileSync(
      join(ws.root, "src", `m${i}.ts`),
      `import { Counter } from "./math.js";\nexport function use${i}(c: Counter): number {\n  return c.increment(${i});\n}\n`,
    );
}, 120_000);
afterAll(async () => {
  await agency.stop();
  ws.cleanup();
});

describe("aip lsp while the checker loads", () => {
  it("answers members from the declarations and reports $/progress until the checker answers", async () => {
    const child = spawn(process.execPath, [AIP, "lsp", "--stdio", "--socket", agency.socket], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const created: string[] = [];
    const progress: Json[] = [];
    conn.onRequest(WorkDoneProgressCreateRequest.method, (p: { token: string }) => {
      created.push(String(p.token));
      return null;
    });
    conn.onNotification("$/progress", (p: Json) => {
      progress.push(p.value as Json);
    });
    conn.listen();
    try {
      const rootUri = pathToFileURL(ws.root).href;
      await conn.sendRequest(InitializeRequest.type, {
        processId: process.pid,
        rootUri,
        capabilities: { window: { workDoneProgress: true } },
        workspaceFolders: [{ uri: rootUri, name: "w" }],
      });
      await conn.sendNotification(InitializedNotification.type, {});
      const text = 'import { Counter } from "./math.js";\nconst c = new Counter();\nc.';
      const uri = pathToFileURL(join(ws.root, "src/main.ts")).href;
      await conn.sendNotification(DidOpenTextDocumentNotification.type, {
        textDocument: { uri, languageId: "typescript", version: 1, text },
      });
      const at = { textDocument: { uri }, position: { line: 2, character: 2 } };
      const first = (await conn.sendRequest(CompletionRequest.type, at)) as CompletionList;
      // The syntactic engine's answer, from math.ts's class: never nothing.
      expect(first.isIncomplete).toBe(true);
      expect(first.items.map((i) => i.label).sort()).toEqual(["count", "increment"]);
      await until(() => progress.some((p) => p.kind === "end"), 120_000, "the progress to end");
      expect(created).toHaveLength(1);
      expect(progress[0]).toMatchObject({ kind: "begin", title: "aip: loading types", cancellable: false });
      expect(String(progress[0]!.message)).toMatch(/the type checker is loading the workspace/);
      expect(progress.at(-1)).toEqual({ kind: "end" });
      expect(progress.filter((p) => p.kind === "report").at(-1)).toEqual({
        kind: "report",
        message: "the type checker is ready",
      });
      // Now the checker answers: a complete list, with the members of Counter from its type.
      const typed = (await conn.sendRequest(CompletionRequest.type, at)) as CompletionList;
      expect(typed.isIncomplete).toBe(false);
      expect(typed.items.map((i) => i.label)).toEqual(expect.arrayContaining(["count", "increment"]));
      expect(progress.filter((p) => p.kind === "begin")).toHaveLength(1);
    } finally {
      await conn.sendRequest(ShutdownRequest.type);
      await conn.sendNotification(ExitNotification.type);
      expect(await exited).toBe(0);
      conn.dispose();
    }
  }, 240_000);
});

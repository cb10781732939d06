/** `aip lsp` publishing the diagnose agent's errors for open documents and offering its verified fixes as quick fixes. */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CodeActionRequest,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  PublishDiagnosticsNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
  type CodeAction,
  type PublishDiagnosticsParams,
} from "vscode-languageserver-protocol/node";
import type { Agency } from "../../orchestrator/harness.js";
import { shownWith } from "../../../tools/aip/lsp-diagnose.js";
import { AIP, bundledAgency, workspace } from "./bridge-helpers.js";

const BUFFER = `export function add(a: number, b: number): number {
  return a + b;
}
export const three = ad(1, 2);
`;

describe("aip lsp: diagnostics and quick fixes from the diagnose agent", () => {
  let agency: Agency;
  let ws: { root: string; cleanup: () => void };
  beforeAll(async () => {
    agency = await bundledAgency(["diagnose"]);
    ws = workspace();
    writeFileSync(
      join(ws.root, "tsconfig.json"),
      JSON.stringify({ compilerOptions: { strict: true }, include: ["src"] }),
    );
  }, 150_000);
  afterAll(async () => {
    await agency?.stop();
    ws?.cleanup();
  });

  it("publishes the errors of an open document and offers the verified fix as the preferred quick fix", async () => {
    const child = spawn(process.execPath, [AIP, "lsp", "--stdio", "--socket", agency.socket], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const published: PublishDiagnosticsParams[] = [];
    let notify: () => void = () => undefined;
    conn.onNotification(PublishDiagnosticsNotification.type, (p: PublishDiagnosticsParams) => {
      published.push(p);
      notify();
    });
    conn.listen();
    const rootUri = pathToFileURL(ws.root).href;
    const init = (await conn.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri,
      capabilities: {},
      workspaceFolders: [{ uri: rootUri, name: "w" }],
    })) as { capabilities: { codeActionProvider: { codeActionKinds: string[] } } };
    expect(init.capabilities.codeActionProvider.codeActionKinds).toContain("quickfix");
    await conn.sendNotification(InitializedNotification.type, {});
    const uri = pathToFileURL(join(ws.root, "src/main.ts")).href;
    const next = (version: number) =>
      new Promise<PublishDiagnosticsParams>((resolve) => {
        notify = () => {
          // Version 1 is published first from the parser alone while the checker loads (empty here).
          const p = published.find(
            (x) => x.uri === uri && x.version === version && (version > 1 || x.diagnostics.length > 0),
          );
          if (p) resolve(p);
        };
        notify();
      });
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "typescript", version: 1, text: BUFFER },
    });
    const first = await next(1);
    expect(first.diagnostics).toEqual([
      {
        range: { start: { line: 3, character: 21 }, end: { line: 3, character: 23 } },
        severity: 1,
        code: "TS2304",
        source: "aip diagnose",
        message: "Cannot find name 'ad'.",
      },
    ]);
    const actions = (await conn.sendRequest(CodeActionRequest.type, {
      textDocument: { uri },
      range: { start: { line: 3, character: 22 }, end: { line: 3, character: 22 } },
      context: { diagnostics: first.diagnostics, only: ["quickfix"] },
    })) as CodeAction[];
    const quick = actions.filter((a) => a.kind === "quickfix");
    expect(quick[0]).toMatchObject({
      title: "Change spelling to 'add'",
      isPreferred: true,
      edit: {
        changes: {
          [uri]: [{ range: { start: { line: 3, character: 21 }, end: { line: 3, character: 23 } }, newText: "add" }],
        },
      },
    });
    // The fixed buffer: its diagnostics are cleared.
    await conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 3, character: 21 }, end: { line: 3, character: 23 } }, text: "add" }],
    });
    expect((await next(2)).diagnostics).toEqual([]);

    // A long document edited: the edited region's answer is published first, the error outside it
    // kept from before, then the whole file's.
    let long = "";
    for (let i = 0; i < 150; i++)
      long += `export function f${i}(input: string): number {\n  const size = input.length;\n  return ${i === 3 ? '"three"' : "size"};\n}\n`;
    const longUri = pathToFileURL(join(ws.root, "src/long.ts")).href;
    const publishes = (version: number, n: number) =>
      new Promise<PublishDiagnosticsParams[]>((resolve) => {
        notify = () => {
          const ps = published.filter((x) => x.uri === longUri && x.version === version && x.diagnostics.length > 0);
          if (ps.length >= n) resolve(ps);
        };
        notify();
      });
    await conn.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri: longUri, languageId: "typescript", version: 1, text: long },
    });
    const [opened] = await publishes(1, 1);
    const three = {
      range: { start: { line: 14, character: 2 }, end: { line: 14, character: 8 } },
      severity: 1,
      code: "TS2322",
      source: "aip diagnose",
      message: "Type 'string' is not assignable to type 'number'.",
    };
    expect(opened!.diagnostics).toEqual([three]);
    await conn.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri: longUri, version: 2 },
      contentChanges: [
        { range: { start: { line: 402, character: 9 }, end: { line: 402, character: 13 } }, text: "sise" },
      ],
    });
    const sise = {
      range: { start: { line: 402, character: 9 }, end: { line: 402, character: 13 } },
      severity: 1,
      code: "TS2304",
      source: "aip diagnose",
      message: "Cannot find name 'sise'.",
    };
    const [region, full] = await publishes(2, 2);
    expect(region!.diagnostics).toEqual([three, sise]);
    expect(full!.diagnostics).toEqual([three, sise]);
    await conn.sendRequest(ShutdownRequest.type);
    await conn.sendNotification(ExitNotification.type);
    conn.dispose();
  }, 120_000);
});

describe("shownWith: what a region answer publishes", () => {
  const diag = (line: number, code: string) => ({
    range: { start: { line, character: 2 }, end: { line, character: 6 } },
    severity: 1 as const,
    code,
    source: "aip diagnose",
    message: `m${line}`,
  });
  const before = {
    lines: 100,
    diagnostics: [diag(5, "TS2322"), diag(50, "TS2304"), diag(80, "TS2345"), diag(90, "TS1005")],
  };

  it("keeps the errors outside the checked ranges, moves those after them by the lines added, drops those inside", () => {
    const payload = {
      coverage: "region" as const,
      // Lines 48-53 (1-based) checked again; the edit added two lines.
      checked_ranges: [{ start: { line: 48, column: 0 }, end: { line: 53, column: 1 } }],
      diagnostics: [
        {
          file_path: "a.ts",
          line: 51,
          column: 2,
          range: { start: { line: 51, column: 2 }, end: { line: 51, column: 6 } },
          code: "TS2552",
          message: "new",
          severity: "error" as const,
          fixes: [],
        },
      ],
    };
    const shown = shownWith(before, 102, payload);
    expect(shown.map((d) => `${String(d.code)}@${d.range.start.line}`)).toEqual(["TS2322@5", "TS2345@82", "TS2552@50"]);
  });

  it("a whole file's answer replaces everything", () => {
    const shown = shownWith(before, 100, { coverage: "file", diagnostics: [] });
    expect(shown).toEqual([]);
  });
});

/**
 * `aip lsp` attacked through a hostile workspace, as a real process against a real agency: listing code
 * actions runs nothing (a planted runner never runs), a file outside the editor's folders gets no
 * workspace of its own, and a test path that is a link to /etc/passwd or /dev/zero is never read.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CodeActionRequest,
  CodeActionResolveRequest,
  DidOpenTextDocumentNotification,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  createProtocolConnection,
  type CodeAction,
  type ProtocolConnection,
} from "vscode-languageserver-protocol/node";
import { tempDir } from "../helpers.js";
import type { Agency } from "../orchestrator/harness.js";
import { AIP, MATH_TS, bundledAgency, workspace } from "../tools/aip/bridge-helpers.js";

type Json = Record<string, any>;

let agency: Agency;
const ws = workspace();
const elsewhere = tempDir("aipsec-lsp-out-");
const marker = join(elsewhere.dir, "listed-marker");
let conn: ProtocolConnection;
let lspPid: number;
let exited: Promise<unknown>;

beforeAll(async () => {
  // The workspace's "vitest" would leave a marker if anything ran it.
  mkdirSync(join(ws.root, "node_modules", ".bin"), { recursive: true });
  writeFileSync(join(ws.root, "node_modules", ".bin", "vitest"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
  agency = await bundledAgency(["testgen"]);
  const child = spawn(process.execPath, [AIP, "lsp", "--stdio", "--socket", agency.socket], {
    stdio: ["pipe", "pipe", "ignore"],
  });
  lspPid = child.pid!;
  exited = new Promise((r) => child.once("exit", r));
  conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  conn.listen();
  const rootUri = pathToFileURL(ws.root).href;
  await conn.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri,
    capabilities: {},
    workspaceFolders: [{ uri: rootUri, name: "w" }],
  });
  await conn.sendNotification(InitializedNotification.type, {});
}, 120_000);

afterAll(async () => {
  await conn.sendRequest(ShutdownRequest.type);
  await conn.sendNotification(ExitNotification.type);
  await exited;
  conn.dispose();
  await agency.stop();
  ws.cleanup();
  elsewhere.cleanup();
});

async function open(path: string, text: string): Promise<string> {
  const uri = pathToFileURL(path).href;
  await conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "typescript", version: 1, text },
  });
  return uri;
}

async function list(uri: string): Promise<Json[]> {
  return (await conn.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: { start: { line: 1, character: 17 }, end: { line: 1, character: 17 } },
    context: { diagnostics: [] },
  })) as Json[];
}

function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) / 1024;
}

describe("aip lsp and a hostile workspace", () => {
  it("lists code actions without running anything, every time", async () => {
    const uri = await open(join(ws.root, "src/math.ts"), MATH_TS);
    for (let i = 0; i < 3; i++) {
      const actions = await list(uri);
      expect(actions).toHaveLength(1);
      expect(actions[0]!.edit).toBeUndefined();
      expect(existsSync(marker)).toBe(false);
    }
  });

  it("gives a file outside the workspace folders no workspace and no action", async () => {
    const uri = await open(join(elsewhere.dir, "lib.ts"), MATH_TS);
    expect(await list(uri)).toEqual([]);
    expect(existsSync(marker)).toBe(false);
  });

  it("never reads a test path that links to /etc/passwd or /dev/zero", async () => {
    const uri = await open(join(ws.root, "src/math.ts"), MATH_TS);
    const testFile = join(ws.root, "test/src/math.test.ts");
    mkdirSync(join(ws.root, "test/src"), { recursive: true });
    const passwd = readFileSync("/etc/passwd", "utf8").split("\n")[0]!;
    for (const target of ["/etc/passwd", "/dev/zero", "/etc/passwd", "/dev/zero"]) {
      symlinkSync(target, testFile);
      const [listed] = await list(uri);
      const resolved = (await conn.sendRequest(CodeActionResolveRequest.type, listed as CodeAction)) as Json;
      const text = JSON.stringify(resolved);
      expect(text).not.toContain(passwd);
      // No edit of a file that is not the workspace's own regular file.
      expect(resolved.edit?.documentChanges?.some((c: Json) => c.textDocument?.version !== null) ?? false).toBe(false);
      expect(rssMb(lspPid)).toBeLessThan(300);
      unlinkSync(testFile);
    }
    expect(existsSync(marker)).toBe(false);
  });
});

/**
 * `aip lsp`'s embedded agency as an editor meets it: with no agency on its socket it starts one and says so
 * on the log channel, the editor's folders become allowed roots, a file outside every allowed root still
 * gets buffer-only symbols and hover (and the user is told once), and however the editor goes away (exit,
 * closed stdin, SIGTERM) nothing stays in the temporary directory.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import {
  DidChangeWorkspaceFoldersNotification,
  DidOpenTextDocumentNotification,
  DocumentSymbolRequest,
  ExitNotification,
  HoverRequest,
  InitializeRequest,
  InitializedNotification,
  LogMessageNotification,
  ShowMessageNotification,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgressCreateRequest,
  WorkspaceSymbolRequest,
  createProtocolConnection,
  type DocumentSymbol,
  type ProtocolConnection,
  type SymbolInformation,
} from "vscode-languageserver-protocol/node";
import { tempDir } from "../../helpers.js";
import { AipCaller } from "../../../tools/aip/agency.js";
import { AIP, MATH_TS } from "./bridge-helpers.js";

const t = tempDir("aiple-");
afterAll(() => t.cleanup());

/** Folders: `allowed` (the only configured root), `project` (the editor's folder), `elsewhere` (neither). */
const dirs = Object.fromEntries(
  ["allowed", "project", "elsewhere", "cache"].map((d) => {
    mkdirSync(join(t.dir, d), { recursive: true });
    return [d, join(t.dir, d)];
  }),
) as Record<"allowed" | "project" | "elsewhere" | "cache", string>;
writeFileSync(join(dirs.project, "math.ts"), MATH_TS);
/** An agency config of the named bundled agents; returns its path. */
function agencyConfig(file: string, names: string[]): string {
  const path = join(t.dir, file);
  writeFileSync(
    path,
    JSON.stringify({
      vetting: "off",
      limits: { health_interval_ms: 60_000, start_timeout_ms: 90_000 },
      agents: names.map((name) => ({
        name,
        command: [`dist/agents/${name}/main.js`],
        manifest: `manifests/${name}.json`,
      })),
    }),
  );
  return path;
}
const config = agencyConfig("agency.json", ["summarize", "search"]);
/** For the tests that read no workspace: summarize answers symbols from the buffer, and search need not start. */
const summarizeOnly = agencyConfig("summarize.json", ["summarize"]);

interface Session {
  conn: ProtocolConnection;
  child: ChildProcess;
  messages: string[];
  /** window/logMessage lines, and a promise of the first one matching a pattern. */
  logs: string[];
  logged: (pattern: RegExp) => Promise<string>;
  tmp: string;
  exited: Promise<number | null>;
}

/** `aip lsp` with its own TMPDIR, only `allowed` as a root (defaults off), initialized with `project` as its folder. */
async function session(agencyConfigPath = config): Promise<Session> {
  const tmp = join(t.dir, `tmp-${Math.random().toString(36).slice(2)}`);
  mkdirSync(tmp);
  const child = spawn(
    process.execPath,
    [AIP, "lsp", "--socket", join(t.dir, "nobody.sock"), "--config", agencyConfigPath],
    {
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...process.env,
        TMPDIR: tmp,
        XDG_CACHE_HOME: dirs.cache,
        AIP_WORKSPACE_ROOTS: dirs.allowed,
        AIP_WORKSPACE_ROOTS_DEFAULTS: "off",
      },
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  const conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const messages: string[] = [];
  conn.onNotification(ShowMessageNotification.type, (m: { message: string }) => {
    messages.push(m.message);
  });
  conn.onRequest(WorkDoneProgressCreateRequest.method, () => null);
  const logs: string[] = [];
  const waiting: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  conn.onNotification(LogMessageNotification.type, (m: { message: string }) => {
    logs.push(m.message);
    for (const w of waiting.filter((x) => x.pattern.test(m.message))) w.resolve(m.message);
  });
  const logged = (pattern: RegExp): Promise<string> =>
    new Promise((resolve) => {
      const seen = logs.find((l) => pattern.test(l));
      if (seen !== undefined) resolve(seen);
      else waiting.push({ pattern, resolve });
    });
  conn.listen();
  const folder = pathToFileURL(dirs.project).href;
  await conn.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: folder,
    capabilities: { workspace: { workspaceFolders: true } },
    workspaceFolders: [{ uri: folder, name: "project" }],
  });
  await conn.sendNotification(InitializedNotification.type, {});
  return { conn, child, messages, logs, logged, tmp, exited };
}

async function open(s: Session, path: string): Promise<string> {
  const uri = pathToFileURL(path).href;
  await s.conn.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: "typescript", version: 1, text: MATH_TS },
  });
  return uri;
}

describe("aip lsp's embedded agency", () => {
  it("allows the editor's folder, answers from the buffer outside every folder (telling the user once), and leaves nothing in TMPDIR", async () => {
    const s = await session();
    try {
      // The folder is allowed although only `allowed` was configured: search reads it.
      const hits = (await s.conn.sendRequest(WorkspaceSymbolRequest.type, { query: "Counter" })) as SymbolInformation[];
      expect(hits.map((h) => h.name)).toContain("Counter");

      // A file outside every allowed root: symbols and hover from the open buffer, one message for the folder.
      const uri = await open(s, join(dirs.elsewhere, "loose.ts"));
      const symbols = (await s.conn.sendRequest(DocumentSymbolRequest.type, {
        textDocument: { uri },
      })) as DocumentSymbol[];
      expect(symbols.map((x) => x.name)).toEqual(["add", "Counter", "total"]);
      const hover = (await s.conn.sendRequest(HoverRequest.type, {
        textDocument: { uri },
        position: { line: 2, character: 4 },
      })) as { contents: { value: string } };
      expect(hover.contents.value).toContain("function add(a: number, b: number)");
      expect(s.messages).toHaveLength(1);
      expect(s.messages[0]).toContain(`${dirs.elsewhere} is outside every workspace folder`);
      expect(s.messages[0]).toMatch(/Open its project as a workspace folder/);
    } finally {
      await s.conn.sendRequest(ShutdownRequest.type);
      await s.conn.sendNotification(ExitNotification.type);
      expect(await s.exited).toBe(0);
      s.conn.dispose();
    }
    expect(readdirSync(s.tmp)).toEqual([]);
    // The verdict cache is the user's, outside TMPDIR (vetting is off here: nothing to keep).
    expect(readdirSync(dirs.cache)).toEqual([]);
  }, 120_000);

  it("allows a folder the editor adds and stops allowing one it removes (workspace/didChangeWorkspaceFolders)", async () => {
    writeFileSync(join(dirs.elsewhere, "ledger.ts"), "export class Ledger {\n  balance = 0;\n}\n");
    const s = await session();
    try {
      await s.logged(/using the agency|started an embedded agency/);
      await s.conn.sendNotification(DidChangeWorkspaceFoldersNotification.type, {
        event: {
          added: [{ uri: pathToFileURL(dirs.elsewhere).href, name: "elsewhere" }],
          removed: [{ uri: pathToFileURL(dirs.project).href, name: "project" }],
        },
      });
      expect(await s.logged(/now allows the workspace folders/)).toContain(dirs.elsewhere);
      // The only folder now is `elsewhere`, which no configured root allows: search reads it.
      const hits = (await s.conn.sendRequest(WorkspaceSymbolRequest.type, { query: "Ledger" })) as SymbolInformation[];
      expect(hits.map((h) => h.name)).toContain("Ledger");
      expect(hits[0]!.location.uri).toBe(pathToFileURL(join(dirs.elsewhere, "ledger.ts")).href);
      // `project` is no root any more: the agency itself refuses it.
      const embedded = readdirSync(s.tmp).find((d) => d.startsWith("aip-embedded-"))!;
      const refused = await new AipCaller(join(s.tmp, embedded, "aip.sock")).invoke({
        action: "search",
        context: { workspace_root: dirs.project, query: "Counter" },
        constraints: {},
      });
      expect(refused.ok).toBe(false);
      expect(!refused.ok && refused.problem.type).toBe("AIP_ERR_FORBIDDEN_PATH");
      expect(s.messages).toEqual([]);
    } finally {
      await s.conn.sendRequest(ShutdownRequest.type);
      await s.conn.sendNotification(ExitNotification.type);
      expect(await s.exited).toBe(0);
      s.conn.dispose();
    }
    expect(readdirSync(s.tmp)).toEqual([]);
  }, 180_000);

  it.each([
    ["its stdin closes", (s: Session) => s.child.stdin!.end()],
    ["it gets SIGTERM", (s: Session) => s.child.kill("SIGTERM")],
  ])(
    "stops the embedded agency and leaves nothing in TMPDIR when %s",
    async (_how, stop) => {
      const s = await session(summarizeOnly);
      // No agency answers on the socket: it says so on the log channel, first, naming its socket and log.
      expect(await s.logged(/started an embedded agency/)).toBe(s.logs[0]);
      expect(s.logs[0]).toMatch(
        /^aip lsp: no agency answered; started an embedded agency on \/.*\/aip\.sock \(logs: .*aip\.log\)$/,
      );
      const uri = await open(s, join(dirs.project, "math.ts"));
      const symbols = (await s.conn.sendRequest(DocumentSymbolRequest.type, {
        textDocument: { uri },
      })) as DocumentSymbol[];
      expect(symbols.map((x) => x.name)).toEqual(["add", "Counter", "total"]);
      stop(s);
      await s.exited;
      s.conn.dispose();
      expect(readdirSync(s.tmp)).toEqual([]);
    },
    120_000,
  );
});

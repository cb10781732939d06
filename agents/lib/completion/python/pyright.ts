/**
 * The typed engine for Python (docs/agents.md, "Python completion"): pyright's language server, one
 * child process per workspace, spoken to over LSP on its stdio. The child reads the workspace's
 * `pyrightconfig.json` / `pyproject.toml` itself; the interpreter whose site-packages it searches is the
 * configured one (AIP_PYTHON, else /usr/bin/python3 when present), never one from the workspace, so no
 * workspace code runs. The least recently used workspace is closed beyond TYPED_LIMITS.maxWorkspaces;
 * each child's heap is capped and its resident memory is reported in /healthz. A request waits at most
 * its budget; the caller answers from the syntactic engine otherwise (the checker's work goes on and
 * serves the next keystroke).
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Logger } from "../../../../protocol/util/log.js";
import { TYPED_LIMITS, workspaceId } from "../engine.js";

/** What pyright offers at a position, in its own order. */
export interface PyrightItem {
  label: string;
  /** LSP CompletionItemKind. */
  kind: number;
  detail?: string;
  sortText?: string;
}

export type PyrightResult = { items: PyrightItem[] } | { reason: string };

/** One of pyright's diagnostics (LSP: 0-based lines and UTF-16 columns; severity 1 error, 2 warning). */
export interface PyrightDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  message: string;
  /** pyright's rule (`reportAttributeAccessIssue`), absent for a syntax error. */
  code?: string;
}

/** LSP CompletionItemKind → the kind names complete-lite answers with. */
export const LSP_KINDS: Record<number, string> = {
  1: "text",
  2: "method",
  3: "function",
  4: "constructor",
  5: "field",
  6: "variable",
  7: "class",
  8: "interface",
  9: "module",
  10: "property",
  12: "value",
  13: "enum",
  14: "keyword",
  15: "snippet",
  20: "enumMember",
  21: "constant",
  22: "struct",
  25: "typeParameter",
};

/** Past this many bytes a message from the child is a broken stream: the child is stopped. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** The interpreter whose site-packages pyright searches: AIP_PYTHON, else the system's, else none. */
export function pythonInterpreter(env: NodeJS.ProcessEnv = process.env): { path?: string; note?: string } {
  const wanted = env.AIP_PYTHON;
  if (wanted) return existsSync(wanted) ? { path: wanted } : { note: `AIP_PYTHON ${wanted} does not exist` };
  if (existsSync("/usr/bin/python3")) return { path: "/usr/bin/python3" };
  return { note: "no Python interpreter found: the standard library's stubs only" };
}

function langserverPath(): string {
  const req = createRequire(import.meta.url);
  return join(dirname(req.resolve("pyright/package.json")), "langserver.index.js");
}

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };

/** One workspace's language server. */
export class PyrightWorkspace {
  readonly root: string;
  state: "loading" | "ready" | "failed" = "loading";
  /** Why the workspace is degraded (no interpreter, a broken config), for the answer's `fallbacks`. */
  readonly fallback: string[] = [];
  readonly started = performance.now();
  loadMs: number | undefined;
  private readonly child: ChildProcessWithoutNullStreams;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private buf: Buffer = Buffer.alloc(0);
  private readonly versions = new Map<string, number>();
  private readonly texts = new Map<string, string>();
  private readonly ready: Promise<void>;
  private exited = false;
  /** The newest completion request per document: an older one still running is cancelled. */
  private readonly latest = new Map<string, number>();

  constructor(root: string, log?: Logger) {
    this.root = root;
    const python = pythonInterpreter();
    if (python.note) this.fallback.push(python.note);
    this.checkConfig();
    this.child = spawn(process.execPath, [`--max-old-space-size=${TYPED_LIMITS.heapMb}`, langserverPath(), "--stdio"], {
      cwd: root,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, NODE_OPTIONS: "" },
    });
    this.child.stderr.resume();
    this.child.stdout.on("data", (chunk: Buffer) => this.onData(chunk));
    this.child.on("exit", (code, signal) => {
      this.exited = true;
      this.state = "failed";
      const why = `pyright exited (${signal ?? code})`;
      for (const p of this.pending.values()) p.reject(new Error(why));
      this.pending.clear();
      log?.warn({ workspace: root, reason: why }, "typed completion (python): the checker stopped");
    });
    this.child.on("error", () => undefined);
    this.child.stdin.on("error", () => undefined);
    const settings = {
      python: { ...(python.path ? { pythonPath: python.path } : {}), analysis: this.analysis() },
      "python.analysis": this.analysis(),
      pyright: {},
    };
    this.settings = settings;
    this.ready = this.request("initialize", {
      processId: process.pid,
      rootUri: pathToFileURL(root).href,
      workspaceFolders: [{ uri: pathToFileURL(root).href, name: "workspace" }],
      capabilities: {
        workspace: { configuration: true, workspaceFolders: true },
        textDocument: {
          completion: { completionItem: { snippetSupport: false, documentationFormat: ["plaintext"] } },
          // Unnecessary (1): pyright then reports what is never used, the diagnose agent's unused imports.
          publishDiagnostics: { tagSupport: { valueSet: [1] } },
        },
      },
      initializationOptions: {},
    }).then(
      () => {
        this.notify("initialized", {});
        this.notify("workspace/didChangeConfiguration", { settings });
      },
      (err: Error) => {
        this.state = "failed";
        this.fallback.push(`pyright did not start: ${err.message}`);
      },
    );
  }

  private readonly settings: Record<string, unknown>;

  private analysis(): Record<string, unknown> {
    // Completion only: no diagnostics beyond the open file, no auto-import candidates (names in scope
    // come first in Python, and the index of every module's exports costs the first request seconds).
    return { diagnosticMode: "openFilesOnly", autoImportCompletions: false, indexing: false };
  }

  /** A `pyproject.toml` or `pyrightconfig.json` pyright cannot read is ignored by it; the answer says so. */
  private checkConfig(): void {
    const cfg = join(this.root, "pyrightconfig.json");
    if (existsSync(cfg)) {
      try {
        JSON.parse(readFileSync(cfg, "utf8").replace(/^\s*\/\/.*$/gm, ""));
      } catch {
        this.fallback.push("pyrightconfig.json does not parse: pyright's defaults apply");
      }
    }
    const py = join(this.root, "pyproject.toml");
    if (existsSync(py)) {
      const text = readFileSync(py, "utf8");
      // A rough check (no TOML parser here): unbalanced brackets in a table header mean a broken file.
      if (/^\s*\[[^\]\n]*$/m.test(text)) this.fallback.push("pyproject.toml does not parse: pyright's defaults apply");
    } else if (!existsSync(cfg)) this.fallback.push("no pyproject.toml or pyrightconfig.json: pyright's defaults");
  }

  private send(message: Record<string, unknown>): void {
    if (this.exited) return;
    const body = Buffer.from(JSON.stringify({ jsonrpc: "2.0", ...message }), "utf8");
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }

  private notify(method: string, params: unknown): void {
    this.send({ method, params });
  }

  private request(method: string, params: unknown): Promise<unknown> & { id: number } {
    const id = this.nextId++;
    const p = new Promise<unknown>((resolve, reject) => {
      if (this.exited) return reject(new Error("pyright is not running"));
      this.pending.set(id, { resolve, reject });
    }) as Promise<unknown> & { id: number };
    p.id = id;
    this.send({ id, method, params });
    return p;
  }

  private onData(chunk: Buffer): void {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    for (;;) {
      const head = this.buf.indexOf("\r\n\r\n");
      if (head < 0) return;
      const m = /content-length:\s*(\d+)/i.exec(this.buf.subarray(0, head).toString("latin1"));
      const len = m ? Number(m[1]) : -1;
      if (len < 0 || len > MAX_MESSAGE_BYTES) {
        this.dispose();
        return;
      }
      if (this.buf.length < head + 4 + len) return;
      const body = this.buf.subarray(head + 4, head + 4 + len).toString("utf8");
      this.buf = this.buf.subarray(head + 4 + len);
      let msg: {
        id?: number | string;
        method?: string;
        params?: unknown;
        result?: unknown;
        error?: { message: string };
      };
      try {
        msg = JSON.parse(body) as typeof msg;
      } catch {
        continue;
      }
      this.onMessage(msg);
    }
  }

  private onMessage(msg: {
    id?: number | string;
    method?: string;
    params?: unknown;
    result?: unknown;
    error?: { message: string };
  }): void {
    if (msg.method !== undefined) {
      if (msg.id === undefined) return; // a notification (diagnostics, logs): not needed
      // A request from the server: configuration is answered, everything else gets null.
      let result: unknown = null;
      if (msg.method === "workspace/configuration") {
        const items = (msg.params as { items?: { section?: string }[] }).items ?? [];
        result = items.map((i) => {
          const parts = (i.section ?? "").split(".");
          let v: unknown = this.settings;
          for (const p of parts) v = p === "" ? v : (v as Record<string, unknown> | undefined)?.[p];
          return v ?? {};
        });
      } else if (msg.method === "workspace/workspaceFolders") {
        result = [{ uri: pathToFileURL(this.root).href, name: "workspace" }];
      }
      this.send({ id: msg.id, result });
      return;
    }
    const p = typeof msg.id === "number" ? this.pending.get(msg.id) : undefined;
    if (!p) return;
    this.pending.delete(msg.id as number);
    if (msg.error) p.reject(new Error(msg.error.message));
    else p.resolve(msg.result);
  }

  /** The buffer as the editor has it, sent as a full-text change. */
  private sync(path: string, text: string): string {
    const uri = pathToFileURL(path).href;
    const v = this.versions.get(uri);
    if (v === undefined) {
      this.notify("textDocument/didOpen", { textDocument: { uri, languageId: "python", version: 1, text } });
      this.versions.set(uri, 1);
    } else if (this.texts.get(uri) !== text) {
      this.notify("textDocument/didChange", {
        textDocument: { uri, version: v + 1 },
        contentChanges: [{ text }],
      });
      this.versions.set(uri, v + 1);
    }
    this.texts.set(uri, text);
    return uri;
  }

  /** Completions at a position (line and UTF-16 column, both 0-based), once the server has started. */
  async complete(path: string, text: string, line: number, character: number): Promise<PyrightItem[]> {
    await this.ready;
    if (this.state === "failed" || this.exited) throw new Error(this.fallback.at(-1) ?? "pyright is not running");
    const uri = this.sync(path, text);
    const older = this.latest.get(uri);
    if (older !== undefined && this.pending.has(older)) this.notify("$/cancelRequest", { id: older });
    const req = this.request("textDocument/completion", {
      textDocument: { uri },
      position: { line, character },
      context: { triggerKind: 1 },
    });
    this.latest.set(uri, req.id);
    const result = (await req) as { items?: PyrightItem[] } | PyrightItem[] | null;
    if (this.state === "loading") {
      this.state = "ready";
      this.loadMs = Math.round(performance.now() - this.started);
    }
    const items = Array.isArray(result) ? result : (result?.items ?? []);
    return items
      .map((i) => ({
        label: i.label,
        kind: i.kind,
        ...(i.detail !== undefined ? { detail: i.detail } : {}),
        ...(i.sortText !== undefined ? { sortText: i.sortText } : {}),
      }))
      .sort((a, b) => ((a.sortText ?? a.label) < (b.sortText ?? b.label) ? -1 : 1));
  }

  /**
   * The errors and warnings of a file as the buffer has it (LSP pull diagnostics), and its imports
   * never used (hints to pyright, reported as warnings with the rule `reportUnusedImport`); other hints dropped.
   */
  async diagnostics(path: string, text: string): Promise<PyrightDiagnostic[]> {
    await this.ready;
    if (this.state === "failed" || this.exited) throw new Error(this.fallback.at(-1) ?? "pyright is not running");
    const uri = this.sync(path, text);
    const result = (await this.request("textDocument/diagnostic", { textDocument: { uri } })) as {
      items?: (PyrightDiagnostic & { severity?: number; data?: unknown })[];
    } | null;
    if (this.state === "loading") {
      this.state = "ready";
      this.loadMs = Math.round(performance.now() - this.started);
    }
    // An import never used: a hint whose action is pyright's unused-import one (its message names the symbol only).
    const unusedImport = (d: { severity?: number; data?: unknown }) =>
      d.severity === 4 &&
      ((d.data as { actions?: { action?: string }[] } | undefined)?.actions ?? []).some(
        (a) => a.action === "pyright.unusedImport",
      );
    return (result?.items ?? [])
      .filter((d) => d.severity === 1 || d.severity === 2 || unusedImport(d))
      .map((d) => ({
        range: d.range,
        severity: unusedImport(d) ? 2 : d.severity,
        message: unusedImport(d) ? `Import ${d.message}` : d.message,
        ...(unusedImport(d) ? { code: "reportUnusedImport" } : d.code !== undefined ? { code: String(d.code) } : {}),
      }));
  }

  /** Give pyright this text of the file (after a check of another one), without asking anything. */
  setText(path: string, text: string): void {
    if (this.state !== "failed" && !this.exited) this.sync(path, text);
  }

  /** Resident memory of the child (bytes), from /proc; 0 where that is not readable. */
  rssBytes(): number {
    try {
      const m = /VmRSS:\s*(\d+) kB/.exec(readFileSync(`/proc/${this.child.pid}/status`, "utf8"));
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  }

  dispose(): void {
    if (this.exited) return;
    this.exited = true;
    this.state = "failed";
    for (const p of this.pending.values()) p.reject(new Error("the workspace was closed"));
    this.pending.clear();
    this.child.kill("SIGKILL");
  }
}

/** The Python typed engine: pyright per workspace, LRU-bounded, asked with a budget. */
export class PyrightEngine {
  /** Least recently used first. */
  private readonly workspaces = new Map<string, PyrightWorkspace>();
  private closed = 0;

  private workspace(root: string, log?: Logger): PyrightWorkspace {
    let ws = this.workspaces.get(root);
    if (ws && ws.state === "failed") {
      this.workspaces.delete(root);
      ws.dispose();
      ws = undefined;
    }
    if (ws) {
      this.workspaces.delete(root);
      this.workspaces.set(root, ws);
      return ws;
    }
    while (this.workspaces.size >= TYPED_LIMITS.maxWorkspaces) {
      const [oldest, old] = this.workspaces.entries().next().value as [string, PyrightWorkspace];
      this.workspaces.delete(oldest);
      old.dispose();
      this.closed++;
      log?.info({ workspace: oldest, reason: "least recently used" }, "typed completion (python): workspace closed");
    }
    ws = new PyrightWorkspace(root, log);
    this.workspaces.set(root, ws);
    return ws;
  }

  /** Start the checker on a workspace ahead of its first request (the editor opened a file). */
  warm(root: string, log?: Logger): void {
    this.workspace(root, log);
  }

  /**
   * Completions within `budgetMs`, or the reason the syntactic engine must answer; while the workspace
   * loads, that reason at once unless `waitWhileLoading`.
   */
  async complete(
    req: { root: string; path: string; text: string; line: number; character: number },
    budgetMs: number,
    log?: Logger,
    waitWhileLoading = false,
  ): Promise<PyrightResult & { fallback: string[] }> {
    const ws = this.workspace(req.root, log);
    const r = await this.within(
      ws,
      ws.complete(req.path, req.text, req.line, req.character),
      budgetMs,
      waitWhileLoading,
    );
    return { ...("value" in r ? { items: r.value } : r), fallback: ws.fallback };
  }

  /** A file's diagnostics within `budgetMs` from the workspace's checker, or the reason there are none. */
  async diagnose(
    req: { root: string; path: string; text: string },
    budgetMs: number,
    log?: Logger,
  ): Promise<({ diagnostics: PyrightDiagnostic[] } | { reason: string }) & { fallback: string[] }> {
    const ws = this.workspace(req.root, log);
    // A diagnosis waits out its budget while the workspace loads: there is no syntactic stand-in for types.
    const r = await this.within(ws, ws.diagnostics(req.path, req.text), budgetMs, true);
    return { ...("value" in r ? { diagnostics: r.value } : r), fallback: ws.fallback };
  }

  /** The attribute names pyright offers at a position (0-based line and UTF-16 column), within `budgetMs`. */
  async members(
    req: { root: string; path: string; text: string; line: number; character: number },
    budgetMs: number,
  ): Promise<string[]> {
    const r = await this.complete(req, budgetMs, undefined, true);
    return "items" in r ? r.items.map((i) => i.label) : [];
  }

  /** Put the file's text back in the workspace's pyright (after checks of edited copies). */
  setText(root: string, path: string, text: string): void {
    this.workspaces.get(root)?.setText(path, text);
  }

  /** `work`'s answer as `{ value }`, or the reason when it fails or outlasts `budgetMs` (the work goes on). */
  private async within<T>(
    ws: PyrightWorkspace,
    work: Promise<T>,
    budgetMs: number,
    waitWhileLoading: boolean,
  ): Promise<{ value: T } | { reason: string }> {
    let timer: NodeJS.Timeout | undefined;
    const loading = ws.state === "loading";
    const answer = work.then(
      (value) => ({ value }),
      (err: Error) => ({ reason: `the checker failed: ${err.message}` }),
    );
    // A workspace's first analysis takes seconds: while it runs, waiting out the default budget on
    // every keystroke only delays the syntactic answer (a budget the client names is waited). The
    // request is still sent: its answer ends the load.
    if (loading && !waitWhileLoading) return { reason: "the checker is still loading this workspace" };
    const late = new Promise<{ reason: string }>(
      (resolve) =>
        (timer = setTimeout(
          resolve,
          budgetMs,
          ws.state === "loading"
            ? { reason: `the checker is still loading this workspace (budget ${budgetMs} ms)` }
            : { reason: `the checker did not answer within the budget (${budgetMs} ms)` },
        )),
    );
    const r = await Promise.race([answer, late]);
    clearTimeout(timer);
    return r;
  }

  health(): Record<string, unknown> {
    const ws = [...this.workspaces.values()];
    return {
      typed_python: {
        checker: "pyright",
        workspaces_closed: this.closed,
        rss_bytes: ws.reduce((n, w) => n + w.rssBytes(), 0),
        limits: { max_workspaces: TYPED_LIMITS.maxWorkspaces, heap_mb: TYPED_LIMITS.heapMb },
        workspaces: ws.map((w) => ({
          // No client's path on /healthz: a workspace is named by a digest of its root.
          workspace: workspaceId(w.root),
          state: w.state,
          rss_bytes: w.rssBytes(),
          ...(w.loadMs !== undefined ? { load_ms: w.loadMs } : {}),
          fallback: w.fallback,
        })),
      },
    };
  }

  close(): void {
    for (const w of this.workspaces.values()) w.dispose();
    this.workspaces.clear();
  }
}

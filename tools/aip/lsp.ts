/**
 * `aip lsp`: a Language Server over stdio (vscode-languageserver) in front of the agency
 * (docs/integrations.md "Use it from your editor"). LSP positions are 0-based lines and UTF-16 columns; AIP-1
 * lines are 1-based with the same columns, so only lines are shifted.
 */
import { lstatSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { TextDocument } from "vscode-languageserver-textdocument";
import {
  CancellationToken as Cancellation,
  CodeActionKind,
  CompletionItemKind,
  DidChangeWorkspaceFoldersNotification,
  InsertTextFormat,
  LSPErrorCodes,
  MessageType,
  ProposedFeatures,
  ResponseError,
  ShowMessageNotification,
  SymbolKind,
  TextDocuments,
  TextDocumentSyncKind,
  createConnection,
  type CancellationToken,
  type CodeAction,
  type CompletionItem,
  type Connection,
  type DocumentSymbol,
  type InlineCompletionItem,
  type Range,
  type SymbolInformation,
  type TextEdit,
  type WorkspaceEdit,
} from "vscode-languageserver/node";
import type { z } from "zod";
import {
  INFERENCE_TIMEOUT_MAX_MS,
  type CompletePayloadSchema,
  type SearchPayloadSchema,
  type SummarizePayloadSchema,
  type TestgenPayloadSchema,
} from "../../protocol/contract/actions.js";
import { readContainedSync } from "../../agents/lib/code/workspace.js";
import type { Problem } from "../../protocol/contract/errors.js";
import { newTraceId } from "../../protocol/contract/trace.js";
import { AipCaller, agencyForServer, type Agency, type Answer } from "./agency.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";
import { serveDiagnostics } from "./lsp-diagnose.js";
import { LocalFallback } from "./lsp-fallback.js";
import { foldersAfter } from "./lsp-folders.js";
import { CheckerProgress } from "./lsp-progress.js";
import { BufferOnlyRoots } from "./lsp-roots.js";
import { EXIT_CLEANUP_LIMIT_MS, guardExit } from "./server-exit.js";

type Json = Record<string, unknown>;
type CompletePayload = z.output<typeof CompletePayloadSchema>;
type SummarizePayload = z.output<typeof SummarizePayloadSchema>;
type SearchPayload = z.output<typeof SearchPayloadSchema>;
type TestgenPayload = z.output<typeof TestgenPayloadSchema>;

const LANGUAGE_IDS: Record<string, string> = {
  typescript: "typescript",
  typescriptreact: "typescript",
  javascript: "javascript",
  javascriptreact: "javascript",
  python: "python",
};

const ITEM_KINDS: Record<string, CompletionItemKind> = {
  method: CompletionItemKind.Method,
  function: CompletionItemKind.Function,
  constructor: CompletionItemKind.Constructor,
  property: CompletionItemKind.Property,
  variable: CompletionItemKind.Variable,
  class: CompletionItemKind.Class,
  interface: CompletionItemKind.Interface,
  module: CompletionItemKind.Module,
  enum: CompletionItemKind.Enum,
  enumMember: CompletionItemKind.EnumMember,
  keyword: CompletionItemKind.Keyword,
  snippet: CompletionItemKind.Snippet,
  typeParameter: CompletionItemKind.TypeParameter,
  field: CompletionItemKind.Field,
  constant: CompletionItemKind.Constant,
  text: CompletionItemKind.Text,
};

const SYMBOL_KINDS: Record<string, SymbolKind> = {
  function: SymbolKind.Function,
  method: SymbolKind.Method,
  class: SymbolKind.Class,
  type: SymbolKind.TypeParameter,
  interface: SymbolKind.Interface,
  enum: SymbolKind.Enum,
  namespace: SymbolKind.Namespace,
  const: SymbolKind.Constant,
  let: SymbolKind.Variable,
  var: SymbolKind.Variable,
  module: SymbolKind.Module,
  heading: SymbolKind.String,
  text: SymbolKind.File,
  constructor: SymbolKind.Constructor,
  getter: SymbolKind.Property,
  setter: SymbolKind.Property,
  property: SymbolKind.Property,
};

/**
 * Deadline of a completion request. complete-lite's manifest default (500 ms) suits keystrokes on a warm
 * buffer; a file's first request parses it cold, and a stale request is cancelled by the editor anyway.
 */
const COMPLETION_TIMEOUT_MS = 2000;

/** While complete-lite's checker loads a workspace: how often aip lsp asks again (for its progress), and for how long. */
const CHECKER_RECHECK_MS = 1000;
const CHECKER_RECHECK_LIMIT_MS = 10 * 60_000;

/** Deadline of an inline completion beyond its inference limit: the prompt before it and the syntax check after. */
const INLINE_DEADLINE_SLACK_MS = 1000;
/** Problems that mean "no inline suggestion now" rather than a failure worth an error in the editor. */
const INLINE_NOTHING = ["AIP_ERR_UNAVAILABLE", "AIP_ERR_NO_ROUTE", "AIP_ERR_SYNTAX", "AIP_ERR_MODEL_TIMEOUT"];

/** AIP-1 (1-based line) ↔ LSP (0-based line); columns are UTF-16 code units in both. */
const toLsp = (p: { line: number; column: number }) => ({ line: p.line - 1, character: p.column });
const toAip = (p: { line: number; character: number }) => ({ line: p.line + 1, column: p.character });
/** Lines `start`..`end` (1-based) as an LSP range from the first line's start to the last line's start. */
const lines = (start: number, end: number): Range => ({
  start: { line: start - 1, character: 0 },
  end: { line: end - 1, character: 0 },
});

/** An AIP-1 problem as the LSP error: the code and detail in the message, the whole problem in `data`. */
export function problemError(problem: Problem): ResponseError<Problem> {
  return new ResponseError(LSPErrorCodes.RequestFailed, `${problem.type}: ${problem.detail}`, problem);
}

export interface LspOptions {
  connection: Connection;
  agency: Agency;
  /** Told the client's workspace folders at initialize (an embedded agency allows them). */
  onFolders?: (paths: string[]) => void;
  /** Told the folders after each workspace/didChangeWorkspaceFolders. */
  onFoldersChanged?: (paths: string[]) => void;
}

/** Wire the language server's handlers to the agency. */
export function serveLsp({ connection, agency, onFolders, onFoldersChanged }: LspOptions): void {
  const aip = new AipCaller(agency.socket);
  const documents = new TextDocuments(TextDocument);
  const clientId = `lsp-${newTraceId().slice(0, 12)}`;
  let roots: string[] = [];
  /** window/showMessage, a notification: the editor shows it and nothing waits for an answer. */
  const tell = (message: string): void =>
    void connection.sendNotification(ShowMessageNotification.type, { type: MessageType.Warning, message });
  const bufferOnly = new BufferOnlyRoots(tell);
  const fallback = new LocalFallback(
    (message, level) =>
      void connection.sendNotification(ShowMessageNotification.type, {
        type: level === "info" ? MessageType.Info : MessageType.Warning,
        message,
      }),
  );
  /** The agency serves (an embedded one starts once initialize named the folders); its failure as the LSP error. */
  const agencyReady = (): Promise<void> =>
    agency.ready.catch((err: Error) => {
      throw new ResponseError(
        LSPErrorCodes.RequestFailed,
        `The embedded agency did not start: ${err.message}${agency.logFile ? ` (log: ${agency.logFile})` : ""}`,
      );
    });
  /** initializationOptions.inline_best_effort: offer the model's best candidate even when it failed the syntax check. */
  let inlineBestEffort = false;
  /**
   * initializationOptions.inline_timeout_ms: the model's inference limit for inline completion
   * (constraints.inference_timeout_ms; the agent's default is 800 ms), for models slower than that.
   */
  let inlineTimeoutMs: number | undefined;
  /** In-flight AIP calls per document: a newer version cancels them (latest wins, also in the agency by document_id). */
  const inflight = new Map<string, Set<AbortController>>();

  const doc = (uri: string): TextDocument => {
    const d = documents.get(uri);
    if (!d)
      throw new ResponseError(-32602, `Document ${uri} is not open: send textDocument/didOpen before requests on it`);
    return d;
  };

  const pathOf = (uri: string): string | undefined => (uri.startsWith("file:") ? fileURLToPath(uri) : undefined);
  const rootOf = (path: string | undefined): string | undefined => {
    if (path === undefined) return roots[0];
    return (
      roots
        .filter((r) => !relative(r, path).startsWith("..") && !isAbsolute(relative(r, path)))
        // A file outside every workspace folder gets no workspace of its own: its buffer is all there is.
        .sort((a, b) => b.length - a.length)[0]
    );
  };

  /** The request context for a document: its buffer, path, root and language. */
  const contextOf = (d: TextDocument): Json => {
    const path = pathOf(d.uri);
    const root = rootOf(path);
    // With no folder at all the editor is in single-file mode by choice: nothing to tell.
    if (path !== undefined && root === undefined && roots.length > 0) bufferOnly.outsideFolders(dirname(path));
    return {
      source_code: d.getText(),
      ...(LANGUAGE_IDS[d.languageId] ? { language: LANGUAGE_IDS[d.languageId] } : {}),
      ...(root !== undefined && path !== undefined ? { file_path: path, workspace_root: root } : {}),
    };
  };

  /** One AIP call for a document's request; aborted by $/cancelRequest or a newer version of the document. */
  async function call<T = Json>(
    uri: string | undefined,
    action: string,
    context: Json,
    constraints: Json,
    token: CancellationToken,
  ): Promise<Answer<T>> {
    const controller = new AbortController();
    if (token.isCancellationRequested) controller.abort();
    const sub = token.onCancellationRequested(() => controller.abort());
    const set = uri !== undefined ? (inflight.get(uri) ?? new Set()) : undefined;
    if (uri !== undefined && set) inflight.set(uri, set.add(controller));
    const send = (ctx: Json): Promise<Answer<T>> =>
      aip.invoke<T>(
        {
          action,
          context: ctx,
          constraints: { ...(uri !== undefined ? { document_id: uri, client_id: clientId } : {}), ...constraints },
        },
        controller.signal,
      );
    try {
      await agencyReady();
      const sent = bufferOnly.context(context);
      let answer: Answer<T>;
      try {
        answer = await send(sent);
      } catch (err) {
        if (controller.signal.aborted) throw err;
        fallback.note(true);
        if (fallback.covers(action, constraints)) return await fallback.answer<T>(action, context, constraints);
        throw err;
      }
      const unavailable = !answer.ok && answer.problem.type === "AIP_ERR_UNAVAILABLE";
      fallback.note(unavailable);
      if (unavailable && fallback.covers(action, constraints))
        return await fallback.answer<T>(action, context, constraints);
      const retry = answer.ok ? undefined : bufferOnly.retry(sent, answer.problem);
      return retry ? await send(retry) : answer;
    } catch (err) {
      if (err instanceof ResponseError) throw err;
      if (controller.signal.aborted)
        throw new ResponseError(LSPErrorCodes.RequestCancelled, `Cancelled: ${action} on ${uri ?? "the workspace"}`);
      throw new ResponseError(
        LSPErrorCodes.RequestFailed,
        `The agency on ${agency.socket} did not answer: ${(err as Error).message}`,
      );
    } finally {
      sub.dispose();
      set?.delete(controller);
    }
  }

  const payloadOf = <T>(answer: Answer<T>): T => {
    if (!answer.ok) throw problemError(answer.problem);
    return answer.payload;
  };

  documents.onDidChangeContent((e) => {
    for (const c of inflight.get(e.document.uri) ?? []) c.abort();
  });
  documents.onDidClose((e) => inflight.delete(e.document.uri));
  const checker = new CheckerProgress({
    create: () => connection.window.createWorkDoneProgress(),
    everyMs: CHECKER_RECHECK_MS,
    limitMs: CHECKER_RECHECK_LIMIT_MS,
  });
  const diagnosis = serveDiagnostics({ connection, documents, contextOf, call });

  connection.onInitialize((params) => {
    const folders = params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : []);
    roots = folders.filter((u) => u.startsWith("file:")).map((u) => fileURLToPath(u));
    onFolders?.(roots);
    const options = (params.initializationOptions ?? {}) as {
      inline_best_effort?: unknown;
      inline_timeout_ms?: unknown;
    };
    inlineBestEffort = options.inline_best_effort === true;
    const t = options.inline_timeout_ms;
    inlineTimeoutMs = undefined;
    if (Number.isInteger(t) && (t as number) >= 1 && (t as number) <= INFERENCE_TIMEOUT_MAX_MS)
      inlineTimeoutMs = t as number;
    else if (t !== undefined)
      connection.console.warn(
        `aip lsp: initializationOptions.inline_timeout_ms must be an integer from 1 to ${INFERENCE_TIMEOUT_MAX_MS}, got ${JSON.stringify(t)}: using the agent's default`,
      );
    return {
      capabilities: {
        textDocumentSync: TextDocumentSyncKind.Incremental,
        completionProvider: { triggerCharacters: ["."] },
        inlineCompletionProvider: true,
        documentSymbolProvider: true,
        hoverProvider: true,
        workspaceSymbolProvider: true,
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
        codeActionProvider: {
          codeActionKinds: [CodeActionKind.QuickFix, CodeActionKind.Source],
          resolveProvider: true,
        },
      },
      serverInfo: { name: "aip lsp", version: "1.0.0" },
    };
  });

  connection.onInitialized(() => {
    // Registered after initialize, so that it replaces the library's own handler of the notification.
    connection.onNotification(DidChangeWorkspaceFoldersNotification.type, ({ event }) => {
      roots = foldersAfter(roots, event);
      onFoldersChanged?.(roots);
    });
    connection.console.info(
      agency.embedded
        ? `aip lsp: no agency answered; started an embedded agency on ${agency.socket} (logs: ${agency.logFile})`
        : `aip lsp: using the agency on ${agency.socket}`,
    );
  });

  const completeLite = { agent: "complete-lite", timeout_ms: COMPLETION_TIMEOUT_MS };
  connection.onCompletion(async (params, token) => {
    const d = doc(params.textDocument.uri);
    const answer = await call<CompletePayload>(
      d.uri,
      "complete",
      { ...contextOf(d), cursor: toAip(params.position) },
      completeLite,
      token,
    );
    const p = payloadOf(answer);
    // Asked again without document_id (it must not cancel the user's requests), at the buffer's end.
    const recheck = async (): Promise<CompletePayload | undefined> => {
      const now = documents.get(d.uri);
      if (!now) return undefined;
      const again = await call<CompletePayload>(undefined, "complete", contextOf(now), completeLite, Cancellation.None);
      return again.ok ? again.payload : undefined;
    };
    checker.note(contextOf(d).workspace_root as string | undefined, p, recheck);
    const range: Range = { start: toLsp(p.replace.start), end: toLsp(p.replace.end) };
    return {
      // A syntactic answer (the checker was not ready in time): ask again at the next keystroke.
      isIncomplete: p.engine === "syntactic",
      items: p.items.map((item, i): CompletionItem => ({
        label: item.label,
        kind: ITEM_KINDS[item.kind] ?? CompletionItemKind.Text,
        detail: item.detail,
        sortText: String(i).padStart(4, "0"),
        filterText: item.label,
        textEdit: { range, newText: item.insert_text },
        insertTextFormat:
          item.kind === "snippet" || /\$\d|\$\{/.test(item.insert_text)
            ? InsertTextFormat.Snippet
            : InsertTextFormat.PlainText,
      })),
    };
  });

  connection.languages.inlineCompletion.on(async (params, token) => {
    const d = doc(params.textDocument.uri);
    const answer = await call<CompletePayload>(
      d.uri,
      "complete",
      { ...contextOf(d), cursor: toAip(params.position) },
      {
        agent: "complete",
        ...(inlineBestEffort ? { best_effort: true } : {}),
        ...(inlineTimeoutMs !== undefined
          ? { inference_timeout_ms: inlineTimeoutMs, timeout_ms: inlineTimeoutMs + INLINE_DEADLINE_SLACK_MS }
          : {}),
      },
      token,
    );
    // Without a model, without a candidate that passes the syntax check, or with a model that did not answer in
    // time, there is nothing to suggest inline: an empty list, not an error (the editor asks again as the user types).
    if (!answer.ok && INLINE_NOTHING.includes(answer.problem.type)) {
      connection.console.log(`aip lsp: no inline completion: ${answer.problem.type}: ${answer.problem.detail}`);
      return { items: [] };
    }
    const p = payloadOf(answer);
    return {
      items: p.items.map((item): InlineCompletionItem => ({
        insertText: item.insert_text,
        range: { start: toLsp(p.replace.start), end: toLsp(p.replace.end) },
      })),
    };
  });

  connection.onDocumentSymbol(async (params, token) => {
    const d = doc(params.textDocument.uri);
    const o = payloadOf(await call<SummarizePayload>(d.uri, "summarize", contextOf(d), {}, token)).outline;
    if (!o) return [];
    const symbol = (
      name: string,
      kind: string,
      start: number,
      end: number,
      detail?: string,
      children?: DocumentSymbol[],
    ): DocumentSymbol => {
      const range = {
        start: { line: start - 1, character: 0 },
        end: {
          line: end - 1,
          character: d
            .getText({ start: { line: end - 1, character: 0 }, end: { line: end, character: 0 } })
            .replace(/\r?\n$/, "").length,
        },
      };
      return {
        name,
        kind: SYMBOL_KINDS[kind] ?? SymbolKind.Variable,
        range,
        selectionRange: range,
        ...(detail ? { detail } : {}),
        ...(children ? { children } : {}),
      };
    };
    const out: DocumentSymbol[] = [
      ...o.functions.map((f) => symbol(f.name, "function", f.line_start, f.line_end, f.text)),
      ...o.classes.map((c) =>
        symbol(
          c.name,
          "class",
          c.line_start,
          c.line_end,
          c.extends ? `extends ${c.extends}` : undefined,
          c.members.map((m) => symbol(m.name, m.kind, m.line, m.line, m.signature)),
        ),
      ),
      ...o.types.map((t) => symbol(t.name, t.kind, t.line_start, t.line_end)),
      ...o.consts.map((c) => symbol(c.name, c.kind, c.line, c.line, c.type)),
    ];
    return out.sort((a, b) => a.range.start.line - b.range.start.line);
  });

  connection.onHover(async (params, token) => {
    const d = doc(params.textDocument.uri);
    const answer = await call<SummarizePayload>(
      d.uri,
      "summarize",
      { ...contextOf(d), cursor: toAip(params.position) },
      { scope: "function" },
      token,
    );
    // Outside any function there is nothing to describe.
    if (!answer.ok && answer.problem.type === "AIP_ERR_INVALID_FIELD") return null;
    const p = payloadOf(answer);
    const fn = p.function;
    if (!fn) return null;
    return {
      contents: {
        kind: "markdown",
        value: `\`\`\`${LANGUAGE_IDS[d.languageId] ?? "typescript"}\n${fn.text}\n\`\`\`\n\n${p.summary}`,
      },
      range: lines(fn.line_start, fn.line_start),
    };
  });

  connection.onWorkspaceSymbol(async (params, token) => {
    const root = roots[0];
    if (root === undefined)
      throw new ResponseError(
        -32602,
        "workspace/symbol needs a workspace folder (rootUri or workspaceFolders in initialize)",
      );
    if (params.query.trim() === "") return [];
    const progress = await connection.window.createWorkDoneProgress().catch(() => undefined);
    progress?.begin("Searching the workspace", undefined, `indexing ${root} (first search builds the index)`, false);
    try {
      const p = payloadOf(
        await call<SearchPayload>(
          undefined,
          "search",
          { workspace_root: root, query: params.query },
          { limit: 50 },
          token,
        ),
      );
      return p.hits.map((h): SymbolInformation => ({
        name: h.symbol ?? h.path,
        kind: SYMBOL_KINDS[h.kind] ?? SymbolKind.File,
        location: { uri: pathToFileURL(join(root, h.path)).href, range: lines(h.line_start, h.line_end) },
        containerName: h.path,
      }));
    } finally {
      progress?.done();
    }
  });

  // Listing code actions runs nothing (no agent is asked): the action is offered from what the editor
  // already knows, and testgen is asked only when the user picks it (codeAction/resolve).
  connection.onCodeAction(async (params, token) => {
    const d = documents.get(params.textDocument.uri);
    if (!d || LANGUAGE_IDS[d.languageId] === undefined) return [];
    const ctx = contextOf(d);
    // The verified fixes of the last diagnosis (published with the document's diagnostics).
    const fixes = await diagnosis.quickFixes(params, token);
    if (ctx.workspace_root === undefined) return fixes;
    const action: CodeAction = {
      title: "Generate tests for the function at the cursor (aip testgen)",
      kind: CodeActionKind.Source,
      data: { uri: d.uri, version: d.version, position: params.range.start },
    };
    return [...fixes, action];
  });

  connection.onCodeActionResolve(async (action, token) => {
    const data = action.data as { uri?: unknown; position?: { line?: unknown; character?: unknown } } | undefined;
    if (typeof data?.uri !== "string" || typeof data.position?.line !== "number") return action;
    const d = documents.get(data.uri);
    if (!d) return action;
    const ctx = contextOf(d);
    if (ctx.workspace_root === undefined) return action;
    const position = { line: data.position.line, character: Number(data.position.character) || 0 };
    const answer = await call<TestgenPayload>(d.uri, "testgen", { ...ctx, cursor: toAip(position) }, {}, token);
    // No function at the cursor (or a buffer that does not parse): the action has no edit.
    if (!answer.ok) return action;
    const p = answer.payload;
    const root = ctx.workspace_root as string;
    const testPath = join(root, p.test_path.split("/").join(sep));
    if (!isInsideRoot(root, testPath)) return action;
    const uri = pathToFileURL(testPath).href;
    const edit: WorkspaceEdit = { documentChanges: [] };
    const open = documents.get(uri);
    let existing = open?.getText();
    if (existing === undefined && lexists(testPath)) {
      // Read the way agents read: no FIFO or device, under the size cap, never through a link out of the root.
      existing = readContainedSync(realRootOf(root), testPath);
      if (existing === undefined) {
        connection.console.warn(`aip lsp: the test file is not a readable regular file inside the workspace: no edit`);
        return action;
      }
    }
    if (existing === undefined) {
      edit.documentChanges!.push({ kind: "create", uri, options: { ignoreIfExists: true } });
      edit.documentChanges!.push({
        textDocument: { uri, version: null },
        edits: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: p.content }],
      });
    } else {
      edit.documentChanges!.push({
        textDocument: { uri, version: open?.version ?? null },
        edits: extendEdits(existing, p.content),
      });
    }
    return { ...action, title: `Generate tests for ${p.signature.name} (${p.test_path})`, edit };
  });

  documents.listen(connection);
  connection.onShutdown(() => {
    checker.dispose();
    aip.close();
  });
}

/** True when `path` is `root` or below it (lexically). */
function isInsideRoot(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && !rel.startsWith("..") && !isAbsolute(rel);
}

/** The real path of a workspace root (the reader checks descriptors against it). */
function realRootOf(root: string): string {
  try {
    return realpathSync(root);
  } catch {
    return root;
  }
}

/** Something is at `path` (a dangling or hostile link included). */
function lexists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Edits that extend an existing test file: imports it lacks go on top, the rest at the end. */
export function extendEdits(existing: string, generated: string): TextEdit[] {
  const have = existing.split("\n").map((l) => l.trim());
  const genLines = generated.split("\n");
  const isImport = (l: string): boolean => /^import\s/.test(l);
  // `import { a, b } from "m"` is already there when some import from "m" names a and b (in any order).
  const named = (l: string): { from: string; names: string[] } | undefined => {
    const m = /^import\s+(?:type\s+)?\{([^}]*)\}\s+from\s+(["'][^"']+["'])/.exec(l);
    return m
      ? {
          from: m[2]!,
          names: m[1]!
            .split(",")
            .map((n) => n.trim())
            .filter(Boolean),
        }
      : undefined;
  };
  const present = (l: string): boolean => {
    const want = named(l.trim());
    if (!want) return have.includes(l.trim());
    const names = new Set(have.flatMap((h) => (named(h)?.from === want.from ? named(h)!.names : [])));
    return want.names.every((n) => names.has(n));
  };
  const newImports = genLines.filter((l) => isImport(l) && !present(l));
  const body = genLines
    .filter((l) => !isImport(l))
    .join("\n")
    .replace(/^\n+/, "");
  const lastLine = existing.split("\n").length - 1;
  const end = { line: lastLine, character: existing.split("\n")[lastLine]!.length };
  const edits: TextEdit[] = [];
  if (newImports.length > 0)
    edits.push({
      range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      newText: `${newImports.join("\n")}\n`,
    });
  edits.push({ range: { start: end, end }, newText: `${existing.endsWith("\n") ? "" : "\n"}\n${body}` });
  return edits;
}

export const lsp: Command = {
  summary: "a Language Server over stdio in front of the agency (completion, symbols, hover, tests)",
  usage: `Usage: aip lsp [--stdio] [--socket PATH] [--config FILE]

Speaks the Language Server Protocol on stdin/stdout. Requests go to the agency on
--socket (default: $AIP_SOCKET or ./run/aip.sock); when none answers there, an
embedded agency is started (from --config, default manifests/agency.json) and the
LSP log channel says so. See docs/integrations.md "Use it from your editor".`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["socket", "config"], ["stdio"]);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const connection = createConnection(ProposedFeatures.all, process.stdin, process.stdout);
    let foldersKnown: (paths: string[]) => void = () => undefined;
    const folders = new Promise<string[]>((resolve) => (foldersKnown = resolve));
    const agency = await agencyForServer("lsp", flags, folders);
    if (agency === undefined) return EXIT.aipError;
    // The library exits the process on "exit", on stdin's end and when the editor dies: stop the agency first.
    const guard = guardExit(() => agency.close(), EXIT_CLEANUP_LIMIT_MS);
    serveLsp({
      connection,
      agency,
      onFolders: foldersKnown,
      onFoldersChanged: (paths) =>
        void agency.setClientRoots?.(paths).then(
          (restarted) =>
            restarted &&
            connection.console.info(
              `aip lsp: the embedded agency now allows the workspace folders ${paths.join(", ")}`,
            ),
          (err: Error) => connection.console.error(`aip lsp: the embedded agency did not restart: ${err.message}`),
        ),
    });
    const closed = new Promise<void>((resolve) => {
      connection.onExit(resolve);
      process.stdin.once("end", resolve); // the editor went away without "exit"
    });
    connection.listen();
    await closed;
    await guard.cleanup();
    guard.restore();
    process.stdin.destroy();
    return EXIT.ok;
  },
};

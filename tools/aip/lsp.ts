/**
 * `aip lsp`: a Language Server over stdio (vscode-languageserver) in front of the agency
 * (docs/integrations.md "Use it from your editor"). LSP positions are 0-based lines and UTF-16 columns; AIP-1
 * lines are 1-based with the same columns, so only lines are shifted.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, isAbsolute, join, relative, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { TextDocument } from "vscode-languageserver-textdocument";
import {
  CodeActionKind,
  CompletionItemKind,
  InsertTextFormat,
  LSPErrorCodes,
  ProposedFeatures,
  ResponseError,
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
} from "../../protocol/actions.js";
import type { Problem } from "../../protocol/errors.js";
import { newTraceId } from "../../protocol/trace.js";
import { AipCaller, agencyForServer, type Agency, type Answer } from "./agency.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";

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
}

/** Wire the language server's handlers to the agency. */
export function serveLsp({ connection, agency }: LspOptions): void {
  const aip = new AipCaller(agency.socket);
  const documents = new TextDocuments(TextDocument);
  const clientId = `lsp-${newTraceId().slice(0, 12)}`;
  let roots: string[] = [];
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
        .sort((a, b) => b.length - a.length)[0] ?? dirname(path)
    );
  };

  /** The request context for a document: its buffer, path, root and language. */
  const contextOf = (d: TextDocument): Json => {
    const path = pathOf(d.uri);
    const root = rootOf(path);
    return {
      source_code: d.getText(),
      ...(LANGUAGE_IDS[d.languageId] ? { language: LANGUAGE_IDS[d.languageId] } : {}),
      ...(path !== undefined ? { file_path: path } : {}),
      ...(root !== undefined && path !== undefined ? { workspace_root: root } : {}),
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
    try {
      return await aip.invoke<T>(
        {
          action,
          context,
          constraints: { ...(uri !== undefined ? { document_id: uri, client_id: clientId } : {}), ...constraints },
        },
        controller.signal,
      );
    } catch (err) {
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

  connection.onInitialize((params) => {
    const folders = params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : []);
    roots = folders.filter((u) => u.startsWith("file:")).map((u) => fileURLToPath(u));
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
        codeActionProvider: { codeActionKinds: [CodeActionKind.Source] },
      },
      serverInfo: { name: "aip lsp", version: "1.0.0" },
    };
  });

  connection.onInitialized(() => {
    connection.console.info(
      agency.embedded
        ? `aip lsp: no agency answered; started an embedded agency on ${agency.socket} (logs: ${agency.logFile})`
        : `aip lsp: using the agency on ${agency.socket}`,
    );
  });

  connection.onCompletion(async (params, token) => {
    const d = doc(params.textDocument.uri);
    const answer = await call<CompletePayload>(
      d.uri,
      "complete",
      { ...contextOf(d), cursor: toAip(params.position) },
      { agent: "complete-lite", timeout_ms: COMPLETION_TIMEOUT_MS },
      token,
    );
    const p = payloadOf(answer);
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

  connection.onCodeAction(async (params, token) => {
    const d = doc(params.textDocument.uri);
    const ctx = contextOf(d);
    if (ctx.workspace_root === undefined) return [];
    const answer = await call<TestgenPayload>(
      d.uri,
      "testgen",
      { ...ctx, cursor: toAip(params.range.start) },
      {},
      token,
    );
    // No function at the cursor (or a buffer that does not parse): no action to offer.
    if (!answer.ok) return [];
    const p = answer.payload;
    const testPath = join(ctx.workspace_root as string, p.test_path.split("/").join(sep));
    const uri = pathToFileURL(testPath).href;
    const edit: WorkspaceEdit = { documentChanges: [] };
    const open = documents.get(uri);
    const existing = open?.getText() ?? (existsSync(testPath) ? readFileSync(testPath, "utf8") : undefined);
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
    const action: CodeAction = {
      title: `Generate tests for ${p.signature.name} (${p.test_path})`,
      kind: CodeActionKind.Source,
      edit,
    };
    return [action];
  });

  documents.listen(connection);
  connection.onShutdown(() => aip.close());
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
    const agency = await agencyForServer("lsp", flags);
    if (agency === undefined) return EXIT.aipError;
    serveLsp({ connection, agency });
    const closed = new Promise<void>((resolve) => {
      connection.onExit(resolve);
      process.stdin.once("end", resolve); // the editor went away without "exit"
    });
    connection.listen();
    await closed;
    await agency.close();
    process.stdin.destroy();
    return EXIT.ok;
  },
};

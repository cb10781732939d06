/**
 * Symbols in `aip lsp`, all from the agency's search and summarize actions: a document's outline
 * (textDocument/documentSymbol), the function at the cursor with its summary (textDocument/hover),
 * and the workspace's symbols matching a query (workspace/symbol, with work-done progress while the
 * first search builds the index).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { TextDocument } from "vscode-languageserver-textdocument";
import {
  ResponseError,
  SymbolKind,
  type CancellationToken,
  type Connection,
  type DocumentSymbol,
  type Hover,
  type Position,
  type SymbolInformation,
} from "vscode-languageserver/node";
import type { z } from "zod";
import type { SearchPayloadSchema, SummarizePayloadSchema } from "../../protocol/contract/actions.js";
import { payloadOf, type AgencyCalls } from "./lsp-calls.js";
import { LANGUAGE_IDS, lines, toAip, type EditorWorkspace } from "./lsp-documents.js";

type SummarizePayload = z.output<typeof SummarizePayloadSchema>;
type SearchPayload = z.output<typeof SearchPayloadSchema>;
type Outline = NonNullable<SummarizePayload["outline"]>;

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

export class SymbolsFeature {
  constructor(
    private readonly connection: Connection,
    private readonly workspace: EditorWorkspace,
    private readonly calls: AgencyCalls,
  ) {}

  listen(): void {
    this.connection.onDocumentSymbol((params, token) => this.documentSymbols(params.textDocument.uri, token));
    this.connection.onHover((params, token) => this.hover(params.textDocument.uri, params.position, token));
    this.connection.onWorkspaceSymbol((params, token) => this.workspaceSymbols(params.query, token));
  }

  /** textDocument/documentSymbol: summarize's outline, in line order. */
  private async documentSymbols(uri: string, token: CancellationToken): Promise<DocumentSymbol[]> {
    const d = this.workspace.doc(uri);
    const o = payloadOf(
      await this.calls.call<SummarizePayload>(d.uri, "summarize", this.workspace.contextOf(d), {}, token),
    ).outline;
    if (!o) return [];
    return outlineSymbols(d, o);
  }

  /** textDocument/hover: the function at the cursor and its summary (nothing outside any function). */
  private async hover(uri: string, position: Position, token: CancellationToken): Promise<Hover | null> {
    const d = this.workspace.doc(uri);
    const answer = await this.calls.call<SummarizePayload>(
      d.uri,
      "summarize",
      { ...this.workspace.contextOf(d), cursor: toAip(position) },
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
  }

  /** workspace/symbol: search's hits in the first workspace folder. */
  private async workspaceSymbols(query: string, token: CancellationToken): Promise<SymbolInformation[]> {
    const root = this.workspace.roots[0];
    if (root === undefined)
      throw new ResponseError(
        -32602,
        "workspace/symbol needs a workspace folder (rootUri or workspaceFolders in initialize)",
      );
    if (query.trim() === "") return [];
    const progress = await this.connection.window.createWorkDoneProgress().catch(() => undefined);
    progress?.begin("Searching the workspace", undefined, `indexing ${root} (first search builds the index)`, false);
    try {
      const p = payloadOf(
        await this.calls.call<SearchPayload>(
          undefined,
          "search",
          { workspace_root: root, query },
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
  }
}

/** An outline as document symbols (classes with their members as children), sorted by line. */
function outlineSymbols(d: TextDocument, o: Outline): DocumentSymbol[] {
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
}

/**
 * The editor's side of `aip lsp`: the open documents (synced incrementally), the workspace folders,
 * and the request context each document gives the agency (its buffer, path, root and language). A
 * file's root is the deepest workspace folder holding it; a file outside every folder has none.
 * LSP positions are 0-based lines and UTF-16 columns; AIP-1 lines are 1-based with the same columns,
 * so only lines are shifted.
 */
import { dirname, isAbsolute, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { TextDocument } from "vscode-languageserver-textdocument";
import {
  ResponseError,
  TextDocuments,
  type InitializeParams,
  type Range,
  type WorkspaceFoldersChangeEvent,
} from "vscode-languageserver/node";
import { foldersAfter } from "./lsp-folders.js";
import type { BufferOnlyRoots } from "./lsp-roots.js";

type Json = Record<string, unknown>;

/** The editor's language ids as AIP-1 languages. */
export const LANGUAGE_IDS: Record<string, string> = {
  typescript: "typescript",
  typescriptreact: "typescript",
  javascript: "javascript",
  javascriptreact: "javascript",
  python: "python",
};

/** AIP-1 (1-based line) ↔ LSP (0-based line); columns are UTF-16 code units in both. */
export const toLsp = (p: { line: number; column: number }) => ({ line: p.line - 1, character: p.column });
export const toAip = (p: { line: number; character: number }) => ({ line: p.line + 1, column: p.character });
/** Lines `start`..`end` (1-based) as an LSP range from the first line's start to the last line's start. */
export const lines = (start: number, end: number): Range => ({
  start: { line: start - 1, character: 0 },
  end: { line: end - 1, character: 0 },
});

export class EditorWorkspace {
  readonly documents = new TextDocuments(TextDocument);
  /** The workspace folders (paths), from initialize and each workspace/didChangeWorkspaceFolders. */
  roots: string[] = [];

  /** `bufferOnly` is told of files outside every folder. */
  constructor(private readonly bufferOnly: BufferOnlyRoots) {}

  /** The folders the client names at initialize (workspaceFolders, else rootUri); non-file URIs ignored. */
  initialize(params: InitializeParams): string[] {
    const folders = params.workspaceFolders?.map((f) => f.uri) ?? (params.rootUri ? [params.rootUri] : []);
    this.roots = folders.filter((u) => u.startsWith("file:")).map((u) => fileURLToPath(u));
    return this.roots;
  }

  /** The folders after a workspace/didChangeWorkspaceFolders. */
  changeFolders(event: WorkspaceFoldersChangeEvent): string[] {
    this.roots = foldersAfter(this.roots, event);
    return this.roots;
  }

  /** An open document, or the LSP error for a request on one that is not open. */
  doc(uri: string): TextDocument {
    const d = this.documents.get(uri);
    if (!d)
      throw new ResponseError(-32602, `Document ${uri} is not open: send textDocument/didOpen before requests on it`);
    return d;
  }

  private rootOf(path: string | undefined): string | undefined {
    if (path === undefined) return this.roots[0];
    return (
      this.roots
        .filter((r) => !relative(r, path).startsWith("..") && !isAbsolute(relative(r, path)))
        // A file outside every workspace folder gets no workspace of its own: its buffer is all there is.
        .sort((a, b) => b.length - a.length)[0]
    );
  }

  /** The request context for a document: its buffer, path, root and language. */
  contextOf(d: TextDocument): Json {
    const path = d.uri.startsWith("file:") ? fileURLToPath(d.uri) : undefined;
    const root = this.rootOf(path);
    // With no folder at all the editor is in single-file mode by choice: nothing to tell.
    if (path !== undefined && root === undefined && this.roots.length > 0)
      this.bufferOnly.outsideFolders(dirname(path));
    return {
      source_code: d.getText(),
      ...(LANGUAGE_IDS[d.languageId] ? { language: LANGUAGE_IDS[d.languageId] } : {}),
      ...(root !== undefined && path !== undefined ? { file_path: path, workspace_root: root } : {}),
    };
  }
}

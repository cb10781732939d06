/**
 * Code actions in `aip lsp`: the verified fixes of the document's last diagnosis (lsp-diagnose.ts),
 * and "Generate tests for the function at the cursor". Listing them runs nothing (no agent is asked):
 * the actions are offered from what the editor already knows, and testgen is asked only when the user
 * picks its action (codeAction/resolve), whose edit creates the test file or extends the one there.
 */
import { lstatSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";
import {
  CodeActionKind,
  type CancellationToken,
  type CodeAction,
  type CodeActionParams,
  type Connection,
  type TextEdit,
  type WorkspaceEdit,
} from "vscode-languageserver/node";
import type { z } from "zod";
import type { TestgenPayloadSchema } from "../../protocol/contract/actions.js";
import { readContainedSync } from "../../agents/lib/code/workspace.js";
import type { AgencyCalls } from "./lsp-calls.js";
import { LANGUAGE_IDS, toAip, type EditorWorkspace } from "./lsp-documents.js";

type TestgenPayload = z.output<typeof TestgenPayloadSchema>;

export class CodeActionsFeature {
  constructor(
    private readonly connection: Connection,
    private readonly workspace: EditorWorkspace,
    private readonly calls: AgencyCalls,
    /** The verified fixes of the last diagnosis for the range (published with the document's diagnostics). */
    private readonly quickFixes: (params: CodeActionParams, token: CancellationToken) => Promise<CodeAction[]>,
  ) {}

  listen(): void {
    this.connection.onCodeAction((params, token) => this.list(params, token));
    this.connection.onCodeActionResolve((action, token) => this.resolveTestgen(action, token));
  }

  /** textDocument/codeAction: the quick fixes, and the testgen action in a workspace. */
  private async list(params: CodeActionParams, token: CancellationToken): Promise<CodeAction[]> {
    const d = this.workspace.documents.get(params.textDocument.uri);
    if (!d || LANGUAGE_IDS[d.languageId] === undefined) return [];
    const ctx = this.workspace.contextOf(d);
    const fixes = await this.quickFixes(params, token);
    if (ctx.workspace_root === undefined) return fixes;
    const action: CodeAction = {
      title: "Generate tests for the function at the cursor (aip testgen)",
      kind: CodeActionKind.Source,
      data: { uri: d.uri, version: d.version, position: params.range.start },
    };
    return [...fixes, action];
  }

  /** codeAction/resolve of the testgen action: testgen's tests as the edit (none when it has no function there). */
  private async resolveTestgen(action: CodeAction, token: CancellationToken): Promise<CodeAction> {
    const data = action.data as { uri?: unknown; position?: { line?: unknown; character?: unknown } } | undefined;
    if (typeof data?.uri !== "string" || typeof data.position?.line !== "number") return action;
    const d = this.workspace.documents.get(data.uri);
    if (!d) return action;
    const ctx = this.workspace.contextOf(d);
    if (ctx.workspace_root === undefined) return action;
    const position = { line: data.position.line, character: Number(data.position.character) || 0 };
    const answer = await this.calls.call<TestgenPayload>(
      d.uri,
      "testgen",
      { ...ctx, cursor: toAip(position) },
      {},
      token,
    );
    // No function at the cursor (or a buffer that does not parse): the action has no edit.
    if (!answer.ok) return action;
    const p = answer.payload;
    const root = ctx.workspace_root as string;
    const testPath = join(root, p.test_path.split("/").join(sep));
    if (!isInsideRoot(root, testPath)) return action;
    const uri = pathToFileURL(testPath).href;
    const edit: WorkspaceEdit = { documentChanges: [] };
    const open = this.workspace.documents.get(uri);
    let existing = open?.getText();
    if (existing === undefined && lexists(testPath)) {
      // Read the way agents read: no FIFO or device, under the size cap, never through a link out of the root.
      existing = readContainedSync(realRootOf(root), testPath);
      if (existing === undefined) {
        this.connection.console.warn(
          `aip lsp: the test file is not a readable regular file inside the workspace: no edit`,
        );
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
  }
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

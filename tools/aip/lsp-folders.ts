/**
 * workspace/didChangeWorkspaceFolders in `aip lsp`: the editor's folder list after a change. Added
 * folders become workspaces of the files under them; an embedded agency also allows them as roots
 * (and stops allowing removed ones), which restarts it (agency.ts, `setClientRoots`).
 */
import { fileURLToPath } from "node:url";
import type { WorkspaceFoldersChangeEvent } from "vscode-languageserver/node";

/** The folders (paths) after `event`: removed ones dropped, added ones appended, each once; non-file URIs ignored. */
export function foldersAfter(folders: readonly string[], event: WorkspaceFoldersChangeEvent): string[] {
  const paths = (list: readonly { uri: string }[]): string[] =>
    list.filter((f) => f.uri.startsWith("file:")).map((f) => fileURLToPath(f.uri));
  const removed = new Set(paths(event.removed));
  return [...new Set([...folders.filter((f) => !removed.has(f)), ...paths(event.added)])];
}

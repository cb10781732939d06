/**
 * The languages AIP-1 requests may name, as a contract shared by the orchestrator (routing by
 * `context.language`, or by `context.file_path`'s extension when it is omitted) and the agents (the
 * language registry in agents/lib/code/languages/ loads `folder`'s implementation). Adding a language
 * is one line here and its folder there (docs/architecture.md "Adding a language").
 */
import { extname } from "node:path";

export interface LanguageSpec {
  /** The canonical id: what manifests declare and responses report. */
  id: string;
  /** Every `context.language` value that means it (LSP language ids included), lowercase, `id` first. */
  names: readonly string[];
  /** File extensions that imply it, lowercase with the dot. */
  extensions: readonly string[];
  /** The folder under agents/lib/code/languages/ that implements it. */
  folder: string;
}

export const LANGUAGE_SPECS = [
  {
    id: "typescript",
    names: ["typescript", "typescriptreact", "ts", "tsx"],
    extensions: [".ts", ".mts", ".cts", ".tsx"],
    folder: "typescript",
  },
  {
    id: "javascript",
    names: ["javascript", "javascriptreact", "js", "jsx"],
    extensions: [".js", ".mjs", ".cjs", ".jsx"],
    folder: "typescript",
  },
  { id: "python", names: ["python", "py"], extensions: [".py", ".pyi"], folder: "python" },
] as const satisfies readonly LanguageSpec[];

export type LanguageId = (typeof LANGUAGE_SPECS)[number]["id"];

/** Every `context.language` value some language accepts, in table order. */
export const LANGUAGE_NAMES: readonly string[] = LANGUAGE_SPECS.flatMap((e) => e.names);

/** The language a name (`python`, `typescriptreact`, …) means, if any. */
export function languageByName(name: string): (typeof LANGUAGE_SPECS)[number] | undefined {
  const n = name.toLowerCase();
  return LANGUAGE_SPECS.find((e) => (e.names as readonly string[]).includes(n));
}

/** The language a path's extension implies, if any. */
export function languageByPath(path: string): (typeof LANGUAGE_SPECS)[number] | undefined {
  const ext = extname(path).toLowerCase();
  return ext ? LANGUAGE_SPECS.find((e) => (e.extensions as readonly string[]).includes(ext)) : undefined;
}

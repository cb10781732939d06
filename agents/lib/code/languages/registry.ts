/**
 * The language registry: a language id (and the names requests may use for it) and the file
 * extensions that imply it, to the implementation in its folder, loaded on first use (Python's parser
 * is WebAssembly compiled at load; a TS-only process never pays for it). Adding a language is one
 * folder beside python/ and one line here (docs/architecture.md "Adding a language").
 */
import { extname } from "node:path";
import { AipError } from "../../../../protocol/errors.js";
import type { CodeLanguage, LanguageId } from "./types.js";

export interface LanguageEntry {
  id: LanguageId;
  /** What `context.language` may say for it (LSP language ids included), lowercase. */
  names: readonly string[];
  /** File extensions, lowercase with the dot. */
  extensions: readonly string[];
  load(): Promise<CodeLanguage>;
}

export const LANGUAGE_REGISTRY: readonly LanguageEntry[] = [
  {
    id: "typescript",
    names: ["typescript", "typescriptreact", "ts", "tsx"],
    extensions: [".ts", ".mts", ".cts", ".tsx"],
    load: async () => (await import("./typescript/index.js")).typescript as CodeLanguage,
  },
  {
    id: "javascript",
    names: ["javascript", "javascriptreact", "js", "jsx"],
    extensions: [".js", ".mjs", ".cjs", ".jsx"],
    load: async () => (await import("./typescript/index.js")).javascript as CodeLanguage,
  },
  {
    id: "python",
    names: ["python", "py"],
    extensions: [".py", ".pyi"],
    load: async () => {
      const { python } = await import("./python/index.js");
      await python.load();
      return python as unknown as CodeLanguage;
    },
  },
];

/** Every `context.language` value some language accepts, in registry order. */
export const LANGUAGE_NAMES: readonly string[] = LANGUAGE_REGISTRY.flatMap((e) => e.names);

/** The registry entry for a language name (`python`, `typescriptreact`, …), if any. */
export function languageByName(name: string): LanguageEntry | undefined {
  const n = name.toLowerCase();
  return LANGUAGE_REGISTRY.find((e) => e.names.includes(n));
}

/** The registry entry a path's extension implies, if any. */
export function languageByPath(path: string): LanguageEntry | undefined {
  const ext = extname(path).toLowerCase();
  return ext ? LANGUAGE_REGISTRY.find((e) => e.extensions.includes(ext)) : undefined;
}

/**
 * The language of a request: `context.language` when given (AIP_ERR_INVALID_FIELD naming the accepted
 * values when unknown), else the one `file_path`'s extension implies, else `fallback`.
 */
export function requestLanguage(language?: string, filePath?: string, fallback: LanguageId = "typescript"): LanguageId {
  if (language !== undefined) {
    const entry = languageByName(language);
    if (!entry) {
      throw new AipError(
        "AIP_ERR_INVALID_FIELD",
        `context.language: expected one of ${LANGUAGE_REGISTRY.map((e) => e.names[0]).join(", ")} (or ${LANGUAGE_NAMES.filter((n) => !LANGUAGE_REGISTRY.some((e) => e.names[0] === n)).join(", ")}), got ${JSON.stringify(language)}`,
        { extensions: { errors: [{ path: "context.language", message: "unsupported language" }] } },
      );
    }
    return entry.id;
  }
  return (filePath !== undefined ? languageByPath(filePath)?.id : undefined) ?? fallback;
}

const loaded = new Map<LanguageId, Promise<CodeLanguage>>();

/** The implementation of a language, loaded once per process (a failed load is retried next time). */
export function loadLanguage(id: LanguageId): Promise<CodeLanguage> {
  let p = loaded.get(id);
  if (!p) {
    const entry = LANGUAGE_REGISTRY.find((e) => e.id === id);
    if (!entry) return Promise.reject(new Error(`no language ${id} in the registry`));
    p = entry.load();
    loaded.set(id, p);
    p.catch(() => loaded.delete(id));
  }
  return p;
}

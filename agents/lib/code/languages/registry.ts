/**
 * The language registry: a language id (protocol/contract/languages.ts: the names requests use for it and the
 * file extensions that imply it) to its implementation, the `load` export of its folder here, loaded
 * on first use (Python's parser is WebAssembly compiled at load; a TS-only process never pays for
 * it). Adding a language is one folder beside python/, its line in protocol/contract/languages.ts and its
 * loader in FOLDERS below (docs/architecture.md "Adding a language").
 */
import { AipError } from "../../../../protocol/contract/errors.js";
import {
  LANGUAGE_NAMES,
  LANGUAGE_SPECS,
  languageByName,
  languageByPath,
  type LanguageId,
} from "../../../../protocol/contract/languages.js";
import type { CodeLanguage } from "./types.js";

export { LANGUAGE_NAMES, LANGUAGE_SPECS, languageByName, languageByPath };

/** What each language folder's index.ts exports. */
export interface LanguageFolder {
  load(id: LanguageId): Promise<CodeLanguage>;
}

/**
 * The language of a request: `context.language` when given (AIP_ERR_INVALID_FIELD naming the accepted
 * values when unknown), else the one `file_path`'s extension implies, else `fallback`.
 */
export function requestLanguage(language?: string, filePath?: string, fallback: LanguageId = "typescript"): LanguageId {
  if (language !== undefined) {
    const entry = languageByName(language);
    if (!entry) {
      const ids = LANGUAGE_SPECS.map((e) => e.id as string);
      throw new AipError(
        "AIP_ERR_INVALID_FIELD",
        `context.language: expected one of ${ids.join(", ")} (or ${LANGUAGE_NAMES.filter((n) => !ids.includes(n)).join(", ")}), got ${JSON.stringify(language)}`,
        { extensions: { errors: [{ path: "context.language", message: "unsupported language" }] } },
      );
    }
    return entry.id;
  }
  return (filePath !== undefined ? languageByPath(filePath)?.id : undefined) ?? fallback;
}

/**
 * Each folder's module, by the folder name protocol/contract/languages.ts gives (a static import per folder, so
 * the build and the test runner see them; the type makes a folder without its line a compile error).
 */
const FOLDERS: Record<(typeof LANGUAGE_SPECS)[number]["folder"], () => Promise<LanguageFolder>> = {
  typescript: () => import("./typescript/index.js"),
  python: () => import("./python/index.js"),
};

const loaded = new Map<LanguageId, Promise<CodeLanguage>>();

/** The implementation of a language, loaded once per process (a failed load is retried next time). */
export function loadLanguage(id: LanguageId): Promise<CodeLanguage> {
  let p = loaded.get(id);
  if (!p) {
    const spec = LANGUAGE_SPECS.find((e) => e.id === id);
    if (!spec) return Promise.reject(new Error(`no language ${id} in protocol/contract/languages.ts`));
    p = FOLDERS[spec.folder]().then((m) => m.load(id));
    loaded.set(id, p);
    p.catch(() => loaded.delete(id));
  }
  return p;
}

/** The languages' table (protocol/contract/languages.ts), under the name the first version of this module used. */
export const LANGUAGE_REGISTRY = LANGUAGE_SPECS;

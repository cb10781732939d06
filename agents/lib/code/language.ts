/** Which dialect a source is: by `context.language`, else by the file extension. */
import { extname } from "node:path";
import { AipError } from "../../../protocol/errors.js";
import { LANGUAGE_NAMES, languageByName, languageByPath } from "./languages/registry.js";

export type Language = "typescript" | "javascript";

export interface Dialect {
  language: Language;
  jsx: boolean;
}

/** Languages the code agents accept, from the language registry (each manifest lists those its agent serves). */
export const LANGUAGES: readonly string[] = LANGUAGE_NAMES;

/** What a TypeScript/JavaScript-only path answers for another registered language (`python`). */
function notServedHere(what: string, language: string): AipError {
  return new AipError(
    "AIP_ERR_INVALID_FIELD",
    `${what}: ${language} is not served by this agent; it serves typescript, javascript, typescriptreact, javascriptreact`,
    { extensions: { errors: [{ path: what, message: "language not served" }] } },
  );
}

const BY_EXTENSION: Record<string, Dialect> = {
  ".ts": { language: "typescript", jsx: false },
  ".mts": { language: "typescript", jsx: false },
  ".cts": { language: "typescript", jsx: false },
  ".tsx": { language: "typescript", jsx: true },
  ".js": { language: "javascript", jsx: true },
  ".mjs": { language: "javascript", jsx: true },
  ".cjs": { language: "javascript", jsx: true },
  ".jsx": { language: "javascript", jsx: true },
};

const BY_NAME: Record<string, Dialect> = {
  typescript: { language: "typescript", jsx: false },
  ts: { language: "typescript", jsx: false },
  typescriptreact: { language: "typescript", jsx: true },
  tsx: { language: "typescript", jsx: true },
  javascript: { language: "javascript", jsx: true },
  js: { language: "javascript", jsx: true },
  javascriptreact: { language: "javascript", jsx: true },
  jsx: { language: "javascript", jsx: true },
};

/** True when `path` has an extension the parser understands. */
export function isCodePath(path: string): boolean {
  return Object.hasOwn(BY_EXTENSION, extname(path).toLowerCase());
}

/**
 * The dialect for a request. A `.tsx`/`.jsx` path turns JSX on even when the language
 * says plain "typescript"; with neither, TypeScript without JSX (it also parses plain JS).
 */
export function dialectOf(language?: string, filePath?: string): Dialect {
  const byPath = filePath ? BY_EXTENSION[extname(filePath).toLowerCase()] : undefined;
  if (language !== undefined) {
    const byName = BY_NAME[language.toLowerCase()];
    const other = byName ? undefined : languageByName(language);
    if (other) throw notServedHere("context.language", other.id);
    if (!byName) {
      throw new AipError(
        "AIP_ERR_INVALID_FIELD",
        `context.language: expected one of typescript, javascript, typescriptreact, javascriptreact, got ${JSON.stringify(language)}`,
        {
          extensions: { errors: [{ path: "context.language", message: "unsupported language" }] },
        },
      );
    }
    return { language: byName.language, jsx: byName.jsx || (byPath?.jsx ?? false) };
  }
  const other = byPath || !filePath ? undefined : languageByPath(filePath);
  if (other) throw notServedHere("context.file_path", other.id);
  return byPath ?? { language: "typescript", jsx: false };
}

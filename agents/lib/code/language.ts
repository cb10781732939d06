/** Which dialect a source is: by `context.language`, else by the file extension. */
import { extname } from "node:path";
import { AipError } from "../../../protocol/contract/errors.js";

export type Language = "typescript" | "javascript";

export interface Dialect {
  language: Language;
  jsx: boolean;
}

/** Languages the code agents accept (manifests list the same). */
export const LANGUAGES: readonly string[] = [
  "typescript",
  "javascript",
  "typescriptreact",
  "javascriptreact",
  "tsx",
  "jsx",
];

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
  return byPath ?? { language: "typescript", jsx: false };
}

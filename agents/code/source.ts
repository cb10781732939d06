/** The source a request is about: `context.source_code`, or `file_path` read inside `workspace_root`. */
import { relative, sep } from "node:path";
import { AipError } from "../../protocol/errors.js";
import type { AipRequest } from "../../protocol/schemas.js";
import type { ParseCache } from "./cache.js";
import { dialectOf, type Dialect } from "./language.js";
import type { ParsedFile } from "./parse.js";
import { containedPath, readContained, resolveRoot, type ReadOptions } from "./workspace.js";

export interface RequestSource {
  parsed: ParsedFile;
  dialect: Dialect;
  /** The real workspace root, when given. */
  root?: string;
  /** The file's real absolute path, when known (it may not exist yet for an unsaved buffer). */
  absPath?: string;
  /** The path relative to the root with `/` separators, or the file_path as given. */
  displayPath?: string;
}

/** Load and parse the request's source; errors are AIP errors (MISSING_FIELD, FORBIDDEN_PATH, PARSE, …). */
export async function loadRequestSource(request: AipRequest, cache: ParseCache, options: ReadOptions = {}): Promise<RequestSource> {
  const { source_code: code, file_path: filePath, workspace_root: rootIn, language } = request.context;
  let root: string | undefined;
  let absPath: string | undefined;
  let text: string;
  if (rootIn !== undefined) root = await resolveRoot(rootIn, options.fs);
  if (typeof code === "string") {
    text = code;
    // An unsaved buffer may name a file that does not exist yet; an existing one is still checked.
    if (root !== undefined && filePath !== undefined) absPath = await containedPath(root, filePath, options.fs, true);
  } else if (filePath !== undefined) {
    if (root === undefined) {
      throw new AipError("AIP_ERR_MISSING_FIELD", "Missing required field: context.workspace_root (needed to read context.file_path)", {
        extensions: { fields: ["context.workspace_root"] },
      });
    }
    absPath = await containedPath(root, filePath, options.fs);
    text = (await readContained(absPath, options)).text;
  } else {
    throw new AipError("AIP_ERR_MISSING_FIELD", "Missing required field: context.source_code or context.file_path (with context.workspace_root)", {
      extensions: { fields: ["context.source_code", "context.file_path"] },
    });
  }
  const dialect = dialectOf(language, filePath);
  const displayPath = root !== undefined && absPath !== undefined ? relative(root, absPath).split(sep).join("/") : filePath;
  const parsed = cache.get(text, dialect, absPath ?? filePath);
  return { parsed, dialect, ...(root !== undefined ? { root } : {}), ...(absPath !== undefined ? { absPath } : {}), ...(displayPath !== undefined ? { displayPath } : {}) };
}

/** The source a request is about: `context.source_code`, or `file_path` read inside `workspace_root`. */
import { relative, sep } from "node:path";
import { AipError } from "../../../protocol/contract/errors.js";
import type { AipRequest } from "../../../protocol/contract/schemas.js";
import type { ParseCache } from "./cache.js";
import { dialectOf, type Dialect } from "./language.js";
import type { LanguageId } from "../../../protocol/contract/languages.js";
import { requestLanguage } from "./languages/registry.js";
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

export type RequestLocation = Omit<RequestSource, "parsed" | "dialect">;

/** Where the request's file is: the real root and the contained path (checked even for a buffer sent as source_code). */
export async function locateRequestFile(request: AipRequest, options: ReadOptions = {}): Promise<RequestLocation> {
  const { file_path: filePath, workspace_root: rootIn } = request.context;
  if (rootIn === undefined) return filePath !== undefined ? { displayPath: filePath } : {};
  const root = await resolveRoot(rootIn, options.fs);
  if (filePath === undefined) return { root };
  // An unsaved buffer may name a file that does not exist yet; an existing one is still checked.
  const absPath = await containedPath(root, filePath, options.fs, typeof request.context.source_code === "string");
  return { root, absPath, displayPath: relative(root, absPath).split(sep).join("/") };
}

/** The request's TypeScript/JavaScript source text and where it lives, not parsed yet (MISSING_FIELD, FORBIDDEN_PATH, size errors). */
export async function readRequestText(
  request: AipRequest,
  options: ReadOptions = {},
): Promise<RequestLocation & { text: string; dialect: Dialect }> {
  const raw = await readRequestRaw(request, options);
  return { ...raw, dialect: dialectOf(request.context.language, request.context.file_path) };
}

/**
 * The request's source text in one of the languages the caller serves, named by the language registry
 * (`context.language`, else `file_path`'s extension): AIP_ERR_INVALID_FIELD for an unknown language or
 * one the caller does not serve, checked before anything is read.
 */
export async function readRequestIn<L extends LanguageId>(
  request: AipRequest,
  served: readonly L[],
  options: ReadOptions = {},
): Promise<RequestLocation & { text: string; language: L }> {
  const { language: name, file_path: filePath } = request.context;
  const language = requestLanguage(name, filePath, served[0]);
  if (!(served as readonly LanguageId[]).includes(language)) {
    const what = name !== undefined ? "context.language" : "context.file_path";
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `${what}: ${language} is not served here; expected ${served.join(", ")}`,
      { extensions: { errors: [{ path: what, message: "language not served" }] } },
    );
  }
  return { ...(await readRequestRaw(request, options)), language: language as L };
}

/** The request's source text and where it lives, whatever its language (the caller picks the parser). */
export async function readRequestRaw(
  request: AipRequest,
  options: ReadOptions = {},
): Promise<RequestLocation & { text: string }> {
  const { source_code: code, file_path: filePath, workspace_root: rootIn } = request.context;
  let text: string;
  if (filePath !== undefined && rootIn === undefined && typeof code !== "string") {
    throw new AipError(
      "AIP_ERR_MISSING_FIELD",
      "Missing required field: context.workspace_root (needed to read context.file_path)",
      {
        extensions: { fields: ["context.workspace_root"] },
      },
    );
  }
  const loc = await locateRequestFile(request, options);
  const { root, absPath, displayPath } = loc;
  if (typeof code === "string") {
    text = code;
  } else if (filePath !== undefined) {
    text = (await readContained(root!, absPath!, options)).text;
  } else {
    throw new AipError(
      "AIP_ERR_MISSING_FIELD",
      "Missing required field: context.source_code or context.file_path (with context.workspace_root)",
      {
        extensions: { fields: ["context.source_code", "context.file_path"] },
      },
    );
  }
  return {
    text,
    ...(root !== undefined ? { root } : {}),
    ...(absPath !== undefined ? { absPath } : {}),
    ...(displayPath !== undefined ? { displayPath } : {}),
  };
}

/** Load and parse the request's source; errors are AIP errors (MISSING_FIELD, FORBIDDEN_PATH, PARSE, …). */
export async function loadRequestSource(
  request: AipRequest,
  cache: ParseCache,
  options: ReadOptions = {},
): Promise<RequestSource> {
  const { text, ...rest } = await readRequestText(request, options);
  const key = rest.absPath ?? request.context.file_path;
  const parsed = cache.get(text, rest.dialect, key, rest.displayPath ?? key);
  return { parsed, ...rest };
}

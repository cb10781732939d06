/** agent-complete's TypeScript part (language.ts): the placeholder parse, its slice and symbol table, the splice gate. */
import { AipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import type { ParseCache } from "../lib/code/cache.js";
import { dialectOf, type Dialect } from "../lib/code/language.js";
import { partialFields } from "../lib/code/parse.js";
import { PLACEHOLDER, parseWithPlaceholder, type PlaceholderParse } from "../lib/code/placeholder.js";
import { offsetAt, positionAt } from "../lib/code/position.js";
import { sliceAt } from "../lib/code/slice.js";
import { locateRequestFile, type RequestLocation } from "../lib/code/source.js";
import { moduleSymbols, type SymbolEntry } from "../lib/code/symbols.js";
import { readContained } from "../lib/code/workspace.js";
import { codeContext } from "./context.js";
import type { CompletionLanguage, PromptText, Sliced } from "./language.js";
import { headerText, localSymbolsLine, symbolsBlock } from "./prompt.js";

/** A TypeScript buffer at the cursor: its dialect, its parse with the placeholder, the names in scope. */
export interface TypeScriptSliced extends Sliced {
  dialect: Dialect;
  placed: PlaceholderParse;
  scope: SymbolEntry[];
}

/** TypeScript and JavaScript, parsed through `cache`. */
export function typescriptLanguage(cache: ParseCache): CompletionLanguage<TypeScriptSliced> {
  return {
    read: readSource,
    slice: (request, source, starts, loc) => sliceAtCursor(cache, request, source, starts, loc),
    prompt: promptText,
    gate: ({ dialect, placed }) => ({ dialect, base: { file: placed.parsed, extra: placed.extra } }),
    partial: ({ placed, starts }) => partialFields(placed.file, starts),
  };
}

/** The request's text: its buffer, else its file read inside the workspace. */
async function readSource(request: AipRequest): Promise<{ source: string; loc: RequestLocation }> {
  const code = request.context.source_code;
  const loc = await locateRequestFile(request);
  if (typeof code === "string") return { source: code, loc };
  if (loc.absPath !== undefined) return { source: (await readContained(loc.root!, loc.absPath)).text, loc };
  throw new AipError(
    "AIP_ERR_MISSING_FIELD",
    "Missing required field: context.source_code or context.file_path (with context.workspace_root)",
    { extensions: { fields: ["context.source_code", "context.file_path"] } },
  );
}

/** Slice: the buffer parsed with a placeholder at the cursor, the enclosing function and the code around the cursor. */
function sliceAtCursor(
  cache: ParseCache,
  request: AipRequest,
  source: string,
  starts: readonly number[],
  loc: RequestLocation,
): TypeScriptSliced {
  const dialect = dialectOf(request.context.language, request.context.file_path);
  const cursor = request.context.cursor ?? positionAt(source.length, starts);
  const offset = offsetAt(source, cursor, starts);
  // Lazy: statements after the edit owe their descendants a shift until something descends into them (incremental.ts).
  const placed = parseWithPlaceholder(cache, source, offset, dialect, loc.absPath ?? request.context.file_path, {
    lazy: true,
  });
  const slice = sliceAt(placed.parsed, cursor, { moduleScope: false, starts }); // module symbols come from promptText
  const code = codeContext(source, offset, slice.fn, starts);
  return { source, starts, loc, dialect, cursor, offset, placed, code, scope: slice.symbols };
}

/** Prompt: the header, the module's symbol table and the local names (the placeholder never among them). */
function promptText({ dialect, loc, placed, scope }: TypeScriptSliced): PromptText {
  const header = headerText(dialect.language, loc.displayPath);
  const table = moduleSymbols(placed.parsed.program, placed.parsed.source);
  const modSymbols = table.some((s) => s.name === PLACEHOLDER) ? table.filter((s) => s.name !== PLACEHOLDER) : table;
  return {
    header,
    symbols: symbolsBlock(modSymbols),
    locals: localSymbolsLine(scope.filter((s) => s.name !== PLACEHOLDER)),
  };
}

/** The complete action without a model: symbols in scope, members after `.`, keyword snippets, ranked. */
import { actionInput } from "../../../protocol/contract/actions.js";
import type { AipRequest } from "../../../protocol/contract/schemas.js";
import { ParseCache } from "../code/cache.js";
import { ancestorsAt } from "../code/cursor.js";
import { dialectOf } from "../code/language.js";
import { guardHandler, partialFields, type Node, type ParsedFile } from "../code/parse.js";
import { lineStarts, offsetAt, positionAt } from "../code/position.js";
import { resolveSpecifier } from "../code/resolve.js";
import { readRequestText } from "../code/source.js";
import { symbolsAt } from "../code/slice.js";
import { moduleSymbols } from "../code/symbols.js";
import type { HandlerContext } from "../runtime/types.js";
import { completionContext } from "./context.js";
import { GLOBALS, SNIPPETS } from "./keywords.js";
import { exportedShape, membersOf, resolveReceiver, type Member, type Shape } from "./members.js";
import { rank, type Candidate } from "./rank.js";
import { TYPED_LIMITS, checkedFileOf, type TypedEngine } from "./engine.js";
import { prefixAt } from "./typed.js";
import { PLACEHOLDER, parseWithPlaceholder, preparePlaceholder } from "../code/placeholder.js";
import { completePython, isPythonRequest } from "./python/handler.js";
import type { PyrightEngine } from "./python/pyright.js";

/** Time kept back from the deadline for the syntactic answer when the checker is asked first: this share of what is left, at least the floor. */
const SYNTACTIC_RESERVE_SHARE = 0.4;
const SYNTACTIC_RESERVE_MS = 100;

function memberKindOf(m: Member): string {
  return m.kind === "enum-member"
    ? "enumMember"
    : m.kind === "getter" || m.kind === "setter"
      ? "property"
      : m.kind === "export"
        ? "variable"
        : m.kind;
}

/** Exports of a local module imported as a namespace (`import * as m from "./m.js"`), resolved and read by agents/lib/code/resolve.ts. */
async function moduleExports(root: string, fromFile: string, specifier: string, cache: ParseCache): Promise<Member[]> {
  if (!specifier.startsWith(".")) return [];
  const resolved = await resolveSpecifier(root, fromFile, specifier);
  if (!("file" in resolved)) return [];
  try {
    const { text, path } = resolved.file;
    const parsed = cache.get(text, dialectOf(undefined, path), path);
    return moduleSymbols(parsed.program, parsed.source)
      .filter((s) => s.exported)
      .map((s) => ({ name: s.name, kind: "export" as const, detail: s.kind, line: 0 }));
  } catch {
    return [];
  }
}

/**
 * Members of a name imported from a local module (`import { Registry } from "./registry.js"`): the
 * class, interface, enum or object it declares there, read the way namespace imports are. Public
 * members only: the importer is outside the class.
 */
async function importedMembers(
  root: string,
  fromFile: string,
  shape: Extract<Shape, { kind: "imported" }>,
  cache: ParseCache,
): Promise<Member[]> {
  if (!shape.specifier.startsWith(".")) return [];
  const resolved = await resolveSpecifier(root, fromFile, shape.specifier);
  if (!("file" in resolved)) return [];
  try {
    const { text, path } = resolved.file;
    const parsed = cache.get(text, dialectOf(undefined, path), path);
    const there = exportedShape(parsed.program, shape.name, shape.side);
    return there ? membersOf(there, parsed.program, parsed.source, false) : [];
  } catch {
    return [];
  }
}

/** The request's buffer and the cursor in it. */
interface Buffer {
  request: AipRequest;
  loc: Awaited<ReturnType<typeof readRequestText>>;
  source: string;
  starts: readonly number[];
  cursor: { line: number; column: number };
  offset: number;
}

/** Why the syntactic engine answers (`engine_reason`), and the checker's fallbacks when it was asked. */
interface NotTyped {
  reason: string;
  fallbacks: string[];
}

type Constraints = ReturnType<typeof actionInput<"complete">>["constraints"];

/**
 * The complete handler over a parse cache (one per process). With a typed engine, a request naming a
 * file of a workspace is answered by the checker when it answers within the budget (`engine: "typed"`),
 * and by the syntactic engine otherwise (`engine: "syntactic"`, with `engine_reason`).
 */
export function createCompleteLite(cache = new ParseCache(), typed?: TypedEngine, pyright?: PyrightEngine) {
  return guardHandler(async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    if (isPythonRequest(request)) return completePython(request, ctx, pyright);
    const constraints = actionInput("complete", request).constraints;
    // The buffer may not parse mid-edit (`this.` + newline): parseAround retries with a placeholder.
    const loc = await readRequestText(request);
    const source = loc.text;
    const starts = lineStarts(source);
    const cursor = request.context.cursor ?? positionAt(source.length, starts);
    const buffer: Buffer = { request, loc, source, starts, cursor, offset: offsetAt(source, cursor, starts) };
    let notTyped: NotTyped = {
      reason: "no workspace_root and file_path: the checker needs a workspace",
      fallbacks: [],
    };
    const file = checkedFileOf(loc);
    if (typed && file) {
      const r = await askChecker(typed, file, cache, buffer, constraints, ctx);
      if ("payload" in r) return r.payload;
      notTyped = r;
    }
    return syntacticAnswer(cache, buffer, constraints.max_items ?? 50, notTyped, ctx);
  });
}

/**
 * The checker's answer within its budget, or why there is none. At an identifier the checker gets a
 * short budget, extended only when the syntactic answer would need a full parse of the buffer.
 */
async function askChecker(
  typed: TypedEngine,
  file: { root: string; path: string },
  cache: ParseCache,
  { request, loc, source, starts, cursor, offset }: Buffer,
  constraints: Constraints,
  ctx: HandlerContext,
): Promise<{ payload: unknown } | NotTyped> {
  const room = ctx.remainingMs() - Math.max(SYNTACTIC_RESERVE_MS, SYNTACTIC_RESERVE_SHARE * ctx.remainingMs());
  const identifier = constraints.typed_wait_ms === undefined && !prefixAt(source, offset).afterDot;
  const budget = Math.min(
    constraints.typed_wait_ms ?? (identifier ? TYPED_LIMITS.identifierBudgetMs : TYPED_LIMITS.budgetMs),
    room,
  );
  // At an identifier the syntactic answer is as good, unless it needs a full parse of the buffer (a
  // large file's costs more than the checker's rebuild): then the checker gets the usual budget.
  // Its parse is prepared while the checker works (docs/performance.md, "Type-aware completion"):
  // at the budget only the ranking is left, and whether a full parse would be needed is known.
  const absPath = file.path;
  const prepare = (): boolean =>
    preparePlaceholder(cache, source, offset, dialectOf(request.context.language, absPath), absPath, {
      label: loc.displayPath ?? request.context.file_path,
      patches: 2,
    });
  let prepared: boolean | undefined;
  const extend = identifier
    ? { untilMs: Math.min(TYPED_LIMITS.budgetMs, room), worthIt: () => !(prepared ?? prepare()) }
    : undefined;
  const meanwhile = identifier
    ? { afterMs: TYPED_LIMITS.identifierPrepareMs, run: () => void (prepared = prepare()) }
    : undefined;
  const r =
    budget > 0
      ? await typed.complete(
          { root: file.root, path: absPath, text: source, offset, limit: constraints.max_items ?? 50 },
          budget,
          ctx.log,
          extend,
          meanwhile,
        )
      : { reason: "no time left for the checker", fallback: [] };
  ctx.timer.mark("typed");
  const fallbacks = r.fallback;
  if ("answer" in r && (r.answer.items.length > 0 || r.answer.context === "identifier")) {
    const { prefix, start } = prefixAt(source, offset);
    return {
      payload: {
        engine: "typed",
        items: r.answer.items,
        prefix,
        context: r.answer.context,
        replace: { start: positionAt(start, starts), end: cursor },
        ...(fallbacks.length > 0 ? { fallbacks } : {}),
      },
    };
  }
  return { reason: "answer" in r ? "the checker knows no members of this receiver" : r.reason, fallbacks };
}

/** The syntactic engine's answer: the buffer parsed (patched at the cursor if need be), its candidates ranked. */
async function syntacticAnswer(
  cache: ParseCache,
  { request, loc, source, starts, cursor, offset }: Buffer,
  limit: number,
  { reason, fallbacks }: NotTyped,
  ctx: HandlerContext,
): Promise<unknown> {
  const { file_path: filePath, language } = request.context;
  const cc = completionContext(source, offset);
  // After a `.` whose receiver the syntactic engine cannot follow (`f(x).`): members or nothing, never identifiers.
  const afterDot = cc.receiver === undefined && prefixAt(source, offset).afterDot;
  // A patch at the cursor may make the broken buffer whole (`this.` + newline): two guesses at most here.
  const { parsed, file } = parseWithPlaceholder(
    cache,
    source,
    offset,
    dialectOf(language, loc.absPath ?? filePath),
    loc.absPath ?? filePath,
    {
      label: loc.displayPath ?? filePath,
      patches: 2,
    },
  );
  ctx.timer.mark("parse");
  const chain = ancestorsAt(parsed.program, offset);
  let candidates: Candidate[] = [];
  let receiverKind: string | undefined;
  if (cc.receiver !== undefined) {
    const resolved = resolveReceiver(cc.receiver, chain, parsed.program, parsed.source);
    receiverKind = resolved?.shape.kind;
    candidates = await memberCandidates(resolved, loc, parsed, cache);
  } else if (!afterDot) {
    candidates = scopeCandidates(parsed, chain, offset, cc.prefix);
  }
  const items = rank(candidates, cc.prefix, cursor.line, limit);
  ctx.timer.mark("complete");
  return {
    engine: "syntactic",
    engine_reason: reason,
    ...(fallbacks.length > 0 ? { fallbacks } : {}),
    items,
    prefix: cc.prefix,
    context: cc.receiver !== undefined || afterDot ? "member" : "identifier",
    ...(cc.receiver !== undefined ? { receiver: cc.receiver, receiver_kind: receiverKind ?? "unknown" } : {}),
    replace: { start: positionAt(cc.start, starts), end: cursor },
    ...partialFields(file, starts),
  };
}

/** After `receiver.`: the members of what the receiver resolves to (a local module's exports, an imported type's members). */
async function memberCandidates(
  resolved: ReturnType<typeof resolveReceiver>,
  loc: Buffer["loc"],
  parsed: ParsedFile,
  cache: ParseCache,
): Promise<Candidate[]> {
  let members: Member[] = [];
  if (resolved?.shape.kind === "module") {
    if (loc.root !== undefined && loc.absPath !== undefined)
      members = await moduleExports(loc.root, loc.absPath, resolved.shape.specifier, cache);
  } else if (resolved?.shape.kind === "imported") {
    if (loc.root !== undefined && loc.absPath !== undefined)
      members = await importedMembers(loc.root, loc.absPath, resolved.shape, cache);
  } else if (resolved) {
    members = membersOf(resolved.shape, parsed.program, parsed.source, resolved.viaThis);
  }
  const candidates: Candidate[] = [];
  for (const m of members) {
    if (m.name === PLACEHOLDER) continue;
    candidates.push({
      label: m.name,
      kind: memberKindOf(m),
      insert_text: m.kind === "method" ? `${m.name}($0)` : m.name,
      detail: m.detail,
      base: 50,
      ...(m.line ? { line: m.line } : {}),
    });
  }
  return candidates;
}

/** At an identifier: the symbols in scope, nearest first, then keyword snippets and globals once a prefix is typed. */
function scopeCandidates(parsed: ParsedFile, chain: Node[], offset: number, prefix: string): Candidate[] {
  const candidates: Candidate[] = [];
  for (const s of symbolsAt(parsed, chain, offset)) {
    if (s.name === PLACEHOLDER) continue;
    const kind =
      s.kind === "const" || s.kind === "let" || s.kind === "var" || s.kind === "parameter"
        ? "variable"
        : s.kind === "type"
          ? "typeParameter"
          : s.kind === "import"
            ? "module"
            : s.kind;
    const detail =
      s.kind === "import"
        ? `import ${s.detail === "*" ? "* as" : s.detail} from "${s.source}"`
        : `${s.kind}${s.detail ? `: ${s.detail}` : ""}`;
    candidates.push({
      label: s.name,
      kind,
      insert_text: s.name,
      detail,
      base: 10 * s.scope_depth + 20,
      line: s.line,
    });
  }
  if (prefix !== "") {
    for (const k of SNIPPETS)
      candidates.push({ label: k.label, kind: "snippet", insert_text: k.insert_text, detail: k.detail, base: 0 });
    for (const g of GLOBALS)
      candidates.push({ label: g, kind: "variable", insert_text: g, detail: "global", base: -10 });
  }
  return candidates;
}

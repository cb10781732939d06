/**
 * Completions from the TypeScript checker (docs/agents.md, "Type-aware completion"): members of the
 * receiver's real type after `.`, identifiers in scope (type or value position as the checker decides),
 * auto-import candidates marked. Ranked: how the label matches what was typed (exact-case prefix
 * first), then how often and how near the name is used in the buffer, then the checker's own tier.
 * The member or variable being declared at the cursor is never offered.
 */
import type * as TS from "typescript";
import type { StaleView, WorkspaceService } from "../code/service.js";
import { MEMBER_WEIGHTS, memberFacts, priorPoints, workspaceUses, type MemberFacts } from "./member-rank.js";
import { matchScore } from "./rank.js";
import { changeRange } from "../code/stale.js";
import { ts } from "../code/typescript.js";

export interface TypedItem {
  label: string;
  kind: string;
  insert_text: string;
  detail: string;
  auto_import?: true;
  source?: string;
  /** The checker's one-line signature (`add(item: string): void`), for the first `details` items asked. */
  signature?: string;
}

export interface TypedAnswer {
  items: TypedItem[];
  context: "member" | "identifier";
  /** Candidates the checker offered before filtering by the prefix. */
  offered: number;
}

const KINDS: Record<string, string> = {
  property: "property",
  method: "method",
  getter: "property",
  setter: "property",
  accessor: "property",
  function: "function",
  "local function": "function",
  var: "variable",
  let: "variable",
  const: "variable",
  "local var": "variable",
  using: "variable",
  "await using": "variable",
  parameter: "variable",
  class: "class",
  "local class": "class",
  interface: "interface",
  type: "typeParameter",
  "type parameter": "typeParameter",
  enum: "enum",
  "enum member": "enumMember",
  module: "module",
  "external module name": "module",
  alias: "variable",
  keyword: "keyword",
  "primitive type": "keyword",
  constructor: "constructor",
  string: "text",
  label: "text",
  directory: "folder",
  script: "file",
};

/** Identifier occurrences in a buffer: how often each name is used, after which receiver, and how near the cursor. */
export interface Usage {
  count: Map<string, number>;
  /** `receiver.name` → count (the receiver's last identifier). */
  member: Map<string, number>;
  /** name → distance of its nearest occurrence to the cursor (other than at the word being typed), within PROXIMITY_WINDOW. */
  nearest: Map<string, number>;
}

/** Occurrences farther than this from the cursor (characters) add nothing for proximity. */
const PROXIMITY_WINDOW = 8000;

/** True when `text[from, to)` is a member access's dot: blanks, `.` or `?.`, blanks. */
function isDot(text: string, from: number, to: number): boolean {
  let dot = false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 46 /* . */) {
      if (dot) return false;
      dot = true;
    } else if (c === 63 /* ? */) {
      if (dot || text.charCodeAt(i + 1) !== 46) return false;
    } else if (c !== 32 && c !== 9 && c !== 10 && c !== 13) return false;
  }
  return dot;
}

/**
 * A buffer's identifier occurrences (`NAME_RE`'s matches, in order) and the counts made from them,
 * kept from one collection to the next: a keystroke changes a few of them, and scanning a 2,000-line
 * buffer again for each collection cost about as much as TypeScript's binding of it.
 */
interface Tokens {
  path: string;
  text: string;
  names: string[];
  at: number[];
  count: Map<string, number>;
  member: Map<string, number>;
}

const NAME_RE = /#?[A-Za-z_$][\w$]*/g;
let tokens: Tokens | undefined;
/** Names as separate strings, so that a kept occurrence does not keep an old buffer's text alive through a slice. */
const interned = new Map<string, string>();
function intern(name: string): string {
  let v = interned.get(name);
  if (v === undefined) {
    if (interned.size > 100_000) interned.clear();
    v = JSON.parse(JSON.stringify(name)) as string;
    interned.set(v, v);
  }
  return v;
}

function add(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n === 0) map.delete(key);
  else map.set(key, n);
}

/** Count the member access pairs `names[k - 1].names[k]` for k in [from, to). */
function pairs(
  t: { text: string; names: string[]; at: number[] },
  from: number,
  to: number,
  into: Map<string, number>,
  by: number,
): void {
  for (let k = Math.max(1, from); k < to; k++)
    if (isDot(t.text, t.at[k - 1]! + t.names[k - 1]!.length, t.at[k]!))
      add(into, `${t.names[k - 1]}.${t.names[k]}`, by);
}

/** Scan `text` from `from` (not inside a name): the occurrences, up to the first at or after `stopAfter` for which `stop` says the rest is known. */
function scan(
  text: string,
  from: number,
  stopAfter: number,
  stop: (at: number) => boolean,
): { names: string[]; at: number[]; stoppedAt?: number } {
  const names: string[] = [];
  const at: number[] = [];
  NAME_RE.lastIndex = from;
  for (let m = NAME_RE.exec(text); m; m = NAME_RE.exec(text)) {
    if (m.index >= stopAfter && stop(m.index)) return { names, at, stoppedAt: m.index };
    names.push(intern(m[0]));
    at.push(m.index);
  }
  return { names, at };
}

/** The occurrences of `text` of `path`: updated from the last buffer's when it is the same file, else scanned whole. */
function tokensOf(path: string, text: string): Tokens {
  const old = tokens;
  if (old?.path === path && old.text === text) return old;
  if (old?.path === path) {
    const { span, newLength } = changeRange(old.text, text);
    const delta = newLength - span.length;
    // Kept: the occurrences ending before the edit (the character after each is not part of a name, and unchanged).
    let i0 = 0;
    for (let lo = 0, hi = old.at.length; lo < hi;) {
      const mid = (lo + hi) >> 1;
      if (old.at[mid]! + old.names[mid]!.length < span.start) lo = i0 = mid + 1;
      else hi = mid;
    }
    const from = i0 > 0 ? old.at[i0 - 1]! + old.names[i0 - 1]!.length : 0;
    // Scanned again from there until a match starts where an old one (after the edit) started: the rest is the old one's, moved.
    const oldIndex = (p: number): number => {
      let lo = i0;
      let hi = old.at.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (old.at[mid]! < p) lo = mid + 1;
        else hi = mid;
      }
      return lo < old.at.length && old.at[lo] === p ? lo : -1;
    };
    const fresh = scan(text, from, span.start + newLength, (p) => oldIndex(p - delta) >= 0);
    const j = fresh.stoppedAt === undefined ? old.at.length : oldIndex(fresh.stoppedAt - delta);
    // Counts: the old occurrences [i0, j) and their pairs out, the new ones and theirs in.
    pairs(old, i0, Math.min(j + 1, old.at.length), old.member, -1);
    for (let k = i0; k < j; k++) add(old.count, old.names[k]!, -1);
    // In place (the last buffer's occurrences are not kept): copying arrays of tens of thousands of
    // occurrences per collection cost more than the scan.
    // (A large edit, a paste, is copied: spread into splice's arguments it could overflow the stack.)
    const small = fresh.names.length <= 10_000;
    const names = small ? old.names : old.names.slice(0, i0).concat(fresh.names, old.names.slice(j));
    const at = small ? old.at : old.at.slice(0, i0).concat(fresh.at, old.at.slice(j));
    if (small) {
      names.splice(i0, j - i0, ...fresh.names);
      at.splice(i0, j - i0, ...fresh.at);
    }
    if (delta !== 0) for (let k = i0 + fresh.at.length; k < at.length; k++) at[k]! += delta;
    for (const n of fresh.names) add(old.count, n, 1);
    const next: Tokens = { path, text, names, at, count: old.count, member: old.member };
    pairs(next, i0, Math.min(i0 + fresh.names.length + 1, names.length), next.member, 1);
    return (tokens = next);
  }
  const { names, at } = scan(text, 0, Infinity, () => false);
  const next: Tokens = { path, text, names, at, count: new Map(), member: new Map() };
  for (const n of names) add(next.count, n, 1);
  pairs(next, 0, names.length, next.member, 1);
  return (tokens = next);
}

export function usageOf(path: string, text: string, offset: number, start: number): Usage {
  const t = tokensOf(path, text);
  const nearest = new Map<string, number>();
  let lo = 0;
  for (let hi = t.at.length; lo < hi;) {
    const mid = (lo + hi) >> 1;
    if (t.at[mid]! < offset - PROXIMITY_WINDOW) lo = mid + 1;
    else hi = mid;
  }
  for (let k = lo; k < t.at.length && t.at[k]! <= offset + PROXIMITY_WINDOW; k++) {
    const d = Math.abs(t.at[k]! - offset);
    if (t.at[k] !== start && d < (nearest.get(t.names[k]!) ?? Infinity)) nearest.set(t.names[k]!, d);
  }
  // Copies: the counts go on changing with the next buffer, a collection keeps its own.
  return { count: new Map(t.count), member: new Map(t.member), nearest };
}

/** The innermost node containing `offset`. */
function nodeAt(sf: TS.SourceFile, offset: number): TS.Node {
  let node: TS.Node = sf;
  for (;;) {
    const child: TS.Node | undefined = node.forEachChild((c) =>
      c.getFullStart() <= offset && offset <= c.getEnd() ? c : undefined,
    );
    if (!child) return node;
    node = child;
  }
}

/** Names not to offer at the cursor: the class member being declared (for `this.`), the variable being initialised. */
function declaredHere(sf: TS.SourceFile, offset: number, member: boolean, receiver: string | undefined): Set<string> {
  const out = new Set<string>();
  for (let n: TS.Node | undefined = nodeAt(sf, offset); n; n = n.parent) {
    if (member) {
      if (
        receiver === "this" &&
        (ts.isMethodDeclaration(n) || ts.isGetAccessor(n) || ts.isSetAccessor(n) || ts.isPropertyDeclaration(n)) &&
        n.parent &&
        ts.isClassLike(n.parent) &&
        ts.isIdentifier(n.name)
      ) {
        out.add(n.name.text);
        break;
      }
    } else if (
      (ts.isVariableDeclaration(n) || ts.isPropertyDeclaration(n) || ts.isPropertyAssignment(n)) &&
      n.initializer &&
      n.initializer.getStart(sf) <= offset &&
      ts.isIdentifier(n.name)
    ) {
      out.add(n.name.text);
      break;
    }
    if (ts.isFunctionLike(n) && !ts.isArrowFunction(n) && !member) break;
  }
  return out;
}

/**
 * The standard globals code uses most (ECMAScript, Node and fetch): a small prior over the hundreds of
 * lib globals that share the checker's "global" tier, so `Promise` comes before `PromiseRejectionEvent`.
 */
const COMMON_GLOBALS = new Set([
  "Array",
  "ArrayBuffer",
  "Awaited",
  "AbortController",
  "AbortSignal",
  "Boolean",
  "Buffer",
  "Date",
  "Error",
  "Exclude",
  "Extract",
  "Function",
  "Headers",
  "InstanceType",
  "Iterable",
  "IterableIterator",
  "JSON",
  "Map",
  "Math",
  "NonNullable",
  "Number",
  "Object",
  "Omit",
  "Parameters",
  "Partial",
  "Pick",
  "Promise",
  "PromiseLike",
  "RangeError",
  "Readonly",
  "ReadonlyArray",
  "Record",
  "RegExp",
  "Request",
  "Required",
  "Response",
  "ReturnType",
  "Set",
  "String",
  "Symbol",
  "TypeError",
  "URL",
  "URLSearchParams",
  "Uint8Array",
  "WeakMap",
  "clearTimeout",
  "console",
  "fetch",
  "globalThis",
  "process",
  "queueMicrotask",
  "setTimeout",
  "structuredClone",
  "undefined",
]);

/** TypeScript's sort tier ("11", "z15", …) as a bonus: locals above globals above auto-imports. */
function tierBonus(sortText: string): number {
  const deprecated = sortText.startsWith("z");
  const tier = Number.parseInt(deprecated ? sortText.slice(1) : sortText, 10);
  const base = Number.isNaN(tier) ? 0 : Math.max(-6, (15 - tier) * 3);
  return deprecated ? base - 20 : base;
}

export const PREFERENCES: TS.UserPreferences = {
  includeCompletionsWithInsertText: true,
  includeAutomaticOptionalChainCompletions: true,
  includeCompletionsWithClassMemberSnippets: false,
  includeCompletionsWithObjectLiteralMethodSnippets: false,
  useLabelDetailsInCompletionEntries: true,
  allowIncompleteCompletions: true,
};

/** The identifier characters before `offset` and the non-blank character before them. */
export function prefixAt(text: string, offset: number): { prefix: string; start: number; afterDot: boolean } {
  let start = offset;
  while (start > 0 && /[\w$#]/.test(text[start - 1]!)) start--;
  let i = start;
  while (i > 0 && /\s/.test(text[i - 1]!)) i--;
  const afterDot = text[i - 1] === "." && text[i - 2] !== "." && !/\d/.test(text[i - 2] ?? "");
  return { prefix: text.slice(start, offset), start, afterDot };
}

/** The last identifier of the receiver before a `.` at `dotEnd` (`this`, `url`, `pool`), when there is one. */
function receiverName(text: string, start: number): string | undefined {
  let i = start;
  while (i > 0 && /\s/.test(text[i - 1]!)) i--;
  i--; // the dot
  if (text[i - 1] === "?") i--;
  while (i > 0 && /\s/.test(text[i - 1]!)) i--;
  const end = i;
  while (i > 0 && /[\w$]/.test(text[i - 1]!)) i--;
  return i < end ? text.slice(i, end) : undefined;
}

/** The checker's candidates at a word start, before the typed prefix filters and ranks them. */
interface Collected {
  path: string;
  /** Where the word being typed starts, the text before it and the text after the cursor when collected. */
  start: number;
  before: string;
  after: string;
  prefix: string;
  context: "member" | "identifier";
  receiver?: string;
  excluded: Set<string>;
  usage: Usage;
  /** After `expr.`: what the checker says about the receiver's members (member-rank.ts). */
  facts?: MemberFacts;
  entries: readonly TS.CompletionEntry[];
  incomplete: boolean;
  /** The checker offered values here (a variable, a parameter, a function): not a type position. */
  values: boolean;
  /** Answered by the last program's checker about this newer text, without a rebuild (stale.ts). */
  stale: boolean;
  /** The program whose checker made the list (its auto-import candidates are remembered per program). */
  program: TS.Program;
  /** What that program was rooted at: a list made from the open files' program is not reused once it grew. */
  scope: WorkspaceService["scope"];
}

/**
 * Kinds the checker offers only where a value may stand (not `var`: the lib's `declare var Date` and
 * `interface Date` make one entry, offered in type positions too; lib functions such as `parseInt` are
 * in every value list).
 */
const VALUE_KINDS = new Set(["let", "const", "local var", "parameter", "function", "local function"]);

/** The last collection: the next keystroke that only extends the word being typed filters it again. */
let last: Collected | undefined;
/** The last identifier list: after a member list, a `(`, `)`, `;` or newline goes back to its names. */
let lastNames: Collected | undefined;

/**
 * TypeScript's completion service (services/completions.ts), asked with a program and file of our
 * choosing; read on first use, since the compiler loads after ready.
 */
const completions = () =>
  (
    ts as unknown as {
      Completions: {
        getCompletionsAtPosition(
          host: TS.LanguageServiceHost,
          program: TS.Program,
          log: (message: string) => void,
          file: TS.SourceFile,
          position: number,
          preferences: TS.UserPreferences,
          triggerCharacter: undefined,
          completionKind: undefined,
          cancellationToken: unknown,
          formatContext: undefined,
          includeSymbol: boolean,
        ): TS.CompletionInfo | undefined;
        getCompletionEntryDetails(
          program: TS.Program,
          log: (message: string) => void,
          file: TS.SourceFile,
          position: number,
          entry: { name: string },
          host: TS.LanguageServiceHost,
          formatContext: undefined,
          preferences: TS.UserPreferences,
          cancellationToken: unknown,
        ): TS.CompletionEntryDetails | undefined;
      };
    }
  ).Completions;
const NEVER_CANCELLED = { isCancellationRequested: () => false, throwIfCancellationRequested: () => undefined };
const noLog = (): void => undefined;

export type Checker = (StaleView & { stale: true }) | { program: TS.Program; file: TS.SourceFile; stale: false };

/**
 * The checker for `text` of `path`: the last program's, about this text parsed on its own, when that
 * gives a new program's answer (service.ts `stale`, stale.ts); else the language service's, brought up
 * to date (a new program, the costly path).
 */
function checkerFor(svc: WorkspaceService, path: string, text: string): Checker {
  svc.update(path, text);
  const view = svc.stale(path, text);
  if ("program" in view) return { ...view, stale: true };
  const program = svc.program();
  return { program, file: program.getSourceFile(path)!, stale: false };
}

export function completionsAt(
  svc: WorkspaceService,
  at: Checker,
  path: string,
  offset: number,
  preferences: TS.UserPreferences,
): TS.CompletionInfo | undefined {
  if (!at.stale) return svc.languageService.getCompletionsAtPosition(path, offset, preferences);
  const res = completions().getCompletionsAtPosition(
    at.host,
    at.program,
    noLog,
    at.file,
    offset,
    preferences,
    undefined,
    undefined,
    NEVER_CANCELLED,
    undefined,
    false,
  );
  // The old program still holds this file's old text as a module of its own: a new program would not
  // offer its exports as auto-imports into itself.
  if (res) res.entries = res.entries.filter((e) => (e.data as { fileName?: string } | undefined)?.fileName !== path);
  return res;
}

/** An auto-import candidate (an export of another module, with the import to add), not a name in scope. */
function isAutoImport(e: TS.CompletionEntry): boolean {
  return e.hasAction === true && e.source !== undefined;
}

/** Names in scope: a candidate of this list shadows an auto-import candidate of its name. Keywords do not. */
function scopeNames(entries: readonly TS.CompletionEntry[]): Set<string> {
  const out = new Set<string>();
  for (const e of entries)
    if (!isAutoImport(e) && e.kind !== ts.ScriptElementKind.keyword && e.kind !== ts.ScriptElementKind.warning)
      out.add(e.name);
  return out;
}

/** True when the names in scope allow values (not a type position): the key's half that TypeScript's search filters on. */
function valuePosition(entries: readonly TS.CompletionEntry[]): boolean {
  return entries.some((e) => !isAutoImport(e) && VALUE_KINDS.has(e.kind));
}

/** A word's auto-import candidates, and the names in scope when they were collected. */
interface AutoImports {
  entries: TS.CompletionEntry[];
  scope: Set<string>;
}

/**
 * Auto-import candidates per program, by word and position (value or type): what TypeScript's search
 * of every module's exports found for that word (docs/performance.md, "Type-aware completion"). Within
 * one program they depend on the word (its letters in order), whether a value may stand at the cursor
 * and the names in scope (a name in scope hides the import of its name), not on where the word is
 * typed; the search and the import paths cost as much as the rest of an identifier list again.
 */
const autoImports = new WeakMap<TS.Program, Map<string, AutoImports>>();
/** Words remembered per program; beyond it the map starts over. */
const AUTO_IMPORT_WORDS = 256;

/**
 * The checker's identifier candidates at `offset`, auto-import candidates included once something is
 * typed (TypeScript's own editors do the same): TypeScript's search of the exports runs once per word
 * and position (value or type) and program; another word start with the same letters in the same
 * program asks TypeScript for the names in scope only and adds the candidates found then, less those a
 * name declared since hides. Only for TypeScript files (no JSX tag position, no JavaScript's names of
 * the file), only where TypeScript searched the exports, every import path resolved.
 */
function identifierCompletions(
  svc: WorkspaceService,
  at: Checker,
  path: string,
  text: string,
  offset: number,
  prefix: string,
): TS.CompletionInfo | undefined {
  const ask = (modules: boolean) =>
    completionsAt(svc, at, path, offset, { ...PREFERENCES, includeCompletionsForModuleExports: modules });
  if (prefix === "") return ask(false);
  if (!/\.[cm]?ts$/.test(path)) return ask(true);
  // TypeScript matches the whole identifier at the cursor, the characters after it included.
  const word = (prefix + /^[\w$]*/.exec(text.slice(offset, offset + 256))![0]).toLowerCase();
  let known = autoImports.get(at.program);
  if (!known) autoImports.set(at.program, (known = new Map()));
  if (known.has(`1${word}`) || known.has(`0${word}`)) {
    const res = ask(false);
    const hit =
      res && !res.isMemberCompletion && !res.isIncomplete
        ? known.get(`${valuePosition(res.entries) ? 1 : 0}${word}`)
        : undefined;
    if (res && hit) {
      // Every name in scope then is in scope now: a list of the names in scope, as the search's was,
      // and no name that hid an import is gone (that import would be a candidate now).
      const scope = scopeNames(res.entries);
      let kept = true;
      for (const name of hit.scope)
        if (!scope.has(name)) {
          kept = false;
          break;
        }
      if (kept) {
        // A name declared since hides the import of its name.
        res.entries = res.entries.concat(hit.entries.filter((e) => !scope.has(e.name) || hit.scope.has(e.name)));
        return res;
      }
    }
  }
  const res = ask(true);
  // Kept when TypeScript searched the exports (a list of the names in scope) and resolved every import path.
  if (
    res &&
    !res.isMemberCompletion &&
    !res.isIncomplete &&
    (res.flags ?? 0) & ts.CompletionInfoFlags.MayIncludeAutoImports
  ) {
    if (known.size >= AUTO_IMPORT_WORDS) known.clear();
    known.set(`${valuePosition(res.entries) ? 1 : 0}${word}`, {
      entries: res.entries.filter(isAutoImport),
      scope: scopeNames(res.entries),
    });
  }
  return res;
}

function collect(svc: WorkspaceService, path: string, text: string, offset: number): Collected {
  const { prefix, start, afterDot } = prefixAt(text, offset);
  const at = checkerFor(svc, path, text);
  const res = afterDot
    ? completionsAt(svc, at, path, offset, { ...PREFERENCES, includeCompletionsForModuleExports: prefix.length > 0 })
    : identifierCompletions(svc, at, path, text, offset, prefix);
  const member = afterDot || (res?.isMemberCompletion ?? false);
  const receiver = member ? receiverName(text, start) : undefined;
  const { program, file: sf } = at;
  const facts = member ? memberFacts(program, sf, offset) : undefined;
  const entries = !res || (afterDot && !res.isMemberCompletion) ? [] : res.entries;
  return {
    path,
    start,
    before: text.slice(0, start),
    after: text.slice(offset),
    prefix,
    context: member ? "member" : "identifier",
    ...(receiver !== undefined ? { receiver } : {}),
    excluded: declaredHere(sf, offset, member, receiver),
    usage: usageOf(path, text, offset, start),
    ...(facts ? { facts } : {}),
    // After a `.` the checker's non-member answers (`f(x).` it cannot type) are not offered: never identifiers there.
    entries,
    incomplete: res?.isIncomplete ?? false,
    values: entries.some((e) => VALUE_KINDS.has(e.kind)),
    stale: at.stale,
    program,
    scope: svc.scope,
  };
}

/** True when `text` at `offset` only extends (or shortens) the word `c` was collected at. */
function reusable(c: Collected | undefined, path: string, text: string, offset: number): c is Collected {
  if (!c || c.path !== path || c.incomplete) return false;
  // Identifier lists collected before anything was typed lack auto-import candidates.
  if (c.context === "identifier" && c.prefix === "") return false;
  if (text.length - offset !== c.after.length || offset < c.start) return false;
  if (!/^[\w$#]*$/.test(text.slice(c.start, offset))) return false;
  return text.endsWith(c.after) && text.startsWith(c.before);
}

/**
 * True when the keystroke only added characters that end no scope to the line after the word `c` was
 * collected at (a blank, `=`, `(`, `,`, `;`, a newline, an operator, a member access: not a brace,
 * quote, `/`, `:` or `=>`), and nothing is typed at the cursor: the names in scope are the ones
 * collected, so the checker's program is not rebuilt for a list that no word filters yet. A new word
 * collects again (with its auto-import candidates).
 */
function sameScope(c: Collected | undefined, path: string, text: string, offset: number): c is Collected {
  // A type position's names (`x: T`) are not the names after `=` or `;`: only a value list is reused.
  if (!c || c.path !== path || c.incomplete || c.context !== "identifier" || !c.values) return false;
  if (text.length - offset !== c.after.length || offset < c.start) return false;
  const { prefix, afterDot } = prefixAt(text, offset);
  if (prefix !== "" || afterDot) return false;
  const added = text.slice(c.start, offset);
  if (/[{}'"`/:]|=>/.test(added)) return false;
  return text.endsWith(c.after) && text.startsWith(c.before);
}

/**
 * A new word typed in the scope `c` (an identifier list of values) was collected in, answered from
 * `c`'s names in scope and the auto-import candidates TypeScript found for this word in the same
 * program (identifierCompletions), without asking the checker again (docs/agents.md, "Type-aware
 * completion"). Only when the text added since the collection opens and closes no scope and declares
 * nothing the list could lack: no brace, quote, `/`, `:` or `=>`, no `function`, `class`, `for`,
 * `catch` or type-only word (`as`, `satisfies`, `<`…), a `,` only inside a bracket it opened, and past
 * the end of a statement (`;` or a newline) only when nothing is declared in it and `c` was collected
 * outside any declaration's initializer (TypeScript leaves that declaration out of the list). The
 * buffer is still parsed and bound (the last program's view of it, stale.ts): the declaration being
 * initialised at the cursor is left out, as TypeScript does. Undefined when any of it does not hold.
 */
function sameScopeWord(
  svc: WorkspaceService,
  c: Collected | undefined,
  path: string,
  text: string,
  offset: number,
): Collected | undefined {
  if (!c || c.path !== path || c.incomplete || c.context !== "identifier" || !c.values) return undefined;
  if (text.length - offset !== c.after.length || !/\.[cm]?ts$/.test(path)) return undefined;
  const { prefix, start, afterDot } = prefixAt(text, offset);
  if (prefix === "" || afterDot || start <= c.start) return undefined;
  if (!text.endsWith(c.after) || !text.startsWith(c.before)) return undefined;
  const added = text.slice(c.start, start);
  if (/[{}'"`/:<#@]|=>/.test(added)) return undefined;
  if (
    /\b(?:function|class|for|catch|as|satisfies|keyof|infer|is|extends|implements|type|interface|enum|namespace|declare|module|import|export)\b/.test(
      added,
    )
  )
    return undefined;
  let depth = 0;
  for (const ch of added) {
    if (ch === "(" || ch === "[") depth++;
    else if (ch === ")" || ch === "]") depth--;
    else if (ch === "," && depth <= 0) return undefined;
  }
  if (/[;\n]/.test(added) && (c.excluded.size > 0 || /\b(?:const|let|var|using)\b/.test(added))) return undefined;
  svc.update(path, text);
  const view = svc.stale(path, text);
  if (!("program" in view) || view.program !== c.program) return undefined;
  const word = (prefix + /^[\w$]*/.exec(text.slice(offset, offset + 256))![0]).toLowerCase();
  const inScope = c.entries.filter((e) => !isAutoImport(e));
  const hit = autoImports.get(c.program)?.get(`${valuePosition(inScope) ? 1 : 0}${word}`);
  if (!hit) return undefined;
  const scope = scopeNames(inScope);
  for (const name of hit.scope) if (!scope.has(name)) return undefined;
  return {
    ...c,
    start,
    before: text.slice(0, start),
    after: text.slice(offset),
    prefix,
    // The names TypeScript left out of `c`'s list stay out: a later sameScopeWord past a statement's end needs none.
    excluded: new Set([...c.excluded, ...declaredHere(view.file, offset, false, undefined)]),
    usage: usageOf(path, text, offset, start),
    // A name declared since hides the import of its name (identifierCompletions).
    entries: inScope.concat(hit.entries.filter((e) => !scope.has(e.name) || hit.scope.has(e.name))),
    stale: true,
  };
}

/**
 * True when the word at the cursor names a new declaration (`const x`, `function f`, `class C`): no
 * name in scope completes it, as TypeScript itself answers there, so nothing is collected.
 */
function declarationName(text: string, start: number): boolean {
  const line = text.slice(text.lastIndexOf("\n", start - 1) + 1, start);
  return /(?:^|[^\w$.])(?:const|let|var|function\*?|class|interface|type|enum|namespace)\s+$/.test(line);
}

/**
 * A member's points beyond the typed prefix (member-rank.ts): its uses in the document (those the
 * checker resolves to this very member count most; the same name on other receivers, or the member's
 * declaration, a little), how near, uses in the workspace, the public prior, inheritance and the fit
 * with the code around the cursor. `uses`: the name's occurrences in the document, `own`: after the
 * same receiver word, `nearest`: the nearest one's distance.
 */
function memberBonus(
  svc: WorkspaceService,
  c: Collected,
  name: string,
  uses: number,
  own: number,
  nearest: number,
): number {
  const facts = c.facts;
  const typed = facts?.typed.get(name) ?? Math.min(own, uses);
  const ws = workspaceUses(svc, c.path, name, c.receiver);
  const prior = priorPoints(name, c.receiver) * (facts && !facts.external.has(name) ? MEMBER_WEIGHTS.priorOwnScale : 1);
  return (
    (typed > 0 ? 8 + 6 * Math.log2(1 + typed) : 0) +
    (uses > typed ? 2 * Math.log2(1 + uses - typed) : 0) +
    (Number.isFinite(nearest) ? 8 / (1 + nearest / 2000) : 0) +
    (ws.any > 0 ? 2 * Math.log2(1 + ws.any) : 0) +
    (ws.same > 0 ? 4 + 4 * Math.log2(1 + ws.same) : 0) +
    prior +
    (facts?.inherited.has(name) ? MEMBER_WEIGHTS.inherited : 0) +
    (facts?.fit.get(name) ?? 0)
  );
}

/** Complete at `offset` of `path` through the workspace's service (the buffer `text` is fed to it first). */
export function typedCompletions(
  svc: WorkspaceService,
  path: string,
  text: string,
  offset: number,
  limit: number,
  /** How many of the first items get their signature (TypedItem.signature): the model's prompt context. */
  details = 0,
): TypedAnswer & { reused: boolean; stale?: boolean } {
  const { prefix, start } = prefixAt(text, offset);
  if (declarationName(text, start)) return { items: [], context: "identifier", offered: 0, reused: true };
  if (last?.scope !== svc.scope) last = undefined;
  if (lastNames?.scope !== svc.scope) lastNames = undefined;
  let c: Collected | undefined;
  let reused = true;
  if (reusable(last, path, text, offset) || sameScope(last, path, text, offset)) c = last;
  else if (sameScope(lastNames, path, text, offset)) {
    // Back to the names after a member list or a finished statement: the declaration the names were
    // collected in (excluded from its own initializer) may have ended.
    c = last = /[;\n,)]/.test(text.slice(lastNames.start, offset)) ? { ...lastNames, excluded: new Set() } : lastNames;
  } else {
    const word = sameScopeWord(svc, lastNames, path, text, offset);
    if (word) c = last = lastNames = word;
  }
  if (c === undefined) {
    c = last = collect(svc, path, text, offset);
    if (c.context === "identifier") lastNames = c;
    reused = false;
  }
  const { usage, receiver, excluded } = c;
  const member = c.context === "member";
  const scored: { e: TS.CompletionEntry; autoImport: boolean; key: number }[] = [];
  const seen = new Set<string>();
  for (const e of c.entries) {
    if (e.kind === ts.ScriptElementKind.warning) continue; // JavaScript's "names in this file": not from the checker
    if (member && (e.kind === ts.ScriptElementKind.keyword || e.kind === ts.ScriptElementKind.primitiveType)) continue;
    if (excluded.has(e.name)) continue;
    const keyword = e.kind === ts.ScriptElementKind.keyword;
    // A name already typed in full is as good a match as a longer one (a one-letter type parameter `T`).
    const raw = matchScore(e.name, prefix);
    if (raw < 0) continue;
    const match = raw === 90 ? 100 : raw;
    const autoImport = isAutoImport(e);
    const dedupe = `${e.name}\0${autoImport ? e.source : ""}`;
    if (seen.has(dedupe)) continue;
    seen.add(dedupe);
    // The occurrence being typed is not "usage".
    const uses = (usage.count.get(e.name) ?? 0) - (c.prefix === e.name ? 1 : 0);
    const own = receiver ? (usage.member.get(`${receiver}.${e.name}`) ?? 0) : 0;
    // Measured from where the collection was made (the word's start, a few characters back at most).
    const nearest = usage.nearest.get(e.name) ?? Infinity;
    const usageBonus = keyword
      ? -12
      : c.facts
        ? memberBonus(svc, c, e.name, uses, own, nearest)
        : (!member && COMMON_GLOBALS.has(e.name) ? 8 : 0) +
          (uses > 0 ? 8 + 5 * Math.log2(1 + uses) : 0) +
          (own > 0 ? 10 + 6 * Math.log2(1 + own) : 0) +
          (Number.isFinite(nearest) ? 12 / (1 + nearest / 2000) : 0) +
          (member ? memberBonus(svc, c, e.name, 0, 0, Infinity) : 0);
    scored.push({ e, autoImport, key: match * 1000 + usageBonus + tierBonus(e.sortText) });
  }
  scored.sort((a, b) => b.key - a.key || (a.e.name < b.e.name ? -1 : a.e.name > b.e.name ? 1 : 0));
  // Items only for the entries kept (hundreds are scored per keystroke).
  const items = scored.slice(0, limit).map(({ e, autoImport }): TypedItem => {
    const kind = KINDS[e.kind] ?? "text";
    const moduleSpecifier = (e.data as { moduleSpecifier?: string } | undefined)?.moduleSpecifier ?? e.source;
    return {
      label: e.name,
      kind,
      insert_text: e.insertText ?? (member && kind === "method" ? `${e.name}($0)` : e.name),
      detail: autoImport
        ? `auto-import from "${moduleSpecifier}"`
        : `${e.kind}${e.kindModifiers ? ` (${e.kindModifiers})` : ""}`,
      ...(autoImport ? { auto_import: true as const, source: moduleSpecifier ?? "" } : {}),
    };
  });
  const wanted = items.slice(0, details).filter((item) => !item.auto_import);
  if (wanted.length > 0) {
    const at = checkerFor(svc, path, text);
    for (const item of wanted) {
      const d = at.stale
        ? completions().getCompletionEntryDetails(
            at.program,
            noLog,
            at.file,
            offset,
            { name: item.label },
            at.host,
            undefined,
            PREFERENCES,
            NEVER_CANCELLED,
          )
        : svc.languageService.getCompletionEntryDetails(
            path,
            offset,
            item.label,
            undefined,
            undefined,
            PREFERENCES,
            undefined,
          );
      if (d) item.signature = ts.displayPartsToString(d.displayParts).replace(/\s+/g, " ").slice(0, 200);
    }
  }
  return { items, context: c.context, offered: c.entries.length, reused, ...(reused ? {} : { stale: c.stale }) };
}

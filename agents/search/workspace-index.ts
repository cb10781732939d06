/** One workspace's search index: BM25 with field boosts over chunks, refreshed incrementally by file size and mtime. */
import { basename, extname } from "node:path";
import type { Logger } from "../../protocol/util/log.js";
import { listWorkspaceFiles, type ListedFile } from "../lib/code/files.js";
import { readContained } from "../lib/code/workspace.js";
import { Bm25Index } from "./bm25.js";
import { chunkFile, type Chunk } from "./chunk.js";
import { INTERNAL_WEIGHT, isTestPath, pathWeight } from "./weights.js";
import { chunkPython } from "./python-chunks.js";
import { loadLanguage } from "../lib/code/languages/registry.js";
import type { CodeLanguage } from "../lib/code/languages/types.js";
import type { PythonDocument } from "../lib/code/languages/python/index.js";
import { DEFAULT, importedNames, moduleKey, reexports, type Reexports } from "./imports.js";
import { LEAD, processTerm, splitIdentifier, tokenize } from "./tokenize.js";

/** Indexed extensions: code and docs. */
export const INDEXED = new Set([
  ".ts",
  ".tsx",
  ".mts",
  ".cts",
  ".js",
  ".jsx",
  ".mjs",
  ".cjs",
  ".py",
  ".pyi",
  ".md",
  ".markdown",
  ".txt",
]);

function pythonLanguage(): Promise<CodeLanguage<PythonDocument>> {
  return loadLanguage("python") as Promise<unknown> as Promise<CodeLanguage<PythonDocument>>;
}

export interface Doc {
  id: number;
  path: string;
  line_start: number;
  line_end: number;
  symbol?: string;
  kind: Chunk["kind"];
  text: string;
  head?: string;
  exported?: boolean;
  isDefault?: true;
  /** The share of its BM25 score this chunk keeps (`chunkWeight`). */
  weight: number;
}

interface FileState {
  size: number;
  mtimeMs: number;
  ids: number[];
  /** The keys (`callKey`) of the other files' definitions this file calls: its entries in `incoming`. */
  calls?: string[];
  /** What the file passes on from other files (a barrel), when it re-exports anything. */
  reexports?: Reexports;
}

/** How many keys a call may pass through re-exports (a barrel of barrels), so that a cycle ends. */
const MAX_REEXPORT_KEYS = 64;

/** The key of a definition as other files call it: its file's module key (`moduleKey`) and its name. */
function callKey(key: string, name: string): string {
  return `${key}#${name}`;
}

/** Definitions another file can import and call: top-level functions, consts and classes not marked internal. */
const CALLABLE_KINDS = new Set<Chunk["kind"]>(["function", "const", "class"]);

export interface RefreshStats {
  files: number;
  added: number;
  changed: number;
  removed: number;
  skipped: number;
  /** Files and directories that vanished or could not be read during the walk (skipped, not errors). */
  unreadable: number;
  ms: number;
}

export interface IndexOptions {
  maxFileBytes?: number;
  maxFiles?: number;
  log?: Logger;
}

/**
 * Fields and boosts (docs/agents.md "search"): a definition's name counts most, then its head (the first sentence
 * of its doc comment and its declaration: what the definition says it does, its parameters), then its
 * path, then the whole text. The head is also part of the text, so words a definition documents count in both.
 * `uses`: the words of the definition's call sites (`callSiteWords`), in its own file and in the files that
 * import it.
 */
export const SEARCH_FIELDS = ["symbol", "head", "path", "text", "uses"] as const;
export const FIELD_BOOST = {
  symbol: 4,
  head: 3,
  path: 1.5,
  text: 1,
  uses: 1.5,
};

/**
 * How much a query word found in each field counts among a chunk's matched words (`Bm25SearchOptions.
 * coordination`, docs/agents.md "search"): found in the declaration (the name, or the head: description
 * and signature) it counts 1; found only in the path or only in the body, it counts that field's boost
 * relative to the name's (1.5/4, 1/4). A chunk is multiplied by its matched words, so the helper whose
 * body mentions every word of the query no longer outranks the function whose declaration says it.
 */
export const FIELD_COORDINATION = {
  symbol: 1,
  head: 1,
  path: FIELD_BOOST.path / FIELD_BOOST.symbol,
  text: FIELD_BOOST.text / FIELD_BOOST.symbol,
  /** Found only where the definition is called: evidence of what it is for, weaker than its own words. */
  uses: 0.5,
};

/** Lines longer than this are not scanned for call sites (minified or generated code). */
const MAX_CALL_SITE_LINE = 1000;

function isNameChar(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 95 || c === 36 || c === 35;
}

/**
 * The words of the places a file calls its own definitions (docs/agents.md "search"): for each call
 * `name(` of a definition of the same file, the name of the definition the call is made in and the
 * variable or member its result is assigned to (`const retryDelay = this.#calculateDelay()` gives
 * `#calculateDelay` the calling method's name and retryDelay). How a definition is used says what it is for
 * in words its own text may not use. Constructions (`new X(`) are left out. One pass over each line, no
 * backtracking.
 */
export function callSiteWords(chunks: readonly Chunk[]): Map<string, string[]> {
  return callSites(chunks, definedNames(chunks));
}

/** The names a file's chunks define (not headings or the module chunk): what its own calls can name. */
function definedNames(chunks: readonly Chunk[]): Set<string> {
  const names = new Set<string>();
  for (const c of chunks)
    if (c.symbol !== undefined && c.kind !== "heading" && c.kind !== "module") names.add(c.symbol);
  return names;
}

/** The call-site words (`callSiteWords`) of the calls a file makes to each of `names`. */
export function callSites(chunks: readonly Chunk[], names: ReadonlySet<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (names.size === 0) return out;
  let owner: string | undefined;
  for (const c of chunks) {
    if (c.symbol !== undefined) owner = c.symbol;
    for (const line of c.text.split("\n")) {
      if (line.length > MAX_CALL_SITE_LINE) continue;
      const t = line.trim();
      if (t.startsWith("*") || t.startsWith("/") || t.startsWith("import ")) continue;
      const lhs = /^(?:(?:const|let|var)\s+)?([A-Za-z_$][\w$.]*)\s*[:=][^=>]/.exec(t)?.[1];
      let i = 0;
      while (i < t.length) {
        if (!isNameChar(t.charCodeAt(i))) {
          i++;
          continue;
        }
        let j = i + 1;
        while (j < t.length && isNameChar(t.charCodeAt(j))) j++;
        const name = t.slice(i, j);
        let k = j;
        while (k < t.length && t[k] === " ") k++;
        // A construction (`new X(`) is left out: the factory that builds a class is not what the class is for.
        if (t[k] === "(" && names.has(name) && name !== owner && !(i >= 4 && t.slice(i - 4, i) === "new ")) {
          const words = out.get(name) ?? [];
          if (owner !== undefined) words.push(owner);
          if (lhs !== undefined && lhs !== name) words.push(lhs);
          out.set(name, words);
        }
        i = j;
      }
    }
  }
  return out;
}

/** Definitions whose names start with a verb by convention: their first word is marked as the lead. */
const LEAD_KINDS = new Set<Chunk["kind"]>(["function", "method", "const"]);

/**
 * The text of a chunk's `symbol` field: its name, and for a function, method or const its first word
 * marked as the lead (`LEAD`: `mergeHeaders` → `^merge`), which a query's first word meets
 * (docs/agents.md "search"). Types, classes and headings name things, not actions: no lead.
 */
export function symbolField(symbol: string | undefined, kind: Chunk["kind"]): string {
  if (symbol === undefined) return "";
  const first = LEAD_KINDS.has(kind) ? splitIdentifier(symbol)[0] : undefined;
  return first === undefined ? symbol : `${symbol} ${LEAD}${first}`;
}

/** A `symbol` field's tokens: its words tokenized (the name, its words, the name without its first word) and the lead as it is. */
function symbolTokens(text: string): string[] {
  return text.split(" ").flatMap((w) => (w.startsWith(LEAD) ? [w] : tokenize(w)));
}

/** A path's words: `agents/search/bm25.ts` → agents, search, bm25, bm, 25, ts. */
function pathTokens(path: string): string[] {
  return path.split(/[/._-]+/).flatMap((p) => [p, ...splitIdentifier(p)]);
}

/** The raw tokens of one field of a chunk. */
export function fieldTokens(text: string, field: string): string[] {
  return field === "symbol" ? symbolTokens(text) : field === "path" ? pathTokens(text) : tokenize(text);
}

export class WorkspaceIndex {
  readonly search: Bm25Index;
  readonly docs = new Map<number, Doc>();
  private readonly files = new Map<string, FileState>();
  /** Per called definition (`callKey`), the call-site words of each other file calling it. */
  private readonly incoming = new Map<string, Map<string, string[]>>();
  /** Files by module key (`moduleKey`): where a `callKey` is defined. */
  private readonly filesByKey = new Map<string, Set<string>>();
  /** A definition's call-site words in its own file, by document id (kept to rebuild its `uses` field). */
  private readonly ownUses = new Map<number, string[]>();
  /** Documents of this refresh's new files, put in the BM25 index once every file's calls are known. */
  private readonly pending: Doc[] = [];
  /** Called definitions (`callKey`) whose callers changed in this refresh: their `uses` field is rebuilt. */
  private readonly dirty = new Set<string>();
  /** Re-exports, per target key (`callKey`): the keys of the barrels that pass it on by name. */
  private aliases = new Map<string, Set<string>>();
  /** Per module key, the keys of the barrels that pass on all of its names (`export *`). */
  private starsInto = new Map<string, Set<string>>();
  /** Per barrel key (`callKey`), the definition it passes on by name. */
  private forwardNamed = new Map<string, string>();
  /** Per barrel module key, the module keys it passes on whole. */
  private starsFrom = new Map<string, Set<string>>();
  /** A barrel was added, changed or removed in this refresh: the four maps above are rebuilt. */
  private barrelsChanged = false;
  private nextId = 1;
  lastRefresh = 0;
  builds = 0;

  constructor(
    readonly root: string,
    private readonly options: IndexOptions = {},
  ) {
    this.search = new Bm25Index({
      fields: SEARCH_FIELDS,
      tokenize: fieldTokens,
      processTerm,
    });
  }

  get fileCount(): number {
    return this.files.size;
  }

  /** Re-list the workspace and re-index files whose size or mtime changed; drop deleted ones. */
  async refresh(signal?: AbortSignal): Promise<RefreshStats> {
    const start = performance.now();
    const first = this.files.size === 0 && this.builds === 0;
    let unreadable = 0;
    const listed = await listWorkspaceFiles(this.root, {
      maxFiles: this.options.maxFiles ?? 50_000,
      accept: (rel) => INDEXED.has(extname(rel).toLowerCase()),
      onSkip: () => void unreadable++,
    });
    const stats: RefreshStats = {
      files: listed.length,
      added: 0,
      changed: 0,
      removed: 0,
      skipped: 0,
      unreadable,
      ms: 0,
    };
    const seen = new Set<string>();
    let done = 0;
    for (const f of listed) {
      seen.add(f.rel);
      const prev = this.files.get(f.rel);
      if (prev && prev.size === f.size && prev.mtimeMs === f.mtimeMs) continue;
      if (prev) {
        this.drop(f.rel, prev);
        stats.changed++;
      } else stats.added++;
      if (!(await this.add(f))) stats.skipped++;
      done++;
      if (first && done % 500 === 0) {
        this.options.log?.info(
          { event: "index_progress", root: this.root, files_done: done, files_total: listed.length },
          "indexing",
        );
        await new Promise<void>((r) => setImmediate(r)); // let other requests in during a long build
        if (signal?.aborted) break;
      }
    }
    for (const [rel, state] of this.files) {
      if (!seen.has(rel)) {
        this.drop(rel, state);
        stats.removed++;
      }
    }
    this.flush();
    this.builds++;
    this.lastRefresh = Date.now();
    stats.ms = Math.round(performance.now() - start);
    if (first)
      this.options.log?.info({ event: "index_built", root: this.root, ...stats, docs: this.docs.size }, "index built");
    return stats;
  }

  private drop(rel: string, state: FileState): void {
    for (const id of state.ids) {
      this.search.remove(id);
      this.docs.delete(id);
      this.ownUses.delete(id);
    }
    for (const key of state.calls ?? []) {
      const callers = this.incoming.get(key);
      callers?.delete(rel);
      if (callers?.size === 0) this.incoming.delete(key);
      this.dirty.add(key);
    }
    if (state.reexports) this.barrelChanged(moduleKey(rel), state.reexports);
    const byKey = this.filesByKey.get(moduleKey(rel));
    byKey?.delete(rel);
    if (byKey?.size === 0) this.filesByKey.delete(moduleKey(rel));
    this.files.delete(rel);
  }

  /**
   * A definition's `uses` field: its call sites in its own file, then in each other file that imports and
   * calls it (docs/agents.md "search").
   */
  private usesOf(d: Doc): string {
    if (d.symbol === undefined || d.kind === "heading") return "";
    const words = [...(this.ownUses.get(d.id) ?? [])];
    if (CALLABLE_KINDS.has(d.kind) && d.exported !== false) {
      const key = moduleKey(d.path);
      // Its callers by name, through a default import (`import delay from "./delay.js"`), and through barrels;
      // not tests that call through a barrel: they exercise the package's public API, and their words are
      // the tests' (in ky, the words of tests through `source/index.ts` put `NetworkError` above
      // `isRawNetworkError` for "is this a network failure from fetch").
      const keys = this.aliasesOf([callKey(key, d.symbol), ...(d.isDefault === true ? [callKey(key, DEFAULT)] : [])]);
      for (const k of keys)
        for (const [rel, w] of this.incoming.get(k) ?? [])
          if (k.startsWith(`${key}#`) || !isTestPath(rel)) words.push(...w);
    }
    return words.join(" ");
  }

  /** The keys (`callKey`) that name the same definitions as `keys`: themselves and the barrels' names for them. */
  private aliasesOf(keys: string[]): string[] {
    if (this.aliases.size === 0 && this.starsInto.size === 0) return keys; // no barrel in the workspace
    const out = new Set(keys);
    for (const k of out) {
      if (out.size >= MAX_REEXPORT_KEYS) break;
      for (const a of this.aliases.get(k) ?? []) out.add(a);
      const at = k.lastIndexOf("#");
      const name = k.slice(at + 1);
      if (name !== DEFAULT) for (const b of this.starsInto.get(k.slice(0, at)) ?? []) out.add(callKey(b, name));
    }
    return [...out];
  }

  /** The keys a call to `key` may reach: itself and, through barrels, the definitions they pass on. */
  private targetsOf(key: string): string[] {
    const out = new Set([key]);
    for (const k of out) {
      if (out.size >= MAX_REEXPORT_KEYS) break;
      const named = this.forwardNamed.get(k);
      if (named !== undefined) out.add(named);
      const at = k.lastIndexOf("#");
      const name = k.slice(at + 1);
      if (name !== DEFAULT) for (const t of this.starsFrom.get(k.slice(0, at)) ?? []) out.add(callKey(t, name));
    }
    return [...out];
  }

  /**
   * A barrel added or removed: the definitions it passes on (by name, or every name its callers use
   * through an `export *`) are re-indexed at the end of the refresh.
   */
  private barrelChanged(key: string, rx: Reexports): void {
    this.barrelsChanged = true;
    for (const t of rx.named.values()) this.dirty.add(callKey(t.key, t.name));
    if (rx.stars.length === 0) return;
    for (const k of this.incoming.keys()) {
      if (!k.startsWith(`${key}#`)) continue;
      const name = k.slice(key.length + 1);
      for (const t of rx.stars) this.dirty.add(callKey(t, name));
    }
  }

  /** The re-export maps, from every barrel's `reexports`. */
  private rebuildBarrels(): void {
    this.aliases.clear();
    this.starsInto.clear();
    this.forwardNamed.clear();
    this.starsFrom.clear();
    for (const [rel, state] of this.files) {
      if (!state.reexports) continue;
      const key = moduleKey(rel);
      for (const [name, t] of state.reexports.named) {
        const target = callKey(t.key, t.name);
        const barrel = callKey(key, name);
        if (target === barrel) continue;
        let set = this.aliases.get(target);
        if (!set) this.aliases.set(target, (set = new Set()));
        set.add(barrel);
        this.forwardNamed.set(barrel, target);
      }
      for (const t of state.reexports.stars) {
        if (t === key) continue;
        let into = this.starsInto.get(t);
        if (!into) this.starsInto.set(t, (into = new Set()));
        into.add(key);
        let from = this.starsFrom.get(key);
        if (!from) this.starsFrom.set(key, (from = new Set()));
        from.add(t);
      }
    }
    this.barrelsChanged = false;
  }

  private index(d: Doc): void {
    this.search.add(d.id, [symbolField(d.symbol, d.kind), d.head ?? "", d.path, d.text, this.usesOf(d)]);
  }

  /**
   * The end of a refresh: the definitions whose callers in other files changed are re-indexed with their
   * new `uses` words, then this refresh's new documents are indexed (once, with every file's calls known).
   */
  private flush(): void {
    const fresh = new Set(this.pending.map((d) => d.id));
    if (this.barrelsChanged) this.rebuildBarrels();
    const keys = new Set<string>();
    for (const dirty of this.dirty) for (const k of this.targetsOf(dirty)) keys.add(k);
    for (const key of keys) {
      const at = key.lastIndexOf("#");
      const name = key.slice(at + 1);
      for (const rel of this.filesByKey.get(key.slice(0, at)) ?? []) {
        for (const id of this.files.get(rel)?.ids ?? []) {
          const d = this.docs.get(id);
          const named = d?.symbol === name || (name === DEFAULT && d?.isDefault === true);
          if (!d || !named || fresh.has(id) || !CALLABLE_KINDS.has(d.kind)) continue;
          this.search.remove(id);
          this.index(d);
        }
      }
    }
    this.dirty.clear();
    for (const d of this.pending) this.index(d);
    this.pending.length = 0;
  }

  /** Index one file; false when it was skipped (too large, binary, unreadable). */
  private async add(f: ListedFile): Promise<boolean> {
    const state: FileState = { size: f.size, mtimeMs: f.mtimeMs, ids: [] };
    this.files.set(f.rel, state); // remembered even when skipped, so it is not retried until it changes
    let text: string;
    try {
      text = (await readContained(this.root, f.abs, { maxBytes: this.options.maxFileBytes ?? 1024 * 1024 })).text;
    } catch {
      return false;
    }
    const ext = extname(f.rel).toLowerCase();
    const python = ext === ".py" || ext === ".pyi";
    // Python's import forms are not TypeScript's: its files skip the import and re-export passes below.
    const markdown = python || ext === ".md" || ext === ".markdown" || ext === ".txt";
    let chunks: Chunk[];
    try {
      chunks = python
        ? chunkPython(await pythonLanguage(), text, basename(f.rel, ext))
        : chunkFile(text, markdown, basename(f.rel, ext));
    } catch {
      // a file the parser gives up on (its time limit) is still searchable as text
      chunks = chunkFile(text, true, basename(f.rel, ext));
    }
    const key = moduleKey(f.rel);
    let byKey = this.filesByKey.get(key);
    if (!byKey) this.filesByKey.set(key, (byKey = new Set()));
    byKey.add(f.rel);
    const weight = pathWeight(f.rel);
    const docs: Doc[] = chunks.map((c) => ({
      id: this.nextId++,
      path: f.rel,
      ...c,
      weight: c.exported === false ? weight * INTERNAL_WEIGHT : weight,
    }));
    for (const d of docs) {
      this.docs.set(d.id, d);
      state.ids.push(d.id);
    }
    // Calls to this file's own definitions, and to the names it imports from other files (a local
    // definition of the same name shadows an import).
    const own = definedNames(chunks);
    const lines = text.split("\n");
    const imported = markdown ? new Map() : importedNames(f.rel, lines);
    const rx = markdown ? undefined : reexports(f.rel, lines);
    if (rx && (rx.named.size > 0 || rx.stars.length > 0)) {
      state.reexports = rx;
      this.barrelChanged(key, rx);
    }
    for (const name of own) imported.delete(name);
    const uses = callSites(chunks, new Set([...own, ...imported.keys()]));
    for (const d of docs) {
      const words = d.symbol !== undefined && own.has(d.symbol) ? uses.get(d.symbol) : undefined;
      if (words !== undefined && d.kind !== "heading") this.ownUses.set(d.id, words);
      this.pending.push(d);
    }
    const calls = new Map<string, string[]>();
    for (const [local, target] of imported) {
      const words = uses.get(local);
      if (words === undefined || target.key === key) continue;
      const k = callKey(target.key, target.name);
      calls.set(k, [...(calls.get(k) ?? []), ...words]);
    }
    for (const [k, words] of calls) {
      let callers = this.incoming.get(k);
      if (!callers) this.incoming.set(k, (callers = new Map()));
      callers.set(f.rel, words);
      this.dirty.add(k);
    }
    if (calls.size > 0) state.calls = [...calls.keys()];
    return true;
  }
}

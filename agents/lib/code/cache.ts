/** Per-file parse cache keyed by path (and checked against the content); a changed buffer is re-parsed incrementally when it can be. */
import { reparseChanged, settleAll } from "./incremental.js";
import type { Dialect } from "./language.js";
import { parseFile, type ParsedFile } from "./parse.js";

export interface ParseCacheStats {
  hits: number;
  /** Re-parsed locally: top-level statements or, counted in `nested` too, statements inside one block. */
  incremental: number;
  nested: number;
  full: number;
  entries: number;
}

export interface ParseCacheOptions {
  /** Files kept (least recently used evicted first). */
  maxEntries?: number;
  /** Re-parse only the touched top-level declarations of a changed buffer (default true). */
  incremental?: boolean;
}

/** Buffers sent without a file_path share one slot: an editor sending the same buffer again gets the incremental path. */
const ANONYMOUS = "\0anonymous";

function keyOf(dialect: Dialect, filePath: string | undefined): string {
  return `${dialect.language}:${dialect.jsx ? 1 : 0}:${filePath ?? ANONYMOUS}`;
}

export class ParseCache {
  private readonly entries = new Map<string, ParsedFile>();
  private readonly maxEntries: number;
  private readonly incremental: boolean;
  private readonly counts = { hits: 0, incremental: 0, nested: 0, full: 0 };

  constructor(options: ParseCacheOptions = {}) {
    this.maxEntries = options.maxEntries ?? 64;
    this.incremental = options.incremental ?? true;
  }

  /** The parsed file for this content (with `diagnostics` when it has syntax errors); throws AIP_ERR_PARSE (naming `label`, default the path) only when nothing can be parsed. */
  get(source: string, dialect: Dialect, filePath?: string, label = filePath): ParsedFile {
    const parsed = this.getLazy(source, dialect, filePath, label);
    settleAll(parsed.program);
    return parsed;
  }

  /**
   * Like `get`, but top-level statements after the last edit may still owe their descendants a shift
   * (see incremental.ts): only their own range and lines are current. Callers descend through
   * `ancestorsAt` (which settles the statement it enters) or call `settle` first.
   */
  getLazy(source: string, dialect: Dialect, filePath?: string, label = filePath): ParsedFile {
    const key = keyOf(dialect, filePath);
    const cached = this.entries.get(key);
    // The entry keeps its source anyway: comparing it (memcmp) is cheaper than hashing the new one.
    if (cached && cached.source === source) {
      this.entries.delete(key);
      this.entries.set(key, cached);
      this.counts.hits++;
      return cached;
    }
    let parsed: ParsedFile | undefined;
    if (cached && this.incremental) parsed = this.reparse(key, cached, source, label);
    if (!parsed) {
      parsed = parseFile(source, dialect, label);
      this.counts.full++;
    }
    this.entries.delete(key);
    this.entries.set(key, parsed);
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    return parsed;
  }

  /**
   * True when `source` is parsed without a full parse: the cached content, or an incremental re-parse of
   * it (kept, so the next `get` is a hit). False when only a full parse would do; nothing is parsed
   * in full here (a caller with something better to wait for need not pay for one), and the cached
   * tree stays for the next try: a re-parse that gives up leaves it as it was (incremental.ts changes
   * the old tree only once the new part is accepted).
   */
  tryCheap(source: string, dialect: Dialect, filePath?: string, label = filePath): boolean {
    const key = keyOf(dialect, filePath);
    const cached = this.entries.get(key);
    if (!cached || !this.incremental) return false;
    if (cached.source === source) return true;
    const parsed = this.reparse(key, cached, source, label);
    this.entries.set(key, parsed ?? cached);
    return parsed !== undefined;
  }

  /** The incremental re-parse of `cached` into `source`, counted; undefined when a full parse must decide. */
  private reparse(key: string, cached: ParsedFile, source: string, label: string | undefined): ParsedFile | undefined {
    // The old tree is handed over (its nodes move); drop it first so nobody sees it half-shifted.
    this.entries.delete(key);
    const parsed = reparseChanged(cached, source, label);
    if (parsed) this.counts.incremental++;
    if (parsed?.via === "nested") this.counts.nested++;
    return parsed;
  }

  stats(): ParseCacheStats {
    return { ...this.counts, entries: this.entries.size };
  }

  clear(): void {
    this.entries.clear();
  }
}

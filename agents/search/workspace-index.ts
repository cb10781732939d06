/** One workspace's search index: BM25 with field boosts over chunks, refreshed incrementally by file size and mtime. */
import { basename, extname } from "node:path";
import type { Logger } from "../../protocol/log.js";
import { listWorkspaceFiles, type ListedFile } from "../lib/code/files.js";
import { readContained } from "../lib/code/workspace.js";
import { Bm25Index } from "./bm25.js";
import { chunkFile, type Chunk } from "./chunk.js";
import { processTerm, splitIdentifier, tokenize } from "./tokenize.js";

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
  ".md",
  ".markdown",
  ".txt",
]);

export interface Doc {
  id: number;
  path: string;
  line_start: number;
  line_end: number;
  symbol?: string;
  kind: Chunk["kind"];
  text: string;
  head?: string;
}

interface FileState {
  size: number;
  mtimeMs: number;
  ids: number[];
}

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
 * Fields and boosts (docs/agents.md "search"): a definition's name counts most, then its head (doc comment and
 * signature: what the definition says it does, its parameters), then its path, then the whole text.
 * The head is also part of the text, so words a definition documents count in both.
 */
export const SEARCH_FIELDS = ["symbol", "head", "path", "text"] as const;
export const FIELD_BOOST = {
  symbol: 4,
  head: 2,
  path: 1.5,
  text: 1,
};

/** A definition's name and, when it has several, its words (`containedPath` → containedPath, contained, Path). */
function symbolTokens(text: string): string[] {
  return text.split(/\s+/).flatMap((w) => {
    const parts = splitIdentifier(w);
    return parts.length > 1 ? [w, ...parts] : [w];
  });
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
    }
    this.files.delete(rel);
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
    const chunks = chunkFile(text, ext === ".md" || ext === ".markdown" || ext === ".txt", basename(f.rel, ext));
    const docs: Doc[] = chunks.map((c) => ({ id: this.nextId++, path: f.rel, ...c }));
    for (const d of docs) {
      this.docs.set(d.id, d);
      state.ids.push(d.id);
    }
    for (const d of docs) this.search.add(d.id, [d.symbol ?? "", d.head ?? "", d.path, d.text]);
    return true;
  }
}

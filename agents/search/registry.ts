/** One index per workspace root, least recently used evicted; concurrent first requests share one build. */
import type { Logger } from "../../protocol/util/log.js";
import { WorkspaceIndex, type IndexOptions, type RefreshStats } from "./workspace-index.js";

export interface RegistryOptions extends IndexOptions {
  /** Workspaces kept in memory. */
  maxWorkspaces?: number;
}

interface Entry {
  index: WorkspaceIndex;
  /** The refresh in progress, if any (callers join it instead of starting another). */
  pending?: Promise<RefreshStats>;
}

export class IndexRegistry {
  private readonly entries = new Map<string, Entry>();
  private readonly max: number;

  constructor(private readonly options: RegistryOptions = {}) {
    this.max = options.maxWorkspaces ?? 4;
  }

  /**
   * The index for `root` (a real path), refreshed when older than `staleMs` (0: always rescan).
   * `refreshed` is the refresh this call waited for, if any.
   */
  async get(root: string, staleMs: number, log?: Logger): Promise<{ index: WorkspaceIndex; refreshed?: RefreshStats }> {
    let entry = this.entries.get(root);
    if (entry) {
      this.entries.delete(root);
      this.entries.set(root, entry);
    } else {
      entry = { index: new WorkspaceIndex(root, { ...this.options, ...(log ? { log } : {}) }) };
      this.entries.set(root, entry);
      while (this.entries.size > this.max) this.entries.delete(this.entries.keys().next().value as string);
    }
    const idx = entry.index;
    if (entry.pending || idx.builds === 0 || Date.now() - idx.lastRefresh >= staleMs) {
      const e = entry;
      e.pending ??= idx.refresh().finally(() => {
        delete e.pending;
      });
      return { index: idx, refreshed: await e.pending };
    }
    return { index: idx };
  }

  get size(): number {
    return this.entries.size;
  }

  roots(): string[] {
    return [...this.entries.keys()];
  }
}

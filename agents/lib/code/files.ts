/**
 * Listing a workspace's files: .gitignore respected (root and nested), symlinks not followed, .git
 * skipped. Each directory is opened first and checked (its real path inside the root) before it is
 * listed through that descriptor, as workspace.ts reads files; a file or directory that vanishes or
 * cannot be read during the walk is skipped and reported through `onSkip`, never an error.
 */
import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { openContained, readContained } from "./workspace.js";

export interface ListedFile {
  /** Relative to the root, with `/` separators. */
  rel: string;
  abs: string;
  size: number;
  mtimeMs: number;
}

export interface ListOptions {
  /** Stop after this many files (a runaway workspace must not exhaust memory). */
  maxFiles?: number;
  /** Keep only files this accepts (relative path). */
  accept?: (rel: string) => boolean;
  /** Told of each file or directory skipped because it vanished or could not be read (rel path, why). */
  onSkip?: (rel: string, reason: string) => void;
}

const ALWAYS_SKIPPED = new Set([".git", "node_modules"]);

interface Rules {
  base: string;
  ig: Ignore;
}

async function rulesIn(root: string, dir: string, rel: string): Promise<Rules | undefined> {
  try {
    const text = (await readContained(root, join(dir, ".gitignore"), { maxBytes: 1024 * 1024 })).text;
    return { base: rel, ig: ignore().add(text) };
  } catch {
    return undefined;
  }
}

function ignored(rules: Rules[], rel: string, isDir: boolean): boolean {
  for (const r of rules) {
    const sub = r.base === "" ? rel : rel.slice(r.base.length + 1);
    if (r.ig.ignores(isDir ? `${sub}/` : sub)) return true;
  }
  return false;
}

/** Every non-ignored regular file under `root` (a real path), in a stable (sorted) order. */
export async function listWorkspaceFiles(root: string, options: ListOptions = {}): Promise<ListedFile[]> {
  const maxFiles = options.maxFiles ?? 50_000;
  const out: ListedFile[] = [];
  const skip = (rel: string, err: unknown): void =>
    options.onSkip?.(rel || ".", (err as NodeJS.ErrnoException).code ?? (err as Error).message);
  const visit = async (dir: string, rel: string, rules: Rules[]): Promise<void> => {
    let entries;
    let real: string;
    try {
      const opened = await openContained(root, dir, "directory");
      real = opened.real;
      try {
        entries = await readdir(`/proc/self/fd/${opened.handle.fd}`, { withFileTypes: true });
      } finally {
        await opened.handle.close();
      }
    } catch (err) {
      if (rel === "") throw err; // the root itself: the caller's error
      return skip(rel, err);
    }
    const own = await rulesIn(root, real, rel);
    const active = own ? [...rules, own] : rules;
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (out.length >= maxFiles) return;
      const childRel = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (ALWAYS_SKIPPED.has(e.name) || ignored(active, childRel, true)) continue;
        await visit(join(real, e.name), childRel, active);
      } else if (e.isFile()) {
        if (ignored(active, childRel, false) || (options.accept && !options.accept(childRel))) continue;
        const abs = join(real, e.name);
        try {
          const st = await lstat(abs);
          if (!st.isFile()) continue; // swapped for a link or a directory since the listing
          out.push({ rel: childRel, abs, size: st.size, mtimeMs: st.mtimeMs });
        } catch (err) {
          skip(childRel, err);
        }
      }
      // Symlinks are not followed: a link may point outside the workspace.
    }
  };
  await visit(root, "", []);
  return out;
}

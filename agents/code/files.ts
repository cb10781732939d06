/** Listing a workspace's files: .gitignore respected (root and nested), symlinks not followed, .git skipped. */
import { readdir, readFile, stat } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

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
}

const ALWAYS_SKIPPED = new Set([".git", "node_modules"]);

interface Rules {
  base: string;
  ig: Ignore;
}

async function rulesIn(dir: string, rel: string): Promise<Rules | undefined> {
  try {
    const text = await readFile(join(dir, ".gitignore"), "utf8");
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
  const visit = async (dir: string, rules: Rules[]): Promise<void> => {
    const rel = relative(root, dir).split(sep).join("/");
    const own = await rulesIn(dir, rel);
    const active = own ? [...rules, own] : rules;
    const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (out.length >= maxFiles) return;
      const childRel = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if (ALWAYS_SKIPPED.has(e.name) || ignored(active, childRel, true)) continue;
        await visit(join(dir, e.name), active);
      } else if (e.isFile()) {
        if (ignored(active, childRel, false) || (options.accept && !options.accept(childRel))) continue;
        const abs = join(dir, e.name);
        const st = await stat(abs);
        out.push({ rel: childRel, abs, size: st.size, mtimeMs: st.mtimeMs });
      }
      // Symlinks are not followed: a link may point outside the workspace.
    }
  };
  await visit(root, []);
  return out;
}

/**
 * The placeholder-at-cursor parse: while someone types, `this.` + newline or `foo(` does not parse. The
 * buffer's own parse recovers from the errors (parse.ts) and is kept for its diagnostics; for the tree
 * at the cursor, an identifier inserted at the cursor (plus, if needed, the `;`, `)` or `}` that would
 * close it) often makes the buffer whole. The patched text is parsed in its own cache slot, so the
 * buffer's entry stays for the next keystroke.
 */
import type { ParseCache } from "./cache.js";
import type { Dialect } from "./language.js";
import type { ParsedFile } from "./parse.js";

/** Stands in for the identifier being typed; never offered as a completion or listed as a symbol. */
export const PLACEHOLDER = "__aip_complete__";

/** The patches tried, cheapest guess first. */
export const PLACEHOLDER_PATCHES = [PLACEHOLDER, `${PLACEHOLDER};`, `${PLACEHOLDER})`, `${PLACEHOLDER}}`] as const;

export interface PlaceholderParse {
  /** The tree to use at the cursor: the patched buffer's when a patch made it whole, else `file`. */
  parsed: ParsedFile;
  /** The buffer's own parse (its diagnostics are what is reported). */
  file: ParsedFile;
  /** Characters the patch inserted at the cursor (0 when none was used). */
  extra: number;
}

export interface PlaceholderOptions {
  /** Parse lazily (statements after the edit are shifted only when something descends into them). */
  lazy?: boolean;
  /** Cache label (per-workspace accounting); defaults to the path. */
  label?: string | undefined;
  /** How many of PLACEHOLDER_PATCHES to try (each failed try is one more parse of a broken buffer). */
  patches?: number;
}

export function parseWithPlaceholder(
  cache: ParseCache,
  source: string,
  offset: number,
  dialect: Dialect,
  path: string | undefined,
  options: PlaceholderOptions = {},
): PlaceholderParse {
  const parse = (text: string, slot: string | undefined): ParsedFile =>
    options.lazy
      ? cache.getLazy(text, dialect, slot, options.label ?? slot)
      : cache.get(text, dialect, slot, options.label ?? slot);
  const file = parse(source, path);
  if (file.diagnostics.length === 0) return { parsed: file, file, extra: 0 };
  for (const patch of PLACEHOLDER_PATCHES.slice(0, options.patches ?? PLACEHOLDER_PATCHES.length)) {
    const parsed = parse(source.slice(0, offset) + patch + source.slice(offset), `${path ?? ""}\0patched`);
    if (parsed.diagnostics.length === 0) return { parsed, file, extra: patch.length };
  }
  return { parsed: file, file, extra: 0 };
}

/**
 * Bring the cache up to `source` and the patched texts `parseWithPlaceholder` would try, only as far
 * as incremental re-parses do (ParseCache.tryCheap): true when `parseWithPlaceholder` then parses
 * nothing in full. Nothing is parsed in full here (the caller prepares a fallback alongside something
 * better and must not stall it).
 */
export function preparePlaceholder(
  cache: ParseCache,
  source: string,
  offset: number,
  dialect: Dialect,
  path: string | undefined,
  options: Pick<PlaceholderOptions, "label" | "patches"> = {},
): boolean {
  if (!cache.tryCheap(source, dialect, path, options.label ?? path)) return false;
  if (cache.getLazy(source, dialect, path, options.label ?? path).diagnostics.length === 0) return true;
  const slot = `${path ?? ""}\0patched`;
  for (const patch of PLACEHOLDER_PATCHES.slice(0, options.patches ?? PLACEHOLDER_PATCHES.length)) {
    const text = source.slice(0, offset) + patch + source.slice(offset);
    if (!cache.tryCheap(text, dialect, slot, options.label ?? slot)) return false;
    if (cache.getLazy(text, dialect, slot, options.label ?? slot).diagnostics.length === 0) return true;
  }
  return true;
}

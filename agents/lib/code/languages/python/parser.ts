/**
 * The Python parser: tree-sitter's error-tolerant parser (web-tree-sitter, WebAssembly) with the
 * tree-sitter-python grammar. Loading compiles two wasm modules once per process; after that a parse
 * is synchronous. A tree lives in wasm memory, so callers turn it into plain data and delete it
 * (`withTree`).
 */
import { createRequire } from "node:module";
import type { Node as TsNode, Parser as TsParser, Tree } from "web-tree-sitter";
import { AipError } from "../../../../../protocol/contract/errors.js";

export type SyntaxNode = TsNode;
export type SyntaxTree = Tree;

/** A parse taking longer than this is abandoned (AIP_ERR_PARSE): tree-sitter is linear, so only a hostile buffer gets near it. */
export const PARSE_TIMEOUT_MS = 2000;

let loading: Promise<TsParser> | undefined;
let parser: TsParser | undefined;

/** Load the parser (once; concurrent callers share the load). */
export function loadPythonParser(): Promise<TsParser> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    const { Parser, Language } = await import("web-tree-sitter");
    await Parser.init();
    const grammar = await Language.load(require.resolve("tree-sitter-python/tree-sitter-python.wasm"));
    const p = new Parser();
    p.setLanguage(grammar);
    parser = p;
    return p;
  })();
  loading.catch(() => {
    loading = undefined;
  });
  return loading;
}

/** True once `loadPythonParser()` has resolved. */
export function pythonParserLoaded(): boolean {
  return parser !== undefined;
}

/**
 * Parse `source` into a tree the caller owns (and deletes); with `old`, a tree of the previous text
 * already edited to match (`Tree.edit`), only what the edit touched is parsed again.
 * AIP_ERR_PARSE when the parser fails or takes longer than PARSE_TIMEOUT_MS.
 */
export function parseTree(source: string, label = "source", old?: Tree): Tree {
  if (!parser) throw new Error("the Python parser is not loaded (await loadPythonParser() first)");
  const started = performance.now();
  let tree: Tree | null = null;
  try {
    tree = parser.parse(source, old ?? null, {
      progressCallback: () => performance.now() - started > PARSE_TIMEOUT_MS,
    });
  } catch (err) {
    parser.reset();
    throw new AipError("AIP_ERR_PARSE", `${label}: the Python parser failed (${(err as Error).message})`);
  }
  if (!tree) {
    parser.reset();
    throw new AipError("AIP_ERR_PARSE", `${label}: parsing took longer than ${PARSE_TIMEOUT_MS} ms`);
  }
  return tree;
}

/** Parse `source` and hand the tree to `fn`; the tree is deleted afterwards. */
export function withTree<T>(source: string, fn: (root: SyntaxNode) => T, label = "source"): T {
  const tree = parseTree(source, label);
  try {
    return fn(tree.rootNode);
  } finally {
    tree.delete();
  }
}

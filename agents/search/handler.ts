/** The search action: ranked hits over a workspace's code and docs. */
import { actionInput } from "../../protocol/actions.js";
import type { AipRequest } from "../../protocol/schemas.js";
import { resolveRoot } from "../code/workspace.js";
import type { HandlerContext } from "../runtime/types.js";
import { runQuery } from "./query.js";
import { IndexRegistry } from "./registry.js";

/** By default a workspace is rescanned (stat only; changed files re-read) when its index is older than this. */
export const DEFAULT_STALE_MS = 2_000;

/** The search handler over an index registry (one per process). */
export function createSearch(registry = new IndexRegistry()) {
  return async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    const { context, constraints } = actionInput("search", request);
    const { workspace_root: rootIn, query } = context;
    const limit = constraints.limit ?? 10;
    const globs = constraints.paths;
    const languages = constraints.languages;
    const staleMs = constraints.refresh_ms ?? DEFAULT_STALE_MS;
    const root = await resolveRoot(rootIn);
    const { index, refreshed } = await registry.get(root, staleMs, ctx.log);
    ctx.timer.mark("index");
    const hits = runQuery(index, query, { limit, ...(globs ? { globs } : {}), ...(languages ? { languages } : {}) });
    ctx.timer.mark("query");
    return {
      query,
      hits,
      index: { files: index.fileCount, chunks: index.docs.size, ...(refreshed ? { refreshed: { added: refreshed.added, changed: refreshed.changed, removed: refreshed.removed, skipped: refreshed.skipped, ms: refreshed.ms } } : {}) },
    };
  };
}

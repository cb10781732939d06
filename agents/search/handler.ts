/** The search action: ranked hits over a workspace's code and docs. */
import type { AipRequest } from "../../protocol/schemas.js";
import { optionalInt, optionalStrings, requiredString } from "../code/request.js";
import { resolveRoot } from "../code/workspace.js";
import type { HandlerContext } from "../runtime/types.js";
import { runQuery } from "./query.js";
import { IndexRegistry } from "./registry.js";

/** By default a workspace is rescanned (stat only; changed files re-read) when its index is older than this. */
export const DEFAULT_STALE_MS = 2_000;

/** The search handler over an index registry (one per process). */
export function createSearch(registry = new IndexRegistry()) {
  return async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    const rootIn = requiredString(request.context, "workspace_root", "context.workspace_root");
    const query = requiredString(request.context, "query", "context.query");
    const limit = optionalInt(request.constraints, "limit", "constraints.limit", 1, 200) ?? 10;
    const globs = optionalStrings(request.constraints, "paths", "constraints.paths");
    const languages = optionalStrings(request.constraints, "languages", "constraints.languages");
    const staleMs = optionalInt(request.constraints, "refresh_ms", "constraints.refresh_ms", 0, 86_400_000) ?? DEFAULT_STALE_MS;
    const root = await resolveRoot(rootIn);
    const { index, refreshed } = await registry.get(root, staleMs, ctx.log);
    ctx.timer.mark("index");
    const hits = runQuery(index, query, { limit, ...(globs ? { globs } : {}), ...(languages ? { languages } : {}) });
    ctx.timer.mark("query");
    return {
      query,
      hits,
      index: { files: index.fileCount, chunks: index.docs.size, ...(refreshed ? { refreshed: { added: refreshed.added, changed: refreshed.changed, removed: refreshed.removed, skipped: refreshed.skipped, unreadable: refreshed.unreadable, ms: refreshed.ms } } : {}) },
    };
  };
}

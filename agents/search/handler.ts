/** The search action: ranked hits over a workspace's code and docs. */
import { actionInput } from "../../protocol/contract/actions.js";
import { AipError } from "../../protocol/contract/errors.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { resolveRoot } from "../lib/code/workspace.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { runQuery } from "./query.js";
import { IndexRegistry } from "./registry.js";

/** By default a workspace is rescanned (stat only; changed files re-read) when its index is older than this. */
export const DEFAULT_STALE_MS = 2_000;

/** Longest `context.query` accepted, in characters (docs/agents.md "search"). */
export const MAX_QUERY_CHARS = 1_000;
/** Bounds on `constraints.paths`: globs compile to regular expressions, matched against every path. */
export const MAX_GLOBS = 32;
export const MAX_GLOB_CHARS = 256;
/** `*` wildcards in one path segment (`**` as a whole segment aside): each one more multiplies the backtracking by the segment's length. */
export const MAX_STARS_PER_SEGMENT = 2;

/** Refuse globs whose matching could take more than linear-ish time (AIP_ERR_INVALID_FIELD naming the glob). */
export function checkGlobs(globs: string[]): void {
  const refuse = (glob: string, why: string): never => {
    throw new AipError(
      "AIP_ERR_INVALID_FIELD",
      `constraints.paths: ${JSON.stringify(glob.length > 60 ? `${glob.slice(0, 57)}...` : glob)} ${why}`,
      {
        suggestion: `At most ${MAX_GLOBS} globs of ${MAX_GLOB_CHARS} characters, ${MAX_STARS_PER_SEGMENT} '*' per path segment, no extglobs`,
      },
    );
  };
  if (globs.length > MAX_GLOBS) refuse(globs[MAX_GLOBS]!, `is one glob too many: the limit is ${MAX_GLOBS}`);
  for (const glob of globs) {
    if (glob.length > MAX_GLOB_CHARS) refuse(glob, `is ${glob.length} characters; the limit is ${MAX_GLOB_CHARS}`);
    if (/[@!+*?]\(/.test(glob)) refuse(glob, "uses an extglob (@( !( +( *( ?( ), which is not supported");
    for (const segment of glob.split("/")) {
      if (segment === "**") continue;
      const stars = segment.split("*").length - 1;
      if (stars > MAX_STARS_PER_SEGMENT)
        refuse(
          glob,
          `has ${stars} '*' in the segment ${JSON.stringify(segment.slice(0, 40))}; the limit is ${MAX_STARS_PER_SEGMENT}`,
        );
    }
  }
}

/** The search handler over an index registry (one per process). */
export function createSearch(registry = new IndexRegistry()) {
  return async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    const { context, constraints } = actionInput("search", request);
    const { workspace_root: rootIn, query } = context;
    if (query.length > MAX_QUERY_CHARS) {
      throw new AipError(
        "AIP_ERR_INVALID_FIELD",
        `context.query is ${query.length} characters; the limit is ${MAX_QUERY_CHARS}`,
        {
          suggestion: "Search for a few words or identifiers",
          extensions: { limit: MAX_QUERY_CHARS },
        },
      );
    }
    const limit = constraints.limit ?? 10;
    const globs = constraints.paths;
    if (globs) checkGlobs(globs);
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
      index: {
        files: index.fileCount,
        chunks: index.docs.size,
        ...(refreshed
          ? {
              refreshed: {
                added: refreshed.added,
                changed: refreshed.changed,
                removed: refreshed.removed,
                skipped: refreshed.skipped,
                unreadable: refreshed.unreadable,
                ms: refreshed.ms,
              },
            }
          : {}),
      },
    };
  };
}

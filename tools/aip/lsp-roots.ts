/**
 * Buffer-only requests in `aip lsp`: a file whose folder the agency does not allow still gets symbols,
 * hover and completion from its open buffer. When the agency refuses a request's workspace_root, the
 * request is sent again without it (the buffer and its path only, nothing read from disk), every later
 * request under that root goes without it at once, and the user is told once what to set.
 */
import type { Problem } from "../../protocol/contract/errors.js";

type Json = Record<string, unknown>;

/** True when `problem` is the agency refusing `context.workspace_root` itself (not a file in it). */
export function refusesRoot(problem: Problem, context: Json): boolean {
  return (
    problem.type === "AIP_ERR_FORBIDDEN_PATH" &&
    typeof context.workspace_root === "string" &&
    (problem.workspace_root === context.workspace_root || problem.detail.startsWith("context.workspace_root"))
  );
}

export class BufferOnlyRoots {
  private readonly refused = new Set<string>();
  private readonly loose = new Set<string>();

  /** `tell`: shown to the user once per refused root (window/showMessage). */
  constructor(private readonly tell: (message: string) => void) {}

  /** The context to send: without workspace_root when the agency refused that root before and there is a buffer. */
  context(context: Json): Json {
    if (typeof context.workspace_root !== "string" || !this.refused.has(context.workspace_root)) return context;
    return typeof context.source_code === "string" ? withoutRoot(context) : context;
  }

  /**
   * A file outside every workspace folder: it gets no workspace (a shared directory such as /tmp must not
   * become one, or whatever lies next to the file would be read as its project). The user is told once
   * per directory, since the fix is the editor's (open the project as a folder), not the agency's.
   */
  outsideFolders(dir: string): void {
    if (this.loose.has(dir)) return;
    this.loose.add(dir);
    this.tell(
      `aip lsp: ${dir} is outside every workspace folder, so symbols, hover and completion use the open buffer ` +
        `only and its imports are not read. Open its project as a workspace folder to use it.`,
    );
  }

  /**
   * After a refusal: the context to retry with (buffer only), or undefined when there is nothing to
   * retry (no buffer, or another problem). The first refusal of a root is told to the user.
   */
  retry(context: Json, problem: Problem): Json | undefined {
    if (!refusesRoot(problem, context) || typeof context.source_code !== "string") return undefined;
    const root = context.workspace_root as string;
    if (!this.refused.has(root)) {
      this.refused.add(root);
      this.tell(
        `aip lsp: the agency does not allow ${root}, so symbols, hover and completion use the open buffer only ` +
          `and workspace search does not work there. ${problem.suggestion}`,
      );
    }
    return withoutRoot(context);
  }
}

function withoutRoot(context: Json): Json {
  const { workspace_root: _root, ...rest } = context;
  return rest;
}

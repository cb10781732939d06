/** A temporary workspace of the given files, indexed by the search agent's registry, for the tests of one `describe`. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { IndexRegistry } from "../../../agents/search/registry.js";
import type { WorkspaceIndex } from "../../../agents/search/workspace-index.js";
import { tempDir } from "../../helpers.js";

/** Writes `files` (workspace-relative path → text) before the describe's tests and removes them after; returns the index. */
export function indexedWorkspace(files: Record<string, string>): () => WorkspaceIndex {
  let ws: { dir: string; cleanup: () => void } | undefined;
  let index: WorkspaceIndex | undefined;
  beforeAll(async () => {
    ws = tempDir("aips-");
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(ws.dir, path)), { recursive: true });
      writeFileSync(join(ws.dir, path), text);
    }
    index = (await new IndexRegistry().get(ws.dir, 0)).index;
  });
  afterAll(() => ws?.cleanup());
  return () => {
    if (!index) throw new Error("indexedWorkspace: the index is built in beforeAll");
    return index;
  };
}

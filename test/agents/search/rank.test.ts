/** search ranking (README "search"): symbols above prose that repeats them; synonyms and identifier words reach the symbol. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runQuery } from "../../../agents/search/query.js";
import { IndexRegistry } from "../../../agents/search/registry.js";
import type { WorkspaceIndex } from "../../../agents/search/workspace-index.js";
import { tempDir } from "../../helpers.js";

describe("search ranking", () => {
  let ws: { dir: string; cleanup: () => void };
  let index: WorkspaceIndex;
  beforeAll(async () => {
    ws = tempDir("aips-");
    mkdirSync(join(ws.dir, "src"));
    writeFileSync(
      join(ws.dir, "README.md"),
      "# paths\n\n## stripExtension\n\nRemoves the extension from a file name.\n\n```ts\nstripExtension('a.ts')\n```\n",
    );
    writeFileSync(
      join(ws.dir, "src/paths.ts"),
      "/** Removes the extension from a file name. */\nexport function stripExtension(name: string): string {\n  const dot = name.lastIndexOf('.');\n  return dot > 0 ? name.slice(0, dot) : name;\n}\n\n/** Lists a folder. */\nexport function readDir(path: string): string[] {\n  return [path];\n}\n",
    );
    writeFileSync(
      join(ws.dir, "src/other.ts"),
      "/** Parses a number. */\nexport function parse_int_v2(s: string): number {\n  return Number(s);\n}\n",
    );
    index = (await new IndexRegistry().get(ws.dir, 0)).index;
  });
  afterAll(() => ws.cleanup());

  const top = (q: string): string | null => {
    const h = runQuery(index, q, { limit: 5 })[0];
    return h ? `${h.path}#${h.symbol ?? ""}` : null;
  };

  it("a README heading copied from the JSDoc does not beat the function", () => {
    expect(top("Removes the extension from a file name.")).toBe("src/paths.ts#stripExtension");
    expect(top("stripExtension")).toBe("src/paths.ts#stripExtension");
  });

  it("synonyms reach the symbol: strip/remove, ext/extension, directory/dir/folder", () => {
    expect(top("strip ext")).toBe("src/paths.ts#stripExtension");
    expect(top("directory")).toBe("src/paths.ts#readDir");
  });

  it("identifier words split from snake_case and digits are searchable", () => {
    expect(top("parse int")).toBe("src/other.ts#parse_int_v2");
    expect(top("parse_int_v2")).toBe("src/other.ts#parse_int_v2");
  });
});

/** search on Python (docs/agents.md "search"): definitions with docstrings, identifier words, definitions above prose. */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../helpers.js";
import { SEARCH, startAgent, type Json, type RunningAgent } from "../code-helpers.js";

const FILES: Record<string, string> = {
  "pkg/config.py": [
    '"""Reading settings files."""',
    "",
    "def parse_config(path):",
    '    """Read the settings file at path into a dictionary."""',
    "    return {}",
    "",
    "class ConfigParser:",
    '    """Parses sections."""',
    "",
    "    def merge_sections(self, other):",
    '        """Combine two parsers, later keys winning."""',
    "        return self",
    "",
    "TIMEOUT = 3",
  ].join("\n"),
  "pkg/dicts.py": [
    "def scatter(func, d):",
    '    """Values: dictionary, function, apply."""',
    "    return d",
    "",
    "def gather(func, d):",
    '    """Apply function to values of dictionary, keeping its keys.',
    "",
    "    >>> gather(sum, {'alice': [1, 2, 3], 'bob': [4, 5, 6]})",
    "    {'alice': 6, 'bob': 15}",
    "",
    "    See Also:",
    "        scatter function dictionary values apply values apply",
    '    """',
    "    return {k: func(v) for k, v in d.items()}",
  ].join("\n"),
  "README.md":
    "# Notes\n\nTo read the settings file at path into a dictionary, call it. Read the settings file at path into a dictionary.\n",
};

describe("search on Python", () => {
  let agent: RunningAgent;
  let ws: { dir: string; cleanup: () => void };
  const hits = async (query: string, extra: Json = {}): Promise<Json[]> =>
    (
      await agent.invoke({
        action: "search",
        context: { workspace_root: ws.dir, query },
        constraints: { limit: 5, ...extra },
      })
    ).payload.hits as Json[];
  beforeAll(async () => {
    ws = tempDir("aipx-");
    for (const [rel, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(ws.dir, rel)), { recursive: true });
      writeFileSync(join(ws.dir, rel), text);
    }
    agent = await startAgent(SEARCH);
  }, 60_000);
  afterAll(async () => {
    await agent.stop();
    ws.cleanup();
  });

  it("ranks the docstring that says the query's words in order above one that has them in another order", async () => {
    const h = await hits("Apply function to values of dictionary");
    expect(h.map((x) => x.symbol).slice(0, 2)).toEqual(["gather", "scatter"]);
    expect(h[0]).toMatchObject({ path: "pkg/dicts.py", line_start: 5 });
  });

  it("ranks the function whose docstring is the query above the prose that repeats it", async () => {
    const h = await hits("Read the settings file at path into a dictionary");
    expect(h[0]).toMatchObject({
      path: "pkg/config.py",
      symbol: "parse_config",
      kind: "function",
      line_start: 3,
      line_end: 5,
    });
    expect(h.findIndex((x) => x.path === "README.md")).toBeGreaterThan(0);
  });

  it("finds a method by its docstring, as its own document", async () => {
    const h = await hits("combine two parsers");
    expect(h[0]).toMatchObject({ symbol: "merge_sections", kind: "method", line_start: 10 });
  });

  it("splits snake_case and CamelCase names into words", async () => {
    expect((await hits("merge sections"))[0]!.symbol).toBe("merge_sections");
    expect((await hits("config parser"))[0]!.symbol).toBe("ConfigParser");
  });

  it("filters by constraints.languages python", async () => {
    const h = await hits("settings file", { languages: ["python"] });
    expect(h.length).toBeGreaterThan(0);
    expect(h.every((x) => x.path.endsWith(".py"))).toBe(true);
  });
});

/** `aip mcp` as a real stdio child process, driven by the MCP SDK's own Client. */
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Agency } from "../../orchestrator/harness.js";
import { inToolTerms } from "../../../tools/aip/mcp.js";
import { until } from "../../helpers.js";
import { AIP, bundledAgency, workspace } from "./bridge-helpers.js";

type Json = Record<string, any>;

async function connect(args: string[], roots?: string[]): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" }, roots ? { capabilities: { roots: {} } } : {});
  if (roots)
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: roots.map((r) => ({ uri: pathToFileURL(r).href, name: "w" })),
    }));
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args: [AIP, "mcp", ...args], stderr: "pipe" }),
  );
  return client;
}

const GEO_PY = [
  '"""Shapes and their areas."""',
  '__all__ = ["rect_area", "Square", "check_side"]',
  "",
  "def rect_area(width, height):",
  '    """Area of a rectangle from its width and height.',
  "",
  "    >>> rect_area(2, 3)",
  "    6",
  '    """',
  "    if width < 0:",
  '        raise ValueError("negative width")',
  "    return width * height",
  "",
  "class Shape:",
  "    pass",
  "",
  "class Square(Shape):",
  '    """A square."""',
  "    def __init__(self, side):",
  "        self.side = side",
  "",
  "def check_side(side):",
  '    """The side, once checked."""',
  "    if side < 0:",
  '        raise ValueError("negative side")',
  "    return side",
  "",
  "def _helper():",
  "    return 1",
  "",
].join("\n");

const text = (r: Json): string => (r.content as { text: string }[]).map((c) => c.text).join("\n");

describe("aip mcp over stdio with the SDK's Client", () => {
  let agency: Agency;
  let ws: { root: string; cleanup: () => void };
  let client: Client;
  beforeAll(async () => {
    agency = await bundledAgency(["summarize", "search", "testgen", "complete-lite", "diagnose"]);
    ws = workspace();
    writeFileSync(join(ws.root, "..", `${ws.root.split("/").at(-1)}-secret.ts`), "export const secret = 1;\n");
    symlinkSync("/etc", join(ws.root, "etc-link"));
    client = await connect(["--socket", agency.socket, "--workspace", ws.root]);
  }, 150_000);
  afterAll(async () => {
    await client?.close();
    await agency?.stop();
    ws?.cleanup();
  });

  it("lists the 5 tools with input schemas from the action contracts and output schemas", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      "complete_at",
      "diagnose",
      "generate_tests",
      "search_workspace",
      "summarize_file",
    ]);
    const search = tools.find((t) => t.name === "search_workspace")!;
    expect(search.inputSchema.required).toEqual(["query"]);
    expect((search.inputSchema.properties as Json).limit).toMatchObject({ type: "integer", minimum: 1, maximum: 200 });
    const complete = tools.find((t) => t.name === "complete_at")!;
    expect(complete.inputSchema.required).toEqual(["path", "cursor"]);
    expect((complete.outputSchema!.properties as Json).engine).toMatchObject({
      enum: ["typed", "syntactic", "lite", "model"],
    });
    expect((tools.find((t) => t.name === "generate_tests")!.inputSchema.properties as Json).framework.enum).toEqual([
      "vitest",
      "jest",
      "node:test",
      "pytest",
      "unittest",
    ]);
  });

  it("calls each tool successfully, with structured output", async () => {
    const summary = (await client.callTool({ name: "summarize_file", arguments: { path: "src/math.ts" } })) as Json;
    expect(summary.isError).toBeFalsy();
    expect(summary.structuredContent.outline.functions.map((f: Json) => f.name)).toEqual(["add"]);
    expect(summary.structuredContent.outline.classes[0].name).toBe("Counter");
    expect(JSON.parse(text(summary))).toEqual(summary.structuredContent);

    const search = (await client.callTool({
      name: "search_workspace",
      arguments: { query: "counter increment", limit: 3 },
    })) as Json;
    expect(search.structuredContent.hits[0]).toMatchObject({ path: "src/math.ts", symbol: "increment" });

    const tests = (await client.callTool({
      name: "generate_tests",
      arguments: { path: "src/math.ts", function: "add", framework: "jest" },
    })) as Json;
    expect(tests.structuredContent).toMatchObject({
      test_path: "test/src/math.test.ts",
      framework: "jest",
      import: { name: "add" },
    });
    expect(tests.structuredContent.content).toContain("add(");

    const completion = (await client.callTool({
      name: "complete_at",
      arguments: {
        path: "src/math.ts",
        cursor: { line: 4, column: 12 },
        source_code: "export function add(a: number, b: number): number {\n  return a + b;\n}\nconst x = ad",
      },
    })) as Json;
    expect(completion.isError, text(completion)).toBeFalsy();
    expect(completion.structuredContent.engine).toBe("syntactic");
    expect(completion.structuredContent.items[0]).toMatchObject({ label: "add", kind: "function" });
  });

  it("answers on a .py file: outline and API, a definition found by its docstring, a pytest file", async () => {
    mkdirSync(join(ws.root, "geo"), { recursive: true });
    writeFileSync(join(ws.root, "geo/__init__.py"), "");
    writeFileSync(join(ws.root, "geo/shapes.py"), GEO_PY);
    const summary = (await client.callTool({ name: "summarize_file", arguments: { path: "geo/shapes.py" } })) as Json;
    expect(summary.isError, text(summary)).toBeFalsy();
    expect(summary.structuredContent.language).toBe("python");
    expect(summary.structuredContent.outline.functions.map((f: Json) => f.name)).toEqual([
      "rect_area",
      "check_side",
      "_helper",
    ]);
    expect(summary.structuredContent.outline.classes[1]).toMatchObject({
      name: "Square",
      extends: "Shape",
      doc: "A square.",
    });
    expect(summary.structuredContent.outline.exports.map((e: Json) => e.name)).toEqual([
      "rect_area",
      "Square",
      "check_side",
    ]);

    // The index was built by an earlier test; new files are read once it is stale (DEFAULT_STALE_MS).
    let search: Json = {};
    await until(
      async () => {
        search = (await client.callTool({
          name: "search_workspace",
          arguments: { query: "area of a rectangle from its width and height", limit: 3 },
        })) as Json;
        return search.structuredContent?.hits?.[0]?.path === "geo/shapes.py";
      },
      20_000,
      "the new Python file in the search index",
    );
    expect(search.structuredContent.hits[0]).toMatchObject({
      path: "geo/shapes.py",
      symbol: "rect_area",
      line_start: 4,
    });

    const tests = (await client.callTool({
      name: "generate_tests",
      arguments: { path: "geo/shapes.py", function: "rect_area" },
    })) as Json;
    expect(tests.isError, text(tests)).toBeFalsy();
    expect(tests.structuredContent).toMatchObject({
      language: "python",
      framework: "pytest",
      import: { name: "rect_area" },
    });
    expect(tests.structuredContent.content).toContain("from geo.shapes import rect_area");
    expect(tests.structuredContent.content).toContain("assert rect_area(2, 3) == 6");
    const guarded = (await client.callTool({
      name: "generate_tests",
      arguments: { path: "geo/shapes.py", function: "check_side", framework: "unittest" },
    })) as Json;
    expect(guarded.structuredContent.framework).toBe("unittest");
    // the guarded raise, with an argument that meets its guard
    expect(guarded.structuredContent.content).toMatch(/assertRaises\(ValueError\):\n\s+check_side\(side=-1\)/);
  });

  it("diagnose: pasted stack trace to the cause in the workspace", async () => {
    const diagnosis = (await client.callTool({
      name: "diagnose",
      arguments: { output: "TypeError: boom\n    at add (src/math.ts:2:3)\n    at node:internal/x:1:1\n" },
    })) as Json;
    expect(diagnosis.isError, text(diagnosis)).toBeFalsy();
    expect(diagnosis.structuredContent).toMatchObject({
      mode: "output",
      tool: "node",
      cause: { file_path: "src/math.ts", line: 2, code: expect.stringContaining(">    2 |") },
      model: { used: false },
    });
  });

  it("bad input is a clear tool error", async () => {
    const cases: [string, Json, RegExp][] = [
      ["summarize_file", { path: "src/math.ts", scope: "galaxy" }, /scope/],
      ["search_workspace", { query: "x", limit: 0 }, /limit/],
      ["generate_tests", { path: "src/math.ts", function: "nosuch" }, /AIP_ERR_INVALID_FIELD: .*nosuch/],
      ["complete_at", { path: "src/math.ts" }, /cursor/],
    ];
    for (const [name, args, message] of cases) {
      const r = (await client.callTool({ name, arguments: args })) as Json;
      expect(r.isError, name).toBe(true);
      expect(text(r), name).toMatch(message);
      // In the tool's argument names, not the AIP request's fields.
      expect(text(r).split("\n")[0], name).not.toMatch(/\b(context|constraints)\.\w/);
    }
    expect(inToolTerms("constraints.function: no function nosuch; context.cursor is required")).toBe(
      "function: no function nosuch; cursor is required",
    );
  });

  it("a path outside the workspace is refused, also through a symlink", async () => {
    for (const path of [`../${ws.root.split("/").at(-1)}-secret.ts`, "/etc/passwd", "etc-link/hostname"]) {
      const r = (await client.callTool({ name: "summarize_file", arguments: { path } })) as Json;
      expect(r.isError, path).toBe(true);
      expect(text(r), path).toMatch(/^AIP_ERR_FORBIDDEN_PATH: /);
    }
  });

  it("takes the workspace from the client's roots when no --workspace is given", async () => {
    const rooted = await connect(["--socket", agency.socket], [ws.root]);
    try {
      const r = (await rooted.callTool({ name: "summarize_file", arguments: { path: "src/math.ts" } })) as Json;
      expect(r.structuredContent.outline.consts.map((c: Json) => c.name)).toEqual(["total"]);
      const out = (await rooted.callTool({ name: "summarize_file", arguments: { path: "/etc/hostname" } })) as Json;
      expect(text(out)).toMatch(/^AIP_ERR_FORBIDDEN_PATH: /);
    } finally {
      await rooted.close();
    }
    const none = await connect(["--socket", agency.socket]);
    try {
      const r = (await none.callTool({ name: "search_workspace", arguments: { query: "add" } })) as Json;
      expect(r.isError).toBe(true);
      expect(text(r)).toMatch(/No workspace: start aip mcp with --workspace DIR/);
    } finally {
      await none.close();
    }
  });
});

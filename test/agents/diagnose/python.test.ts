/**
 * agent-diagnose on Python: a file's errors from pyright (the checker complete-lite keeps per
 * workspace), and a real traceback from /usr/bin/python3 mapped to the workspace, the standard
 * library's frames named and not read.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../helpers.js";
import { DIAGNOSE, startAgent, type Json, type RunningAgent } from "../code-helpers.js";

const PYTHON = process.env.AIP_TEST_PYTHON ?? "/usr/bin/python3";

const SHAPES = `import json


class Circle:
    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        return 3.14159 * self.radius ** 2


def _check(obj):
    if obj.get("radius", 0) < 0:
        raise ValueError(f"negative radius {obj['radius']}")
    return obj


def load(text: str):
    return json.loads(text, object_hook=_check)
`;

const APP = `from pkg.shapes import Circle


def main() -> None:
    c = Circle(2.0)
    print(c.aera())
    print(undefined_name)


if __name__ == "__main__":
    main()
`;

const RUN = `from pkg.shapes import load


def main():
    return load('{"radius": -1}')


main()
`;

describe.skipIf(!existsSync(PYTHON))("agent-diagnose on Python", () => {
  let agent: RunningAgent;
  let ws: { dir: string; cleanup: () => void };
  let root: string;
  beforeAll(async () => {
    ws = tempDir("aipdpy-");
    root = realpathSync(ws.dir);
    mkdirSync(join(root, "pkg"));
    writeFileSync(join(root, "pyrightconfig.json"), "{}\n");
    writeFileSync(join(root, "pkg/__init__.py"), "");
    writeFileSync(join(root, "pkg/shapes.py"), SHAPES);
    writeFileSync(join(root, "app.py"), APP);
    writeFileSync(join(root, "run.py"), RUN);
    agent = await startAgent(DIAGNOSE);
  }, 120_000);
  afterAll(async () => {
    await agent.stop();
    ws.cleanup();
  });

  it("a .py file's errors from pyright, at their lines, with rule codes and checked fixes", async () => {
    const res = await agent.invoke({
      action: "diagnose",
      context: { workspace_root: root, file_path: "app.py" },
      constraints: { check_wait_ms: 60_000, verify_budget_ms: 60_000 },
    });
    expect(res.status, JSON.stringify(res.error)).toBe("success");
    const p = res.payload as Json;
    expect(p).toMatchObject({ mode: "file", engine: "checker", checker: "pyright", language: "python" });
    const ds = p.diagnostics as Json[];
    const attr = ds.find((d) => d.line === 6);
    expect(attr).toMatchObject({ file_path: "app.py", column: 12, severity: "error" });
    // The misspelled attribute: renamed to the member pyright offers there, checked by pyright.
    expect(attr!.fixes[0]).toMatchObject({
      description: "Change spelling to 'area'",
      verified: true,
      edits: [
        {
          file_path: "app.py",
          range: { start: { line: 6, column: 12 }, end: { line: 6, column: 16 } },
          new_text: "area",
        },
      ],
    });
    expect(attr!.message).toContain('"aera"');
    expect(attr!.code).toBe("reportAttributeAccessIssue");
    const undef = ds.find((d) => d.line === 7);
    expect(undef).toMatchObject({ code: "reportUndefinedVariable", column: 10, severity: "error" });
    expect(undef!.message).toContain('"undefined_name" is not defined');
    expect(undef!.fixes).toEqual([]);
    expect(ds).toHaveLength(2);
    expect(p.fixes_checked).toBeGreaterThan(0);
  });

  it("an import added from the standard library and from the workspace, a misspelled local renamed, an unused import removed", async () => {
    const tools = `import os


def fmt(value: float) -> str:
    result = json.dumps({"v": value})
    return reslt


def read(text: str):
    return load(text)
`;
    const res = await agent.invoke({
      action: "diagnose",
      context: { workspace_root: root, file_path: "tools.py", source_code: tools },
      constraints: { check_wait_ms: 60_000, verify_budget_ms: 60_000 },
    });
    expect(res.status, JSON.stringify(res.error)).toBe("success");
    const ds = res.payload.diagnostics as Json[];
    const top = (line: number) => ds.find((d) => d.line === line)!.fixes[0];
    expect(ds.find((d) => d.line === 1)).toMatchObject({ code: "reportUnusedImport", severity: "warning" });
    expect(top(1)).toMatchObject({
      fix_name: "agency.removeImport",
      verified: true,
      edits: [{ range: { start: { line: 1, column: 0 }, end: { line: 2, column: 0 } }, new_text: "" }],
    });
    expect(top(5)).toMatchObject({
      verified: true,
      edits: [{ range: { start: { line: 2, column: 0 } }, new_text: "import json\n" }],
    });
    expect(top(6)).toMatchObject({ verified: true, edits: [{ new_text: "result" }] });
    expect(top(10)).toMatchObject({ verified: true, edits: [{ new_text: "from pkg.shapes import load\n" }] });
    // Asked again without the checks: the same diagnostics, from the buffer sent rather than an edited copy.
    const again = await agent.invoke({
      action: "diagnose",
      context: { workspace_root: root, file_path: "tools.py", source_code: tools },
      constraints: { check_wait_ms: 60_000, verify: false },
    });
    expect((again.payload.diagnostics as Json[]).map((d) => d.line)).toEqual(ds.map((d) => d.line));
  });

  it("an unsaved buffer is checked as sent: the fixed text has no errors", async () => {
    const res = await agent.invoke({
      action: "diagnose",
      context: {
        workspace_root: root,
        file_path: "app.py",
        source_code: APP.replace("c.aera()", "c.area()").replace("print(undefined_name)\n", ""),
      },
      constraints: { check_wait_ms: 60_000 },
    });
    expect(res.status, JSON.stringify(res.error)).toBe("success");
    expect(res.payload).toMatchObject({ engine: "checker", diagnostics: [] });
  });

  it("a real traceback: the innermost workspace frame is the cause, the standard library's frames are named, not read", async () => {
    const run = spawnSync(PYTHON, ["run.py"], { cwd: root, encoding: "utf8" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^Traceback \(most recent call last\):/m);
    const res = await agent.invoke({
      action: "diagnose",
      context: { workspace_root: root, output: run.stderr },
      constraints: { check_wait_ms: 60_000 },
    });
    expect(res.status, JSON.stringify(res.error)).toBe("success");
    const p = res.payload as Json;
    expect(p.tool).toBe("python");
    expect(p.cause).toMatchObject({ file_path: "pkg/shapes.py", line: 14, function: "_check" });
    expect(p.cause.code).toContain('raise ValueError(f"negative radius');
    const [f] = p.failures as Json[];
    expect(f).toMatchObject({ error: "ValueError", message: "negative radius -1" });
    const frames = f!.frames as Json[];
    // Innermost first: the hook, then json's decoder (outside the workspace), then the callers.
    expect(frames[0]).toMatchObject({ kind: "workspace", file_path: "pkg/shapes.py", line: 14 });
    const stdlib = frames.filter((x) => /\/json\//.test(x.file_path ?? ""));
    expect(stdlib.length).toBeGreaterThan(0);
    for (const x of stdlib) expect(x).toMatchObject({ kind: "outside", reason: "outside the workspace; not read" });
    expect(frames.at(-1)).toMatchObject({ kind: "workspace", file_path: "run.py", line: 8, function: "<module>" });
  });
});

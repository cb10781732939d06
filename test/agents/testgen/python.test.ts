/** testgen on Python (docs/agents.md "testgen"): doctests to value assertions, guarded raises, skip stubs, framework and import as the workspace's tests, the check that ran. */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../helpers.js";
import { TESTGEN, startAgent, type Json, type RunningAgent } from "../code-helpers.js";

const PYTHON = "/usr/bin/python3";
const hasPytest = ((): boolean => {
  try {
    execFileSync(PYTHON, ["-c", "import pytest"], { stdio: "ignore" });
    return existsSync("/usr/bin/bwrap");
  } catch {
    return false;
  }
})();

const MOD = [
  '"""Small maths."""',
  "",
  "class Neg(Exception):",
  "    pass",
  "",
  "def pairs(n):",
  '    """Pairs up to n.',
  "",
  "    >>> pairs(3)",
  "    {0: 0,",
  "     1: 1,",
  "     2: 4}",
  "    >>> pairs(-1)",
  "    Traceback (most recent call last):",
  "      ...",
  "    pkg.maths.Neg: negative",
  "    >>> half = pairs",
  "    >>> half(1)",
  "    {0: 0}",
  "    >>> pairs",
  "    <function pairs at 0x7f>",
  '    """',
  "    if n < 0:",
  '        raise Neg("negative")',
  "    return {i: i * i for i in range(n)}",
  "",
  "def ratio(a):",
  '    """Half of a.',
  "",
  "    >>> ratio(1)",
  "    0.5",
  '    """',
  "    if a is None:",
  '        raise ValueError("a is None")',
  "    return a / 2",
  "",
  "def opaque(x, y):",
  "    return x.frob(y)",
  "",
  "class Counter:",
  "    def __init__(self, start):",
  "        self.n = start",
  "",
  "    def bump(self, by=1):",
  "        if by > 100:",
  '            raise ValueError("too much")',
  "        self.n += by",
  "        return self.n",
  "",
  "C = Counter(5)",
].join("\n");

describe("testgen on Python", () => {
  let agent: RunningAgent;
  let ws: { dir: string; cleanup: () => void };
  let uws: { dir: string; cleanup: () => void };
  const gen = async (root: string, file: string, fn: string, extra: Json = {}): Promise<Json> =>
    (
      await agent.invoke({
        action: "testgen",
        context: { workspace_root: root, file_path: file },
        constraints: { function: fn, ...extra },
      })
    ).payload as Json;
  const write = (root: string, files: Record<string, string>): void => {
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, rel)), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
  };
  beforeAll(async () => {
    ws = tempDir("aipx-");
    write(ws.dir, {
      "src/pkg/__init__.py": "",
      "src/pkg/maths.py": MOD,
      "tests/test_existing.py": "import pytest\nfrom pkg.maths import ratio\n",
      "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["src"]\n',
    });
    uws = tempDir("aipx-");
    write(uws.dir, {
      "lib/tools.py": 'def twice(x):\n    """Twice.\n\n    >>> twice(2)\n    4\n    """\n    return 2 * x\n',
      "lib/__init__.py": "",
      "test/test_old.py": "import unittest\n\nclass T(unittest.TestCase):\n    pass\n",
    });
    process.env.AIP_TRUSTED_WORKSPACES = ws.dir;
    process.env.AIP_PYTHON = PYTHON;
    agent = await startAgent(TESTGEN);
  }, 60_000);
  afterAll(async () => {
    await agent.stop();
    ws.cleanup();
    uws.cleanup();
    delete process.env.AIP_TRUSTED_WORKSPACES;
  });

  it("turns doctests into value assertions: multi-line value, traceback, set-up lines, a non-literal skipped", async () => {
    const p = await gen(ws.dir, "src/pkg/maths.py", "pairs");
    expect(p.framework).toBe("pytest");
    expect(p.test_path).toBe("tests/test_maths_pairs.py");
    expect(p.content).toContain("from pkg.maths import pairs, Neg");
    expect(p.content).toContain("assert pairs(3) == {0: 0, 1: 1, 2: 4}");
    expect(p.content).toContain("with pytest.raises(Neg):\n        pairs(-1)");
    expect(p.content).toContain("    half = pairs\n    assert half(1) == {0: 0}");
    expect(p.content).toMatch(/pytest\.skip\("TODO: the doctest output \\"<function pairs at 0x7f>\\" is not a value/);
    expect(p.tests).toMatchObject({ kept: 4, todo: 1, from_examples: 3, value_assertions: 4 });
    // the guarded raise too
    expect(p.content).toContain("with pytest.raises(Neg):\n        pairs(n=-1)");
  });

  it("uses pytest.approx for a float and a guard on None", async () => {
    const p = await gen(ws.dir, "src/pkg/maths.py", "ratio");
    expect(p.content).toContain("assert ratio(1) == pytest.approx(0.5)");
    expect(p.content).toContain("with pytest.raises(ValueError):\n        ratio(a=None)");
  });

  it("leaves a function with nothing to go on as a marked skip stub, not a vacuous assert", async () => {
    const p = await gen(ws.dir, "src/pkg/maths.py", "opaque");
    expect(p.content).toContain('pytest.skip("TODO: opaque(x, y) has no doctest or guarded raise');
    expect(p.content).not.toContain("is not None");
    expect(p.tests).toMatchObject({ kept: 0, todo: 1 });
  });

  it("constructs a method's class from the workspace's own call", async () => {
    const p = await gen(ws.dir, "src/pkg/maths.py", "Counter.bump");
    expect(p.content).toContain("from pkg.maths import Counter");
    expect(p.content).toContain("Counter(5).bump");
  });

  it.skipIf(!hasPytest)("collects the file with pytest in the sandbox when the workspace is trusted", async () => {
    const p = await gen(ws.dir, "src/pkg/maths.py", "pairs");
    expect(p.checks).toMatchObject({ check: "collect", run: "passed", runner: "pytest" });
    // and the file really passes where it is proposed
    const t = join(ws.dir, p.test_path as string);
    writeFileSync(t, p.content as string);
    const out = execFileSync(PYTHON, ["-m", "pytest", "-q", "-p", "no:cacheprovider", p.test_path as string], {
      cwd: ws.dir,
      encoding: "utf8",
    });
    expect(out).toMatch(/4 passed, 1 skipped/);
  });

  it("writes unittest where the workspace's tests do, and checks by parsing alone when untrusted", async () => {
    const p = await gen(uws.dir, "lib/tools.py", "twice");
    expect(p.framework).toBe("unittest");
    expect(p.test_path).toBe("test/test_tools_twice.py");
    expect(p.content).toContain("from lib.tools import twice");
    expect(p.content).toContain("class TestTwice(unittest.TestCase):");
    expect(p.content).toContain("self.assertEqual(twice(2), 4)");
    expect(p.checks).toMatchObject({ check: "parse", run: "skipped", runner: null });
    expect(p.checks.skipped.run).toContain("not trusted");
  });

  it("answers a broken buffer with partial when the target function is intact", async () => {
    const r = await agent.invoke({
      action: "testgen",
      context: { source_code: MOD + "\n\ndef broken(:\n    return (1,\n", file_path: "maths.py" },
      constraints: { function: "ratio" },
    });
    expect(r.status).toBe("success");
    expect(r.payload.partial).toBe(true);
    expect(r.payload.content).toContain("assert ratio(1) == pytest.approx(0.5)");
  });
});

/**
 * The warm runner: one long-lived vitest per trusted workspace, in the real sandbox (bubblewrap, the
 * workspace's own vitest through its Node API), serving successive generated files; restarted when a
 * source file changes and after a file that does not finish in time; never started for an untrusted
 * workspace; nothing written into the workspace.
 */
import { cpSync, mkdirSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RECORDER } from "../../../agents/testgen/verify.js";
import { runWarm, stopWarmRunners, warmStarts, workspaceFingerprint } from "../../../agents/testgen/warm.js";
import { hasBwrap, ROOT, tempDir, withEnv } from "../../helpers.js";

const temps: { cleanup: () => void }[] = [];
afterAll(() => {
  stopWarmRunners();
  temps.forEach((t) => t.cleanup());
});

/**
 * Other vitest installs to run the leak check on too (vitest 1-3 keep one test thread between files,
 * vitest 4 cannot): node_modules folders, comma-separated, each with a vitest in it.
 */
const otherVitests = (process.env.TEST_WARM_VITEST_MODULES ?? "").split(",").filter((d) => d !== "");

function fixture(modules = join(ROOT, "node_modules")): string {
  const t = tempDir("aiptgw-");
  temps.push(t);
  cpSync(join(ROOT, "test/fixtures/code/testgen-lib"), t.dir, { recursive: true });
  symlinkSync(modules, join(t.dir, "node_modules"));
  writeFileSync(
    join(t.dir, "src/shout.ts"),
    'export function shout(s: string): string { return s.toUpperCase() + "!"; }\n',
  );
  return t.dir;
}

const test = (body: string, extra = ""): string =>
  `${extra}import { expect, it } from "vitest";\nimport { shout } from "./shout.js";\n${body}\n`;

/** Move a file's modification time forward, as an editor's save does. */
function edit(file: string, text: string, secondsLater: number): void {
  writeFileSync(file, text);
  const t = new Date(Date.now() + secondsLater * 1000);
  utimesSync(file, t, t);
}

describe("workspaceFingerprint", () => {
  it("changes with a source file's edit or a new source file, not with a new test file or node_modules' content", () => {
    const t = tempDir("aiptgf-");
    temps.push(t);
    mkdirSync(join(t.dir, "src"));
    mkdirSync(join(t.dir, "node_modules", "dep"), { recursive: true });
    writeFileSync(join(t.dir, "src/a.ts"), "export const a = 1;\n");
    const first = workspaceFingerprint(t.dir);
    writeFileSync(join(t.dir, "src/a.test.ts"), "// a generated test\n");
    writeFileSync(join(t.dir, "node_modules/dep/index.js"), "module.exports = 1;\n");
    expect(workspaceFingerprint(t.dir)).toBe(first);
    edit(join(t.dir, "src/a.ts"), "export const a = 2;\n", 5);
    const second = workspaceFingerprint(t.dir);
    expect(second).not.toBe(first);
    writeFileSync(join(t.dir, "src/b.ts"), "export const b = 1;\n");
    expect(workspaceFingerprint(t.dir)).not.toBe(second);
  });
});

describe.skipIf(!hasBwrap)("runWarm (the workspace's vitest, kept warm in the sandbox)", () => {
  it("starts nothing for an untrusted workspace", async () => {
    const root = fixture();
    const before = warmStarts();
    const r = await withEnv({ AIP_TRUSTED_WORKSPACES: undefined, AIP_TRUST_FILE: "/nonexistent" }, () =>
      runWarm(root, "src/a.agency-u.test.ts", test('it("t", () => expect(shout("a")).toBe("A!"));'), 60_000),
    );
    expect(r).toBeUndefined();
    expect(warmStarts()).toBe(before);
  });

  it("one runner for successive files: outcomes, failures and recorded values; an edit restarts it and is seen", async () => {
    const root = fixture();
    await withEnv({ AIP_TRUSTED_WORKSPACES: root }, async () => {
      const before = warmStarts();
      const a = await runWarm(
        root,
        "src/shout.agency-1.test.ts",
        test('it("loud", () => { expect(shout("hi")).toBe("HI!"); });'),
        120_000,
      );
      expect(a).toMatchObject({
        outcome: "ran",
        started: true,
        answer: { collected: true, tests: [{ title: "loud", status: "passed" }] },
      });
      expect(warmStarts()).toBe(before + 1);

      const b = await runWarm(
        root,
        "src/shout.agency-2.test.ts",
        test(
          'it("wrong", () => { expect(shout("hi")).toBe("hi"); });\n' +
            'it("recorded", () => { __agencyRecord("recorded", { n: shout("x") }); });',
          RECORDER,
        ),
        120_000,
      );
      expect(b?.outcome).toBe("ran");
      if (b?.outcome !== "ran") return;
      expect(b.started).toBe(false);
      expect(b.answer.tests.map((t) => [t.title, t.status])).toEqual([
        ["wrong", "failed"],
        ["recorded", "passed"],
      ]);
      expect(b.answer.tests[0]!.failureMessages.join("\n")).toContain("'HI!'");
      expect(b.answer.records).toContain('"json":"{\\"n\\":\\"X!\\"}"');
      expect(warmStarts()).toBe(before + 1);

      // A file that does not load: its error comes back, the runner stays.
      const c = await runWarm(
        root,
        "src/shout.agency-3.test.ts",
        'import { nothing } from "./missing.js";\nimport { it } from "vitest";\nit("x", () => nothing());\n',
        120_000,
      );
      expect(c).toMatchObject({ outcome: "ran", answer: { tests: [], file: { status: "failed" } } });
      if (c?.outcome === "ran") expect(c.answer.file?.message).toContain("missing");
      expect(warmStarts()).toBe(before + 1);

      edit(
        join(root, "src/shout.ts"),
        'export function shout(s: string): string { return s.toUpperCase() + "?"; }\n',
        5,
      );
      const d = await runWarm(
        root,
        "src/shout.agency-4.test.ts",
        test('it("edited", () => { expect(shout("hi")).toBe("HI?"); });'),
        120_000,
      );
      expect(d).toMatchObject({ outcome: "ran", started: true, answer: { tests: [{ status: "passed" }] } });
      expect(warmStarts()).toBe(before + 2);
      // Nothing was written into the workspace.
      expect(readdirSync(join(root, "src")).sort()).toEqual(["money.ts", "shout.ts"]);
    });
  }, 600_000);

  it.each([join(ROOT, "node_modules"), ...otherVitests])(
    "a file's globals, process.env and the workspace's module state do not reach the next file (%s)",
    async (modules) => {
      const root = fixture(modules);
      writeFileSync(join(root, "src/counter.ts"), "let n = 0;\nexport function next(): number {\n  return ++n;\n}\n");
      // Each file sees a fresh world, then changes it the same way.
      const leaky = (title: string): string =>
        'import { expect, it } from "vitest";\nimport { next } from "./counter.js";\n' +
        "const g = globalThis as { __agencyLeak?: number };\n" +
        "let own = 0;\n" +
        `it("${title}", () => {\n` +
        "  expect(g.__agencyLeak).toBeUndefined();\n" +
        "  expect(process.env.AGENCY_LEAK).toBeUndefined();\n" +
        "  expect(next()).toBe(1);\n" +
        "  own++;\n" +
        "  expect(own).toBe(1);\n" +
        "  g.__agencyLeak = 1;\n" +
        '  process.env.AGENCY_LEAK = "1";\n' +
        "});\n";
      const quiet = (title: string): string =>
        'import { expect, it } from "vitest";\nimport { next } from "./counter.js";\n' +
        `it("${title}", () => {\n  expect((globalThis as { __agencyLeak?: number }).__agencyLeak).toBeUndefined();\n  expect(next()).toBe(1);\n});\n`;
      await withEnv({ AIP_TRUSTED_WORKSPACES: root }, async () => {
        const outcomes = [];
        for (const [i, content] of [leaky("first"), leaky("second"), quiet("third"), quiet("fourth")].entries()) {
          const r = await runWarm(root, `src/counter.agency-leak-${i}.test.ts`, content, 120_000);
          expect(r?.outcome).toBe("ran");
          if (r?.outcome === "ran")
            outcomes.push(...r.answer.tests.map((t) => [t.title, t.status, t.failureMessages[0] ?? ""]));
        }
        expect(outcomes).toEqual([
          ["first", "passed", ""],
          ["second", "passed", ""],
          ["third", "passed", ""],
          ["fourth", "passed", ""],
        ]);
      });
    },
    600_000,
  );

  it("a file that never finishes is killed at its timeout, and the next file gets a fresh runner", async () => {
    const root = fixture();
    await withEnv({ AIP_TRUSTED_WORKSPACES: root }, async () => {
      const ok = await runWarm(
        root,
        "src/shout.agency-5.test.ts",
        test('it("ok", () => { expect(shout("a")).toBe("A!"); });'),
        120_000,
      );
      expect(ok?.outcome).toBe("ran");
      const starts = warmStarts();
      const hang = await runWarm(
        root,
        "src/shout.agency-6.test.ts",
        test('it("hangs", () => new Promise<void>(() => undefined), 600_000);'),
        4000,
      );
      expect(hang?.outcome).toBe("timeout");
      const next = await runWarm(
        root,
        "src/shout.agency-7.test.ts",
        test('it("again", () => { expect(shout("b")).toBe("B!"); });'),
        120_000,
      );
      expect(next).toMatchObject({ outcome: "ran", started: true, answer: { tests: [{ status: "passed" }] } });
      expect(warmStarts()).toBe(starts + 1);
    });
  }, 600_000);
});

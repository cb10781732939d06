/** scripts/commit-msg.mjs: the commit-msg hook that keeps subjects CHANGELOG lines. */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers.js";

const HOOK = join(ROOT, "scripts/hooks/commit-msg");

/** Run the installed hook (scripts/hooks/commit-msg) on `message`, as git does. */
function hook(message: string): { status: number | null; stderr: string } {
  const t = tempDir("aipmsg-");
  try {
    const file = join(t.dir, "COMMIT_EDITMSG");
    writeFileSync(file, message);
    const r = spawnSync(HOOK, [file], { cwd: ROOT, encoding: "utf8" });
    return { status: r.status, stderr: r.stderr };
  } finally {
    t.cleanup();
  }
}

describe("the commit-msg hook", () => {
  it("accepts an imperative subject with its figures in the body, and git's comment lines", () => {
    const r = hook(
      "Pace CPU-heavy agents one call at a time\n\np95 beside search 12.4 ms, was 31.0 ms.\n# Please enter…\n",
    );
    expect(r).toEqual({ status: 0, stderr: "" });
    expect(hook("Split protocol/ into contract/, transport/ and util/ for AIP-1\n").status).toBe(0);
  });

  it("refuses a long subject, a figure, a trailing period and a body without a blank line, naming each", () => {
    const long = `Make ${"everything ".repeat(8)}faster`;
    expect(hook(`${long}\n`).stderr).toContain(`the subject has ${long.length} characters; at most 72`);
    expect(hook("Cut the hop's CPU to 25.2 µs a request\n").stderr).toContain('carries a figure ("25.2 µs")');
    expect(hook("Raise recall@5 to 91.7%\n").stderr).toContain('carries a figure ("91.7%")');
    expect(hook("Speed up search 27.7x\n").stderr).toContain('carries a figure ("27.7x")');
    const r = hook("Add a changelog.\nwith details\n");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("ends with a period");
    expect(r.stderr).toContain("the line after the subject must be blank");
    expect(hook("# only a comment\n").stderr).toContain("the subject is empty");
  });
});

import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listWorkspaceFiles } from "../../../../agents/lib/code/files.js";
import { nodeFs, readWorkspaceFile, type WorkspaceFs } from "../../../../agents/lib/code/workspace.js";
import { tempDir } from "../../../helpers.js";

/** The real file system, counting every stat and read per opened path: proves which files were read. */
function spyFs(): WorkspaceFs & { reads: string[]; stats: string[] } {
  const reads: string[] = [];
  const stats: string[] = [];
  return {
    reads,
    stats,
    realpath: (p) => nodeFs.realpath(p),
    whereIs: (h) => nodeFs.whereIs(h),
    open: async (p, flags) => {
      const h = await nodeFs.open(p, flags);
      const stat = h.stat.bind(h);
      const read = h.read.bind(h) as (...a: unknown[]) => ReturnType<typeof h.read>;
      Object.assign(h, {
        stat: (...a: Parameters<typeof h.stat>) => {
          stats.push(p);
          return stat(...a);
        },
        read: (...a: unknown[]) => {
          if (!reads.includes(p)) reads.push(p);
          return read(...a);
        },
      });
      return h;
    },
  };
}

describe("workspace reads", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  let outside: string;
  beforeEach(() => {
    t = tempDir("aipws-");
    root = join(t.dir, "ws");
    outside = join(t.dir, "outside");
    mkdirSync(join(root, "src"), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(root, "src/a.ts"), "export const a = 1;\n");
    writeFileSync(join(outside, "secret.ts"), "export const secret = 1;\n");
  });
  afterEach(() => t.cleanup());

  it("reads a file inside the workspace, relative or absolute", async () => {
    expect((await readWorkspaceFile(root, "src/a.ts")).text).toBe("export const a = 1;\n");
    expect((await readWorkspaceFile(root, join(root, "src/a.ts"))).text).toBe("export const a = 1;\n");
  });

  it("refuses a path escaping by .. with AIP_ERR_FORBIDDEN_PATH, without reading", async () => {
    const fs = spyFs();
    await expect(readWorkspaceFile(root, "../outside/secret.ts", { fs })).rejects.toMatchObject({
      code: "AIP_ERR_FORBIDDEN_PATH",
    });
    await expect(readWorkspaceFile(root, "src/../../outside/missing.ts", { fs })).rejects.toMatchObject({
      code: "AIP_ERR_FORBIDDEN_PATH",
    });
    expect(fs.reads).toEqual([]);
  });

  it("refuses a symlink pointing outside, and follows one that stays inside", async () => {
    symlinkSync(join(outside, "secret.ts"), join(root, "src/link.ts"));
    symlinkSync(outside, join(root, "out-dir"));
    symlinkSync(join(root, "src/a.ts"), join(root, "inside.ts"));
    const fs = spyFs();
    await expect(readWorkspaceFile(root, "src/link.ts", { fs })).rejects.toMatchObject({
      code: "AIP_ERR_FORBIDDEN_PATH",
    });
    await expect(readWorkspaceFile(root, "out-dir/secret.ts", { fs })).rejects.toMatchObject({
      code: "AIP_ERR_FORBIDDEN_PATH",
    });
    expect(fs.reads).toEqual([]);
    expect((await readWorkspaceFile(root, "inside.ts")).text).toBe("export const a = 1;\n");
  });

  it("a workspace_root that is itself a symlink is resolved before comparing", async () => {
    symlinkSync(root, join(t.dir, "ws-link"));
    expect((await readWorkspaceFile(join(t.dir, "ws-link"), "src/a.ts")).path).toBe(join(root, "src/a.ts"));
  });

  it("refuses a 50 MB file by its size: stat only, the read is never attempted", async () => {
    const big = join(root, "big.ts");
    writeFileSync(big, "");
    truncateSync(big, 50 * 1024 * 1024); // sparse: no 50 MB written to disk
    const fs = spyFs();
    await expect(readWorkspaceFile(root, "big.ts", { fs })).rejects.toMatchObject({
      code: "AIP_ERR_PAYLOAD_TOO_LARGE",
      message: expect.stringMatching(/52428800 bytes, over the 1048576-byte limit.*not read/),
    });
    expect(fs.stats).toEqual([big]);
    expect(fs.reads).toEqual([]);
  });

  it("refuses binary files, directories and missing files with INVALID_FIELD", async () => {
    writeFileSync(join(root, "img.ts"), Buffer.from([0x89, 0x50, 0x00, 0x47]));
    await expect(readWorkspaceFile(root, "img.ts")).rejects.toMatchObject({
      code: "AIP_ERR_INVALID_FIELD",
      message: expect.stringMatching(/binary/),
    });
    await expect(readWorkspaceFile(root, "src")).rejects.toMatchObject({ code: "AIP_ERR_INVALID_FIELD" });
    await expect(readWorkspaceFile(root, "nope.ts")).rejects.toMatchObject({
      code: "AIP_ERR_INVALID_FIELD",
      message: expect.stringMatching(/does not exist/),
    });
    await expect(readWorkspaceFile("relative/root", "a.ts")).rejects.toMatchObject({ code: "AIP_ERR_INVALID_FIELD" });
  });
});

describe("listWorkspaceFiles", () => {
  it("respects root and nested .gitignore files, skips .git and node_modules, does not follow symlinks", async () => {
    const t = tempDir("aipls-");
    try {
      const w = t.dir;
      for (const d of ["src/gen", "lib", ".git", "node_modules/x", "docs"]) mkdirSync(join(w, d), { recursive: true });
      writeFileSync(join(w, ".gitignore"), "*.log\n/build\n");
      writeFileSync(join(w, "src/.gitignore"), "gen/\n");
      for (const f of [
        "src/a.ts",
        "src/gen/b.ts",
        "lib/c.js",
        "x.log",
        ".git/config",
        "node_modules/x/i.js",
        "docs/r.md",
      ])
        writeFileSync(join(w, f), "x\n");
      symlinkSync("/etc", join(w, "etc-link"));
      const files = await listWorkspaceFiles(w);
      expect(files.map((f) => f.rel)).toEqual([".gitignore", "docs/r.md", "lib/c.js", "src/.gitignore", "src/a.ts"]);
    } finally {
      t.cleanup();
    }
  });
});

/**
 * The default install: node-llama-cpp's GPU builds are removed after `npm ci` (postinstall) unless
 * AIP_GPU_BUILDS names them, `npm run gpu:add` is the documented way back, and no locked package
 * asks for a newer Node than package.json's `engines` (npm's EBADENGINE warning).
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../helpers.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  engines: { node: string };
  scripts: Record<string, string>;
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, { engines?: { node?: string }; optional?: boolean }>;
};

/** A copy of scripts/gpu-builds.mjs beside a node_modules with node-llama-cpp's builds as empty folders. */
function fakeInstall(): { dir: string; cleanup: () => void; builds: () => string[] } {
  const t = tempDir("aipgpu-");
  mkdirSync(join(t.dir, "scripts"));
  copyFileSync(join(ROOT, "scripts/gpu-builds.mjs"), join(t.dir, "scripts/gpu-builds.mjs"));
  const scope = join(t.dir, "node_modules/@node-llama-cpp");
  for (const b of [
    "linux-x64",
    "linux-x64-cuda",
    "linux-x64-cuda-ext",
    "linux-x64-vulkan",
    "linux-arm64",
    "linux-armv7l",
  ]) {
    mkdirSync(join(scope, b), { recursive: true });
    writeFileSync(join(scope, b, "package.json"), "{}");
  }
  return { ...t, builds: () => readdirSync(scope).sort() };
}

describe("the default install", () => {
  const fakes: { cleanup: () => void }[] = [];
  afterAll(() => fakes.forEach((f) => f.cleanup()));

  it("postinstall removes the GPU builds and keeps the CPU one; AIP_GPU_BUILDS keeps the ones it names", () => {
    expect(pkg.scripts.postinstall).toBe("node scripts/gpu-builds.mjs prune");
    expect(pkg.scripts["gpu:add"]).toBe("node scripts/gpu-builds.mjs add");
    const run = (env: Record<string, string>) => {
      const f = fakeInstall();
      fakes.push(f);
      const out = execFileSync(process.execPath, [join(f.dir, "scripts/gpu-builds.mjs"), "prune"], {
        env: { PATH: process.env.PATH, AIP_BUILDS_PLATFORM: "linux", AIP_BUILDS_ARCH: "x64", ...env },
        encoding: "utf8",
      });
      return { out, builds: f.builds() };
    };
    const plain = run({});
    expect(plain.builds).toEqual(["linux-x64"]);
    expect(plain.out).toMatch(
      /removed node-llama-cpp's GPU builds \(linux-x64-cuda, linux-x64-cuda-ext, linux-x64-vulkan\)/,
    );
    expect(plain.out).toMatch(/npm run gpu:add/);
    expect(plain.out).toMatch(
      /removed node-llama-cpp's builds for other machines \(linux-arm64, linux-armv7l\); this is linux-x64/,
    );
    // On an arm64 machine its own build stays, and x64's (with its GPU variants) goes.
    expect(run({ AIP_BUILDS_ARCH: "arm64", AIP_GPU_BUILDS: "all" }).builds).toEqual(["linux-arm64"]);
    expect(run({ AIP_GPU_BUILDS: "vulkan" }).builds).toEqual(["linux-x64", "linux-x64-vulkan"]);
    expect(run({ AIP_GPU_BUILDS: "all" }).builds).toEqual([
      "linux-x64",
      "linux-x64-cuda",
      "linux-x64-cuda-ext",
      "linux-x64-vulkan",
    ]);
  });

  it("an unknown GPU build name is an error naming the known ones", () => {
    const f = fakeInstall();
    fakes.push(f);
    let stderr = "";
    try {
      execFileSync(process.execPath, [join(f.dir, "scripts/gpu-builds.mjs"), "add", "metal"], { stdio: "pipe" });
    } catch (err) {
      stderr = String((err as { stderr: Buffer }).stderr);
    }
    expect(stderr).toMatch(/unknown GPU build "metal": use cuda, vulkan or all/);
  });

  it("no locked package needs a newer Node than engines allows (no EBADENGINE at install)", () => {
    const ours = Number(/>=\s*(\d+)/.exec(pkg.engines.node)![1]);
    const tooNew = Object.entries(lock.packages)
      .filter(([, p]) => {
        const min = /^>=\s*(\d+)/.exec(p.engines?.node ?? "");
        return min !== null && Number(min[1]) > ours;
      })
      .map(([path, p]) => `${path} (${p.engines!.node})`);
    expect(tooNew).toEqual([]);
  });

  it("node-llama-cpp's own install script does not run (the prebuilt CPU build needs nothing at install)", () => {
    expect(pkg.allowScripts).toEqual({ "node-llama-cpp": false, "tree-sitter-python": false });
  });
});

/**
 * The V8 code cache for big CommonJS packages (agents/lib/runtime/compile-cache.ts): in this process on
 * a package made for the test (written, used, a corrupt or truncated or foreign file refused and written
 * anew, the switch, an unsafe directory), then across processes with the real TypeScript compiler: a
 * one-shot agent writes the cache, another process takes it, other V8 flags get their own file. Every
 * cache directory is a temp dir given through XDG_CACHE_HOME, never the user's own.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  codeCacheDir,
  codeCacheFileName,
  codeCacheKey,
  codeCacheOutcomes,
  useCodeCache,
  writeCodeCaches,
  type CodeCacheKey,
  type CodeCacheOutcome,
} from "../../../../agents/lib/runtime/compile-cache.js";
import { DIST, tempDir } from "../../../helpers.js";

const temps: { cleanup: () => void }[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) t.cleanup();
});

let serial = 0;

/** A package `pkg-N` in a fresh temp dir, whose main file sets `loads` on globalThis; its require and cache env. */
function fixture(): {
  dir: string;
  name: string;
  require: NodeJS.Require;
  env: Record<string, string>;
  cacheDir: string;
} {
  const t = tempDir("aipcc-");
  temps.push(t);
  const name = `pkg-${++serial}`;
  const pkg = join(t.dir, "node_modules", name);
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name, version: "1.2.3", main: "main.js" }));
  // Unique text per package, with functions for V8 to compile and cache.
  const body = Array.from({ length: 50 }, (_, i) => `exports.f${i} = (x) => x * ${i} + ${serial};`).join("\n");
  writeFileSync(
    join(pkg, "main.js"),
    `"use strict";\nglobalThis.__aipccLoads = (globalThis.__aipccLoads ?? 0) + 1;\n${body}\n`,
  );
  const env = { XDG_CACHE_HOME: join(t.dir, "xdg") };
  return { dir: t.dir, name, require: createRequire(join(t.dir, "x.js")), env, cacheDir: codeCacheDir(env) };
}

/** Register `name` and require it afresh (out of require.cache); what the cache did this time. */
function load(f: ReturnType<typeof fixture>, env: Record<string, string> = f.env): CodeCacheOutcome {
  delete f.require.cache[f.require.resolve(f.name)];
  const before = codeCacheOutcomes().length;
  useCodeCache(f.require, f.name, { env });
  const mod = f.require(f.name) as Record<string, (x: number) => number>;
  expect(mod.f7!(1)).toBe(7 + Number(f.name.slice(4)));
  expect(codeCacheOutcomes()).toHaveLength(before + 1);
  return codeCacheOutcomes().at(-1)!;
}

const modeOf = (path: string): number => statSync(path).mode & 0o777;

describe("the code cache, in one process", () => {
  it("is written 0600 in a 0700 directory after a miss, and then used", () => {
    const f = fixture();
    const first = load(f);
    expect(first).toMatchObject({ name: f.name, taken: "miss", file: f.require.resolve(f.name) });
    expect(first.cache).toMatch(new RegExp(`^${f.cacheDir}/${f.name}-[0-9a-f]{24}\\.v8$`));
    expect(existsSync(first.cache!), "written at exit or writeCodeCaches, not at once").toBe(false);
    writeCodeCaches();
    expect(modeOf(first.cache!)).toBe(0o600);
    expect(modeOf(f.cacheDir)).toBe(0o700);
    expect(readdirSync(f.cacheDir), "no temporary file is left").toEqual([first.cache!.split("/").at(-1)]);
    const written = statSync(first.cache!);
    expect(load(f)).toMatchObject({ taken: "hit", cache: first.cache });
    writeCodeCaches();
    const after = statSync(first.cache!);
    expect([after.ino, after.mtimeMs], "a cache taken is not written again").toEqual([written.ino, written.mtimeMs]);
  });

  it.each([
    [
      "a flipped byte",
      (b: Buffer) => Buffer.concat([b.subarray(0, -10), Buffer.from([b.at(-10)! ^ 0xff]), b.subarray(-9)]),
      "checksum mismatch",
    ],
    ["a truncated file", (b: Buffer) => b.subarray(0, Math.floor(b.length / 2)), "checksum mismatch"],
    ["a header only", (b: Buffer) => b.subarray(0, 20), "bad header"],
    [
      "another format",
      () => Buffer.from("not a cache at all, but long enough to pass the length check of the header"),
      "bad header",
    ],
  ])("refuses %s, loads the module without it, and writes it anew", (_, spoil, reason) => {
    const f = fixture();
    const cache = load(f).cache!;
    writeCodeCaches();
    const good = readFileSync(cache);
    writeFileSync(cache, spoil(good));
    const loads = (globalThis as { __aipccLoads?: number }).__aipccLoads ?? 0;
    expect(load(f)).toMatchObject({ taken: "corrupt", reason, cache });
    expect((globalThis as { __aipccLoads?: number }).__aipccLoads, "the module ran once").toBe(loads + 1);
    writeCodeCaches();
    expect(readFileSync(cache).subarray(0, 18).toString()).toBe("agency-v8-cache-1\n");
    expect(load(f)).toMatchObject({ taken: "hit", cache });
  });

  it("hands V8 a well-formed file with foreign data; V8 rejects it and it is written anew", () => {
    const f = fixture();
    // Planted before this process first compiles the file: once it has, V8 answers from its own memory.
    const cache = join(f.cacheDir, codeCacheFileName(f.name, codeCacheKey(f.require.resolve(f.name))));
    mkdirSync(f.cacheDir, { recursive: true, mode: 0o700 });
    const payload = Buffer.alloc(4096, 7);
    writeFileSync(
      cache,
      Buffer.concat([Buffer.from("agency-v8-cache-1\n"), createHash("sha256").update(payload).digest(), payload]),
    );
    expect(load(f)).toMatchObject({ taken: "rejected", cache });
    writeCodeCaches();
    expect(readFileSync(cache).subarray(50).equals(payload)).toBe(false);
    expect(load(f)).toMatchObject({ taken: "hit", cache });
  });

  it("AIP_CODE_CACHE=0 never touches the directory", () => {
    const f = fixture();
    expect(load(f, { ...f.env, AIP_CODE_CACHE: "0" })).toMatchObject({ taken: "off" });
    expect(load(f, { ...f.env, AIP_CODE_CACHE: "0" }).cache).toBeUndefined();
    writeCodeCaches();
    expect(existsSync(join(f.dir, "xdg"))).toBe(false);
  });

  it("a bad AIP_CODE_CACHE value or a directory others may write to leaves a plain load", () => {
    const f = fixture();
    expect(load(f, { ...f.env, AIP_CODE_CACHE: "yes" })).toMatchObject({ taken: "unavailable" });
    mkdirSync(f.cacheDir, { recursive: true });
    chmodSync(f.cacheDir, 0o777);
    const open = load(f);
    expect(open).toMatchObject({ taken: "unavailable", reason: expect.stringContaining("writable by every user") });
    expect(open.cache).toBeUndefined();
    writeCodeCaches();
    expect(readdirSync(f.cacheDir)).toEqual([]);
  });

  it("a package already loaded is left alone", () => {
    const f = fixture();
    f.require(f.name);
    useCodeCache(f.require, f.name, { env: f.env });
    expect(codeCacheOutcomes().at(-1)).toMatchObject({ name: f.name, taken: "loaded" });
  });

  it("names a different file for another package version, file, Node version or V8 tag", () => {
    const key: CodeCacheKey = {
      file: "/n/typescript/lib/typescript.js",
      version: "5.9.3",
      size: 9_000_000,
      mtimeMs: 1,
      node: "v20.20.2",
      arch: "x64",
      v8: 1,
    };
    const base = codeCacheFileName("typescript", key);
    expect(base).toMatch(/^typescript-[0-9a-f]{24}\.v8$/);
    const variants: Partial<CodeCacheKey>[] = [
      { version: "5.9.4" },
      { size: 9_000_001 },
      { mtimeMs: 2 },
      { node: "v22.0.0" },
      { arch: "arm64" },
      { v8: 2 },
      { file: "/m/typescript/lib/typescript.js" },
    ];
    const names = variants.map((v) => codeCacheFileName("typescript", { ...key, ...v }));
    expect(new Set([base, ...names]).size).toBe(variants.length + 1);
    expect(codeCacheFileName("@scope/pkg", key)).toMatch(/^_scope_pkg-/);
  });
});

/** Run `args` with node, `stdin` in; its stdout. */
function node(args: string[], env: Record<string, string>, stdin = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      args,
      { env: { ...process.env, AIP_MODEL: "", ...env }, maxBuffer: 8 << 20 },
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    );
    child.stdin!.end(stdin);
  });
}

/** A process that loads the compiler the way the agents do and prints what the cache did. */
const PROBE = `
import { typescript } from ${JSON.stringify(join(DIST, "agents/lib/code/typescript.js"))};
import { codeCacheOutcomes } from ${JSON.stringify(join(DIST, "agents/lib/runtime/compile-cache.js"))};
const ts = typescript();
console.log(JSON.stringify({ outcomes: codeCacheOutcomes(), kinds: ts.createSourceFile("a.ts", "let x = 1;", 99).statements.length }));
`;

async function probe(env: Record<string, string>, flags: string[] = []): Promise<CodeCacheOutcome> {
  const out = JSON.parse(await node([...flags, "--input-type=module", "-e", PROBE], env)) as {
    outcomes: CodeCacheOutcome[];
    kinds: number;
  };
  expect(out.kinds).toBe(1);
  expect(out.outcomes).toHaveLength(1);
  return out.outcomes[0]!;
}

const SUMMARIZE = JSON.stringify({
  action: "summarize",
  context: { source_code: "export function twice(n: number): number {\n  return 2 * n;\n}\n", language: "typescript" },
  constraints: { timeout_ms: 60_000 },
});

describe("the code cache, across processes (the TypeScript compiler)", () => {
  it("a one-shot agent writes it, another process takes it, other V8 flags get their own file", async () => {
    const t = tempDir("aipcc-");
    temps.push(t);
    const env = { XDG_CACHE_HOME: join(t.dir, "xdg") };
    const dir = codeCacheDir(env);
    const answer = JSON.parse(await node([join(DIST, "agents/summarize/main.js")], env, SUMMARIZE)) as object;
    expect(answer).toMatchObject({ status: "success" });
    const files = readdirSync(dir);
    expect(files).toEqual([expect.stringMatching(/^typescript-[0-9a-f]{24}\.v8$/)]);
    const cache = join(dir, files[0]!);
    expect(modeOf(cache)).toBe(0o600);
    expect(modeOf(dir)).toBe(0o700);
    const written = statSync(cache);

    expect(await probe(env)).toMatchObject({ name: "typescript", taken: "hit", cache });
    const after = statSync(cache);
    expect([after.ino, after.mtimeMs], "a cache taken is not written again").toEqual([written.ino, written.mtimeMs]);

    // --max-lazy changes V8's flags hash: a cache made without it would be rejected, so it gets its own.
    const lazy = await probe(env, ["--max-lazy"]);
    expect(lazy).toMatchObject({ taken: "miss" });
    expect(lazy.cache).not.toBe(cache);
    expect(readdirSync(dir).sort()).toEqual([files[0], lazy.cache!.split("/").at(-1)].sort());
    expect(await probe(env, ["--max-lazy"])).toMatchObject({ taken: "hit", cache: lazy.cache });
  }, 120_000);

  it("AIP_CODE_CACHE=0: a one-shot agent answers and never creates the directory", async () => {
    const t = tempDir("aipcc-");
    temps.push(t);
    const env = { XDG_CACHE_HOME: join(t.dir, "xdg"), AIP_CODE_CACHE: "0" };
    const answer = JSON.parse(await node([join(DIST, "agents/summarize/main.js")], env, SUMMARIZE)) as object;
    expect(answer).toMatchObject({ status: "success" });
    expect(await probe(env)).toMatchObject({ taken: "off" });
    expect(existsSync(join(t.dir, "xdg"))).toBe(false);
  }, 120_000);
});

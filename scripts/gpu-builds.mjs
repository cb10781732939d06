#!/usr/bin/env node
/* global process, console */
/**
 * node-llama-cpp's GPU builds for Linux x64 (CUDA, CUDA with its runtime, Vulkan) are optional
 * dependencies of node-llama-cpp, so npm installs them everywhere, although the default (CPU) inference
 * never loads them. npm offers no setting that skips some optional dependencies and keeps others (an
 * `overrides` entry pointing at a local stub breaks `npm ci`'s lock check), so the install removes them
 * afterwards; `npm run gpu:add` puts them back. docs/models.md, "GPU builds".
 *
 * The builds for other machines (linux-arm64 and linux-armv7l declare x64 too, so npm installs them on
 * x64) are never loaded either: node-llama-cpp loads the build of the running platform and architecture.
 * The install removes them as well.
 *
 *   node scripts/gpu-builds.mjs prune          postinstall: remove them (GPU ones unless AIP_GPU_BUILDS names them)
 *   node scripts/gpu-builds.mjs add [KIND...]  put them in (cuda, vulkan; default both), from npm's cache
 *   node scripts/gpu-builds.mjs list           which are installed
 *
 * Plain JavaScript: it runs at install time, before `npm run build`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const scopeDir = join(root, "node_modules", "@node-llama-cpp");

/** The GPU builds by kind: what `add cuda` or AIP_GPU_BUILDS=cuda means. */
export const GPU_BUILDS = {
  cuda: ["linux-x64-cuda", "linux-x64-cuda-ext"],
  vulkan: ["linux-x64-vulkan"],
};

/** The kinds named by a list like "cuda,vulkan" or "all" (unknown names are an error). */
function kindsOf(names) {
  const list = names.flatMap((n) => n.split(/[\s,]+/)).filter(Boolean);
  if (list.includes("all")) return Object.keys(GPU_BUILDS);
  for (const k of list)
    if (!(k in GPU_BUILDS))
      throw new Error(`unknown GPU build "${k}": use ${Object.keys(GPU_BUILDS).join(", ")} or all`);
  return list;
}

const installed = () => (existsSync(scopeDir) ? readdirSync(scopeDir) : []);

/** node-llama-cpp's name for this machine ("linux-x64"), or undefined when it has none (nothing is then called foreign). */
function thisMachine() {
  const platform = { linux: "linux", darwin: "mac", win32: "win" }[process.env.AIP_BUILDS_PLATFORM ?? process.platform];
  const arch = { x64: "x64", arm64: "arm64", arm: "armv7l" }[process.env.AIP_BUILDS_ARCH ?? process.arch];
  return platform && arch ? `${platform}-${arch}` : undefined;
}

/** A build for another platform or architecture: `linux-arm64` on linux-x64 (GPU variants of this machine are not). */
function foreign(name, machine) {
  return machine !== undefined && name !== machine && !name.startsWith(`${machine}-`);
}

function prune() {
  const keep = new Set(kindsOf([process.env.AIP_GPU_BUILDS ?? ""]).flatMap((k) => GPU_BUILDS[k]));
  const removed = [];
  for (const name of Object.values(GPU_BUILDS).flat()) {
    if (keep.has(name) || !installed().includes(name)) continue;
    rmSync(join(scopeDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  if (removed.length > 0)
    console.log(
      `agency: removed node-llama-cpp's GPU builds (${removed.join(", ")}); CPU inference is unaffected. ` +
        "For a GPU: npm run gpu:add (docs/models.md)",
    );
  const machine = thisMachine();
  const others = installed().filter((name) => foreign(name, machine));
  for (const name of others) rmSync(join(scopeDir, name), { recursive: true, force: true });
  if (others.length > 0)
    console.log(
      `agency: removed node-llama-cpp's builds for other machines (${others.join(", ")}); this is ${machine}`,
    );
}

function add(kinds) {
  const version = JSON.parse(readFileSync(join(root, "node_modules/node-llama-cpp/package.json"), "utf8")).version;
  const tmp = mkdtempSync(join(tmpdir(), "aip-gpu-"));
  try {
    for (const name of kinds.flatMap((k) => GPU_BUILDS[k])) {
      const spec = `@node-llama-cpp/${name}@${version}`;
      const file = execFileSync("npm", ["pack", "--silent", "--pack-destination", tmp, spec], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      })
        .trim()
        .split("\n")
        .pop();
      const dest = join(scopeDir, name);
      rmSync(dest, { recursive: true, force: true });
      mkdirSync(dest, { recursive: true });
      execFileSync("tar", ["-xzf", join(tmp, file), "-C", dest, "--strip-components=1"], { stdio: "inherit" });
      console.log(`agency: installed ${spec}`);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

const [command = "list", ...rest] = process.argv.slice(2);
try {
  if (command === "prune") prune();
  else if (command === "add") add(kindsOf(rest.length > 0 ? rest : ["all"]));
  else if (command === "list") {
    const have = installed();
    for (const [kind, names] of Object.entries(GPU_BUILDS))
      console.log(`${kind}: ${names.every((n) => have.includes(n)) ? "installed" : "not installed"}`);
  } else throw new Error(`unknown command "${command}": use prune, add [cuda|vulkan|all] or list`);
} catch (err) {
  console.error(`gpu-builds: ${err.message}`);
  process.exit(1);
}

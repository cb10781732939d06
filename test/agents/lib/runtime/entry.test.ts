/**
 * `agent-<name> --manifest` is answered by the executable's entry before the agent's modules load, and prints
 * byte for byte what runAgent prints for the definition's (validated) manifest.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { agentEntry, manifestText } from "../../../../agents/lib/runtime/entry.js";
import { bundledManifest } from "../../../../agents/lib/runtime/manifest.js";
import { runAgent } from "../../../../agents/lib/runtime/run.js";
import type { AgentDefinition, LoadContext } from "../../../../agents/lib/runtime/types.js";
import { ROOT, tempDir } from "../../../helpers.js";

const run = promisify(execFile);
/** Logs every ES module a process loads (to $ESM_LOAD_LOG). */
const HOOK = pathToFileURL(join(ROOT, "test/fixtures/esm-load-log.mjs")).href;
const t = tempDir();
afterAll(t.cleanup);

/** Every bundled agent executable, as package.json installs them. */
const BUNDLED = Object.entries(
  (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { bin: Record<string, string> }).bin,
)
  .filter(([bin]) => bin.startsWith("agent-"))
  .map(([bin, path]) => [bin.slice("agent-".length), path] as const);

/** What a bundled agent's definition holds as its manifest (`bundledManifest(name, import.meta.url)`). */
const definitionManifest = (name: string, path: string) => bundledManifest(name, pathToFileURL(join(ROOT, path)).href);

afterEach(() => {
  vi.restoreAllMocks();
});

/** Runs `body` with process.stdout.write captured; returns what was written. */
async function captured(body: () => Promise<void>): Promise<string> {
  let out = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  await body();
  vi.restoreAllMocks();
  return out;
}

describe("agent --manifest", () => {
  it("covers every bundled agent", () => {
    expect(BUNDLED.map(([name]) => name)).toEqual(
      expect.arrayContaining(["dummy", "summarize", "testgen", "complete"]),
    );
  });

  it.each(BUNDLED)("agent-%s prints its definition's manifest byte for byte", async (name, path) => {
    const { stdout, stderr } = await run(process.execPath, [join(ROOT, path), "--manifest"], {
      encoding: "utf8",
      env: { ...process.env, AIP_MODEL: "" },
    });
    const manifest = definitionManifest(name, path);
    expect(manifest.name).toBe(name);
    expect(stdout).toBe(manifestText(manifest));
    expect(stdout).toBe(await captured(() => runAgent({ manifest, handlers: {} }, ["--manifest"])));
    expect(stderr).toBe("");
  });

  it.each(BUNDLED)("agent-%s --manifest loads its entry alone", async (name, path) => {
    const log = join(t.dir, `${name}.log`);
    await run(process.execPath, ["--import", HOOK, join(ROOT, path), "--manifest"], {
      env: { ...process.env, AIP_MODEL: "", ESM_LOAD_LOG: log },
    });
    const loaded = readFileSync(log, "utf8")
      .split("\n")
      .filter((url) => url.startsWith("file:"))
      .map((url) => url.slice(url.lastIndexOf("/dist/") + 1));
    expect(loaded.sort()).toEqual([path, "dist/agents/lib/runtime/entry.js"].sort());
  });

  it("the entry answers --manifest without loading the definition, and hands any other run to runAgent", async () => {
    const [, path] = BUNDLED.find(([name]) => name === "dummy")!;
    const url = pathToFileURL(join(ROOT, path)).href;
    const load = vi.fn<() => Promise<AgentDefinition>>();
    const printed = await captured(() => agentEntry("dummy", url, load, ["--manifest"]));
    expect(load).not.toHaveBeenCalled();
    expect(printed).toBe(manifestText(definitionManifest("dummy", path)));

    const manifest = { ...definitionManifest("dummy", path), name: "loaded" };
    const loadForHelp = vi.fn((_: LoadContext) => Promise.resolve<AgentDefinition>({ manifest, handlers: {} }));
    const help = await captured(() => agentEntry("dummy", url, loadForHelp, ["--help"]));
    expect(help).toContain("Usage: agent-loaded [--manifest");
    // runAgent decides the mode and tells the loader: `--help` is not a one-shot run.
    expect(loadForHelp).toHaveBeenCalledWith({ oneShot: false });
  });
});

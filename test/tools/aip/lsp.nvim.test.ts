/** A headless Neovim, with its built-in LSP client, gets completions and document symbols from `aip lsp`. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT } from "../../helpers.js";
import type { Agency } from "../../orchestrator/harness.js";
import { AIP, MATH_TS, bundledAgency, readmeBlock, workspace } from "./bridge-helpers.js";

type Json = Record<string, any>;

describe("Neovim (headless, nvim --headless -u NONE) and aip lsp", () => {
  let agency: Agency;
  let ws: { root: string; cleanup: () => void };
  beforeAll(async () => {
    agency = await bundledAgency(["summarize", "complete-lite"]);
    ws = workspace();
  }, 150_000);
  afterAll(async () => {
    await agency?.stop();
    ws?.cleanup();
  });

  /** Open FILE (holding TEXT) in a headless Neovim set up by the docs' snippet; ask at the last line's CHAR. */
  async function askNeovim(file: string, text: string, char: number): Promise<Json> {
    // `aip` on PATH, as docs/integrations.md assumes (npm link); the snippet itself is taken from there.
    const bin = join(ws.root, "bin");
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(bin, "aip"), `#!/bin/sh\nexec "${process.execPath}" "${AIP}" "$@"\n`, { mode: 0o755 });
    const snippet = readmeBlock("Use it from your editor", "lua");
    const lua = join(ws.root, "check.lua");
    writeFileSync(
      lua,
      `vim.cmd("filetype on")\n${snippet}\n${readFileSync(join(ROOT, "test/fixtures/editors/check.lua"), "utf8")}`,
    );
    writeFileSync(file, text);
    const out = join(ws.root, "nvim-out.json");
    const before = agency.logs.events("request").length;
    // Asynchronously: the agency serves from this process, and a blocked event loop would leave every
    // request to aip lsp's own fallback engines instead.
    await promisify(execFile)("nvim", ["--headless", "-u", "NONE", "-c", `luafile ${lua}`], {
      cwd: ws.root,
      env: {
        ...process.env,
        PATH: `${bin}:${process.env.PATH ?? ""}`,
        AIP_SOCKET: agency.socket,
        AIP_FILE: file,
        AIP_LINE: String(text.split("\n").length - 2),
        AIP_CHAR: String(char),
        AIP_OUT: out,
      },
      timeout: 120_000,
    });
    // What the agency itself answered (not aip lsp's fallback engines): "action agent" per success.
    const served = agency.logs
      .events("request")
      .slice(before)
      .filter((l) => l.outcome === "success")
      .map((l) => `${String(l.action)} ${String(l.agent)}`);
    return { ...(JSON.parse(readFileSync(out, "utf8")) as Json), served };
  }

  it("the Neovim snippet of docs/integrations.md: completes `ad` to add and lists the file's symbols (test/fixtures/editors/check.lua)", async () => {
    const text = `${MATH_TS}const again = ad\n`;
    const lines = text.split("\n");
    const result = await askNeovim(join(ws.root, "src/again.ts"), text, 16);
    expect(result.served).toEqual(expect.arrayContaining(["summarize summarize", "complete complete-lite"]));
    expect(result.completion.items, JSON.stringify(result).slice(0, 2000)).toBeDefined();
    expect(result.error).toBeUndefined();
    const first = result.completion.items[0];
    expect(first).toMatchObject({
      label: "add",
      kind: 3,
      textEdit: {
        newText: "add",
        range: { start: { line: lines.length - 2, character: 14 }, end: { line: lines.length - 2, character: 16 } },
      },
    });
    expect(result.symbols.map((s: Json) => [s.name, s.kind, s.range.start.line])).toEqual([
      ["add", 12, 0],
      ["Counter", 5, 5],
      ["total", 14, 13],
      ["again", 14, 14],
    ]);
  }, 150_000);

  it("the same snippet attaches to a Python file: completes `ad` to add and lists its symbols", async () => {
    const text = `def add(a, b):\n    return a + b\n\n\nclass Counter:\n    def total(self):\n        return 0\n\n\nagain = ad\n`;
    const result = await askNeovim(join(ws.root, "src/again.py"), text, 10);
    expect(result.served).toEqual(expect.arrayContaining(["summarize summarize", "complete complete-lite"]));
    expect(result.error).toBeUndefined();
    expect(result.completion.items, JSON.stringify(result).slice(0, 2000)).toBeDefined();
    expect(result.completion.items[0]).toMatchObject({
      label: "add",
      textEdit: { newText: "add", range: { start: { line: 9, character: 8 }, end: { line: 9, character: 10 } } },
    });
    expect(result.symbols.map((s: Json) => [s.name, s.range.start.line])).toEqual(
      expect.arrayContaining([
        ["add", 0],
        ["Counter", 4],
      ]),
    );
  }, 150_000);
});

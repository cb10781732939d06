/** A headless Neovim, with its built-in LSP client, gets completions and document symbols from `aip lsp`. */
import { execFileSync } from "node:child_process";
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

  it("the Neovim snippet of docs/integrations.md: completes `ad` to add and lists the file's symbols (test/fixtures/editors/check.lua)", () => {
    // `aip` on PATH, as docs/integrations.md assumes (npm link); the snippet itself is taken from there.
    const bin = join(ws.root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "aip"), `#!/bin/sh\nexec "${process.execPath}" "${AIP}" "$@"\n`, { mode: 0o755 });
    const snippet = readmeBlock("Use it from your editor", "lua");
    const lua = join(ws.root, "check.lua");
    writeFileSync(
      lua,
      `vim.cmd("filetype on")\n${snippet}\n${readFileSync(join(ROOT, "test/fixtures/editors/check.lua"), "utf8")}`,
    );
    const file = join(ws.root, "src/again.ts");
    const text = `${MATH_TS}const again = ad\n`;
    writeFileSync(file, text);
    const out = join(ws.root, "nvim-out.json");
    const lines = text.split("\n");
    execFileSync("nvim", ["--headless", "-u", "NONE", "-c", `luafile ${lua}`], {
      cwd: ws.root,
      env: {
        ...process.env,
        PATH: `${bin}:${process.env.PATH ?? ""}`,
        AIP_SOCKET: agency.socket,
        AIP_FILE: file,
        AIP_LINE: String(lines.length - 2),
        AIP_CHAR: "16",
        AIP_OUT: out,
      },
      timeout: 120_000,
      stdio: ["ignore", "ignore", "pipe"],
    });
    const result = JSON.parse(readFileSync(out, "utf8")) as Json;
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
});

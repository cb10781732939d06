import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, tempDir } from "../../helpers.js";
import { DIAGNOSE, startAgent, type Json, type RunningAgent } from "../code-helpers.js";

const UTIL = `export function add(a: number, b: number): number {
  return a + b;
}
export function greet(name: string): string {
  if (name === "") throw new Error("empty name");
  return \`hi \${name}\`;
}
`;
const MAIN = `import { add, greet } from "./util.js";

export function total(xs: number[]): number {
  let sum = 0;
  for (const x of xs) sum = ad(sum, x);
  return sum;
}
export function hello(): string {
  return greet("");
}
`;
const BROKEN = `export function len(): number {
  const s = "a";
  s;
}
`;

describe("agent-diagnose", () => {
  let agent: RunningAgent;
  let ws: { dir: string; cleanup: () => void };
  beforeAll(async () => {
    ws = tempDir("aipd-");
    mkdirSync(join(ws.dir, "src"));
    writeFileSync(join(ws.dir, "package.json"), '{ "type": "module" }\n');
    writeFileSync(
      join(ws.dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: "ES2022",
          module: "NodeNext",
          outDir: "dist",
          rootDir: "src",
          sourceMap: true,
        },
        include: ["src"],
      }),
    );
    writeFileSync(join(ws.dir, "src/util.ts"), UTIL);
    writeFileSync(join(ws.dir, "src/main.ts"), MAIN.replace("ad(sum", "add(sum"));
    // Built with source maps, then the buffer under test gets its error.
    execFileSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", ws.dir]);
    writeFileSync(join(ws.dir, "src/main.ts"), MAIN);
    writeFileSync(join(ws.dir, "src/broken.ts"), BROKEN);
    agent = await startAgent(DIAGNOSE);
  }, 120_000);
  afterAll(async () => {
    await agent.stop();
    ws.cleanup();
  });

  const diagnose = (context: Json, constraints: Json = {}) =>
    agent.invoke({
      action: "diagnose",
      context: { workspace_root: ws.dir, ...context },
      // The first call waits for the workspace's checker to load, and checks of fixes get all the time they
      // need (the machine may be loaded): the deadline leaves room for both waits.
      constraints: { timeout_ms: 80_000, check_wait_ms: 60_000, verify_budget_ms: 60_000, ...constraints },
    });

  it("a file's errors from the checker, the verified fix first, nothing written to disk", async () => {
    const res = await diagnose({ file_path: "src/main.ts" });
    expect(res.status, JSON.stringify(res.error)).toBe("success");
    expect(res.payload).toMatchObject({ mode: "file", engine: "checker", file_path: "src/main.ts" });
    const [d] = res.payload.diagnostics as Json[];
    expect(d).toMatchObject({ line: 5, column: 28, code: "TS2304", message: "Cannot find name 'ad'." });
    expect(d!.fixes[0]).toMatchObject({
      description: "Change spelling to 'add'",
      verified: true,
      edits: [
        {
          file_path: "src/main.ts",
          range: { start: { line: 5, column: 28 }, end: { line: 5, column: 30 } },
          new_text: "add",
        },
      ],
    });
    expect(res.payload.model).toMatchObject({ used: false, reason: expect.stringMatching(/no model configured/) });
    expect(readFileSync(join(ws.dir, "src/main.ts"), "utf8")).toBe(MAIN);
  }, 90_000);

  it("a fix that leaves an error is offered unverified, with the error it leaves", async () => {
    const res = await diagnose({ file_path: "src/broken.ts" });
    const [d] = res.payload.diagnostics as Json[];
    expect(d).toMatchObject({ line: 1, code: "TS2355" });
    const returns = (d!.fixes as Json[]).filter((f) => f.fix_name.startsWith("agency.return"));
    expect(returns.length).toBeGreaterThan(0);
    for (const f of returns) {
      expect(f.verified).toBe(false);
      expect(f.not_verified).toMatch(/TS2322: Type 'string' is not assignable to type 'number'/);
    }
    // The buffer sent is checked, not the file on disk.
    const fixed = await diagnose({ file_path: "src/broken.ts", source_code: BROKEN.replace('"a"', "1") });
    const top = (fixed.payload.diagnostics as Json[])[0]!.fixes[0];
    expect(top).toMatchObject({ verified: true, edits: [{ new_text: "return " }] });
  }, 90_000);

  it("a workspace whose checker is still loading: the parser's errors at once, the checker's when asked again", async () => {
    const fresh = tempDir("aipd-new-");
    try {
      writeFileSync(join(fresh.dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true } }));
      const text = 'export const n: number = "x";\nexport const m = (;\n';
      writeFileSync(join(fresh.dir, "a.ts"), text);
      const context = { workspace_root: fresh.dir, file_path: "a.ts" };
      const first = await agent.invoke({ action: "diagnose", context, constraints: {} });
      expect(first.payload).toMatchObject({
        engine: "syntax",
        engine_reason: expect.stringMatching(/still loading this workspace/),
        diagnostics: [{ line: 2, code: "syntax" }],
      });
      const checked = await agent.invoke({ action: "diagnose", context, constraints: { check_wait_ms: 60_000 } });
      expect(checked.payload).toMatchObject({ engine: "checker", diagnostics: [{ line: 2, code: "TS1109" }] });
      // Once loaded, a request without check_wait_ms waits for the checker.
      const again = await agent.invoke({
        action: "diagnose",
        context: { ...context, source_code: text.replace("(;", "1;") },
        constraints: {},
      });
      expect(again.payload).toMatchObject({ engine: "checker", diagnostics: [{ line: 1, code: "TS2322" }] });
    } finally {
      fresh.cleanup();
    }
  }, 90_000);

  it("a long file after an edit: the edited region's error first, marked; the whole file's answer follows", async () => {
    let long = "";
    for (let i = 0; i < 150; i++)
      long += `export function f${i}(input: string): number {\n  const size = input.length;\n  return size;\n}\n`;
    const edited = long.replace("return size;\n}\nexport function f101(", "return sise;\n}\nexport function f101(");
    const first = await diagnose({ file_path: "src/long.ts", source_code: long });
    expect(first.payload).toMatchObject({ engine: "checker", coverage: "file", diagnostics: [] });
    const region = await diagnose(
      { file_path: "src/long.ts", source_code: edited },
      { verify_budget_ms: 1_000, coverage: "auto" },
    );
    expect(region.status, JSON.stringify(region.error)).toBe("success");
    expect(region.payload).toMatchObject({
      coverage: "region",
      checked_ranges: [{ start: { line: 402 }, end: { line: 403 } }],
      diagnostics: [{ line: 403, column: 9, code: "TS2304", message: "Cannot find name 'sise'.", fixes: [] }],
      notes: [expect.stringMatching(/whole file is being checked now/)],
    });
    // Asked for the whole file: it waits for the check begun after the region answer, fixes checked.
    const full = await diagnose({ file_path: "src/long.ts", source_code: edited }, { coverage: "file" });
    expect(full.payload).toMatchObject({ coverage: "file", diagnostics: [{ line: 403, code: "TS2304" }], notes: [] });
    expect(full.payload.checked_ranges).toBeUndefined();
    expect((full.payload.diagnostics as Json[])[0]!.fixes[0]).toMatchObject({
      verified: true,
      edits: [{ file_path: "src/long.ts", new_text: "size" }],
    });
  }, 90_000);

  it("without a workspace: syntax errors only, and says why", async () => {
    const res = await agent.invoke({ action: "diagnose", context: { source_code: "const = 1;\n" }, constraints: {} });
    expect(res.payload).toMatchObject({ engine: "syntax", engine_reason: expect.stringMatching(/syntax errors only/) });
    expect((res.payload.diagnostics as Json[])[0]).toMatchObject({ line: 1, code: "syntax" });
  });

  it("a stack trace from built output: mapped through the source map to the cause, with its code and callee", async () => {
    const run = spawnSync(process.execPath, ["-e", `import("${join(ws.dir, "dist/main.js")}").then((m) => m.hello())`]);
    const output = run.stderr.toString();
    expect(output).toMatch(/dist\/util\.js:\d+/);
    const res = await diagnose({ output: `${output}    at evil (/etc/passwd:1:1)\n` });
    expect(res.payload).toMatchObject({ mode: "output", tool: "node" });
    const f = (res.payload.failures as Json[])[0]!;
    expect(f).toMatchObject({ error: "Error", message: "empty name" });
    expect(res.payload.cause).toMatchObject({
      file_path: "src/util.ts",
      line: 5,
      mapped_from: { file_path: "dist/util.js" },
      code: expect.stringContaining('>    5 |   if (name === "") throw new Error("empty name");'),
    });
    const frames = f.frames as Json[];
    expect(frames.find((x) => x.file_path === "src/main.ts")).toMatchObject({ kind: "workspace", line: 9 });
    expect(frames.find((x) => x.raw.includes("/etc/passwd"))).toMatchObject({
      kind: "outside",
      reason: expect.stringMatching(/not read/),
    });
  }, 90_000);

  it("a source map that does not parse or points outside the workspace: the frame is unmapped, with the reason", async () => {
    mkdirSync(join(ws.dir, "out"), { recursive: true });
    writeFileSync(join(ws.dir, "out/bad.js"), "throw new Error('x');\n//# sourceMappingURL=bad.js.map\n");
    writeFileSync(join(ws.dir, "out/bad.js.map"), "{oops");
    writeFileSync(join(ws.dir, "out/far.js"), "throw new Error('x');\n//# sourceMappingURL=far.js.map\n");
    writeFileSync(
      join(ws.dir, "out/far.js.map"),
      JSON.stringify({ version: 3, sources: ["../../../../etc/shadow"], mappings: "AAAA" }),
    );
    const res = await diagnose({
      output: `Error: x\n    at f (${join(ws.dir, "out/bad.js")}:1:7)\n    at g (${join(ws.dir, "out/far.js")}:1:7)\n`,
    });
    const frames = (res.payload.failures as Json[])[0]!.frames as Json[];
    expect(frames[0]).toMatchObject({ kind: "unmapped", reason: expect.stringMatching(/does not parse as JSON/) });
    expect(frames[1]).toMatchObject({
      kind: "unmapped",
      reason: expect.stringMatching(/points outside the workspace/),
    });
    expect(res.payload.cause).toBeUndefined();
  });

  it("tsc output: each error with the checker's verified fixes", async () => {
    const res = await diagnose({ output: "src/main.ts(5,29): error TS2304: Cannot find name 'ad'.\n" });
    expect(res.payload.tool).toBe("tsc");
    expect((res.payload.diagnostics as Json[])[0]).toMatchObject({
      file_path: "src/main.ts",
      line: 5,
      code: "TS2304",
      fixes: [{ verified: true, edits: [{ new_text: "add" }] }, expect.anything()],
    });
  }, 90_000);

  it("a 10 MB log file is scanned within the named limit; a larger one and a FIFO are refused at once", async () => {
    const tail = `Error: deep\n    at greet (${join(ws.dir, "src/util.ts")}:5:26)\n`;
    writeFileSync(join(ws.dir, "ci.log"), `${"noise line\n".repeat(1_000_000)}${tail}`);
    const res = await diagnose({ output_path: "ci.log" });
    expect(res.status).toBe("success");
    expect(res.payload.cause).toMatchObject({ file_path: "src/util.ts", line: 5 });
    expect(res.payload.notes.join(" ")).toMatch(/were not scanned \(limit 2097152\)/);
    writeFileSync(join(ws.dir, "huge.log"), Buffer.alloc(17 * 1024 * 1024, 0x61));
    const big = await diagnose({ output_path: "huge.log" });
    expect(big.error).toMatchObject({ type: "AIP_ERR_PAYLOAD_TOO_LARGE" });
    execFileSync("mkfifo", [join(ws.dir, "pipe.log")]);
    const fifo = await diagnose({ output_path: "pipe.log" });
    expect(fifo.error).toMatchObject({
      type: "AIP_ERR_INVALID_FIELD",
      detail: expect.stringMatching(/not a regular file/),
    });
    const out = await diagnose({ output_path: "../../etc/passwd" });
    expect(out.error).toMatchObject({ type: "AIP_ERR_FORBIDDEN_PATH" });
  }, 90_000);
});

/**
 * testgen against a hostile workspace whose `node_modules/.bin/vitest` is a shell script: untrusted, it
 * never runs (the file is still produced and typechecked); trusted, it runs only in the sandbox, as
 * nobody, reading no secret; a cancelled request kills it at once and leaves no file behind.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, onTestFinished } from "vitest";
import { standaloneContext } from "../../agents/lib/runtime/context.js";
import { createTestgen } from "../../agents/testgen/handler.js";
import { createLogger } from "../../protocol/util/log.js";
import type { AipRequest } from "../../protocol/contract/schemas.js";
import { ROOT, tempDir } from "../helpers.js";

const LIB = join(ROOT, "test/fixtures/code/testgen-lib");
const temps: { cleanup: () => void }[] = [];
const outside = tempDir("aipsec-outside-");
afterAll(() => {
  temps.forEach((t) => t.cleanup());
  outside.cleanup();
});
afterEach(() => {
  delete process.env.AIP_TRUSTED_WORKSPACES;
});

/** A copy of the fixture whose "vitest" writes a marker outside, reports its uid and tries /etc/shadow. */
function hostileWorkspace(script?: string): { root: string; marker: string } {
  const t = tempDir("aipsec-tg-");
  temps.push(t);
  cpSync(LIB, t.dir, { recursive: true });
  const marker = join(outside.dir, `marker-${readdirSync(outside.dir).length}`);
  mkdirSync(join(t.dir, "node_modules", ".bin"), { recursive: true });
  writeFileSync(
    join(t.dir, "node_modules", ".bin", "vitest"),
    script ??
      `#!/bin/sh\ntouch ${marker}\necho "uid=$(id -u)" >&2\nhead -c 40 /etc/shadow >&2\necho '{"testResults":[]}' > /tmp/aip-out/report.json\n`,
    { mode: 0o755 },
  );
  return { root: t.dir, marker };
}

const testgen = createTestgen();
type Payload = Record<string, any>;
async function gen(root: string, signal?: AbortSignal): Promise<Payload> {
  const ctx = standaloneContext({
    traceId: "t",
    budgetMs: 60_000,
    log: createLogger({ agentName: "test", destination: false }),
    ...(signal ? { signal } : {}),
  });
  const req = {
    action: "testgen",
    context: { workspace_root: root, file_path: "src/money.ts" },
    constraints: { function: "format" },
  } as AipRequest;
  return (await testgen(req, ctx)) as Payload;
}

describe("testgen and workspace trust", () => {
  it("never runs an untrusted workspace's runner; the file is still produced and typechecked", async () => {
    const { root, marker } = hostileWorkspace();
    for (let i = 0; i < 3; i++) {
      const p = await gen(root);
      expect(p.content).toContain('expect(format({ amount: 5, currency: "EUR" })).toBe("5.00 EUR");');
      expect(p.checks).toMatchObject({
        typecheck: "passed",
        run: "skipped",
        skipped: { run: "workspace not trusted" },
      });
      expect(p.checks.trust).toMatchObject({ trusted: false });
      expect(p.checks.notes.join("\n")).toContain(`aip trust ${root}`);
      expect(existsSync(marker)).toBe(false);
    }
  });

  it("runs a trusted workspace's runner only in the sandbox: as nobody, no secret read, nothing left", async () => {
    const { root, marker } = hostileWorkspace(
      `#!/bin/sh\ntouch ${join(outside.dir, "trusted-marker")} 2>/dev/null\necho "uid=$(id -u) shadow=$(head -c 20 /etc/shadow 2>/dev/null | tr -d '\\n')" >&2\n`,
    );
    process.env.AIP_TRUSTED_WORKSPACES = root;
    const before = readdirSync(join(root, "src")).sort();
    const p = await gen(root);
    expect(existsSync(marker)).toBe(false);
    expect(existsSync(join(outside.dir, "trusted-marker"))).toBe(false);
    // It wrote no report: the run is an error whose reason is its own output.
    expect(p.checks.trust).toMatchObject({ trusted: true });
    expect(p.checks.skipped.run).toContain("uid=65534 shadow=");
    const shadow = readFileSync("/etc/shadow", "utf8").slice(0, 20);
    expect(JSON.stringify(p)).not.toContain(shadow);
    expect(readdirSync(join(root, "src")).sort()).toEqual(before);
  });

  it("a cancelled request kills its runner at once and leaves no file in the workspace", async () => {
    const token = `${process.pid}${Date.now() % 100000}`;
    const { root } = hostileWorkspace(`#!/bin/sh\nsleep 3${token} &\nsleep 3${token}\n`);
    process.env.AIP_TRUSTED_WORKSPACES = root;
    const before = readdirSync(join(root, "src")).sort();
    // The runs' scratch folders go to a temp dir of this test's own: suites running beside it make theirs.
    const scratch = tempDir("aip-trust-scratch-");
    const tmp = process.env.TMPDIR;
    process.env.TMPDIR = scratch.dir;
    onTestFinished(() => {
      if (tmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmp;
      scratch.cleanup();
    });
    for (let i = 0; i < 2; i++) {
      const ac = new AbortController();
      const done = gen(root, ac.signal).catch((e: unknown) => e);
      let sleepers: number[] = [];
      while (sleepers.length < 2) {
        await new Promise((r) => setImmediate(r));
        sleepers = byCmdline(`sleep\u00003${token}\u0000`);
      }
      ac.abort();
      await done;
      expect(sleepers.filter(running)).toEqual([]);
      expect(readdirSync(join(root, "src")).sort()).toEqual(before);
    }
    expect(readdirSync(scratch.dir).filter((n) => n.startsWith("aip-run-"))).toEqual([]);
  });
});

function byCmdline(cmdline: string): number[] {
  return readdirSync("/proc")
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, "utf8") === cmdline;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(")") + 2));
  } catch {
    return false;
  }
}

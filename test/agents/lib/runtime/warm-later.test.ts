/**
 * A code agent reports ready before it loads the TypeScript compiler: its modules touch the compiler
 * only on first use, and the agent loads it (`warmLater`) once its first readiness probe is answered.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { httpRequest, invokeHttp, waitForSocket } from "../../../../protocol/transport/client.js";
import { typescriptLoaded } from "../../../../agents/lib/code/typescript.js";
import { warmParser } from "../../../../agents/lib/code/parse.js";
import { ParseCache } from "../../../../agents/lib/code/cache.js";
import { defaultOptions } from "../../../../agents/lib/code/project.js";
import { TypedEngine } from "../../../../agents/lib/completion/engine.js";
import "../../../../agents/lib/code/service.js";
import "../../../../agents/lib/diagnose/check.js";
import "../../../../agents/testgen/verify.js";
import { ROOT, tempDir } from "../../../helpers.js";

describe("the compiler, loaded on first use", () => {
  it("is not loaded by importing the modules that use it, and is by the first parse", () => {
    new ParseCache();
    new TypedEngine();
    expect(typescriptLoaded()).toBe(false);
    warmParser();
    expect(typescriptLoaded()).toBe(true);
    expect(defaultOptions()).toMatchObject({ strict: true, noEmit: true, target: 9 });
  });

  it("loads in agent-diagnose once its first /healthz is answered, once, and the agent answers as before", async () => {
    const t = tempDir("aipwl-");
    const sock = join(t.dir, "d.sock");
    const child = spawn(process.execPath, [join(ROOT, "dist/agents/diagnose/main.js"), "--listen", sock], {
      env: { ...process.env, AIP_MODEL: "", AIP_WORKSPACE_ROOTS: t.dir },
      stdio: ["ignore", "pipe", "inherit"],
    });
    const events: string[] = [];
    let onEvent = (): void => undefined;
    createInterface({ input: child.stdout! }).on("line", (line) => {
      try {
        events.push(String((JSON.parse(line) as { event?: unknown }).event));
        onEvent();
      } catch {
        // not a log line
      }
    });
    const event = (name: string): Promise<void> =>
      new Promise((resolve) => {
        onEvent = () => events.includes(name) && resolve();
        onEvent();
      });
    try {
      await waitForSocket(sock, 60_000);
      await event("ready");
      expect(events).not.toContain("warmed_later");
      expect((await httpRequest(sock, { path: "/healthz", timeoutMs: 60_000 })).status).toBe(200);
      await event("warmed_later");
      expect((await httpRequest(sock, { path: "/healthz", timeoutMs: 60_000 })).status).toBe(200);
      const answer = (await invokeHttp(sock, {
        action: "diagnose",
        constraints: {},
        context: { source_code: "const a: number = ;\n", file_path: "a.ts", workspace_root: t.dir },
      })) as { status: number; json: { payload?: { diagnostics?: { line: number; message: string }[] } } };
      expect(answer).toMatchObject({ status: 200 });
      expect(answer.json.payload?.diagnostics?.[0]).toMatchObject({
        line: 1,
        column: 18,
        message: "Expression expected.",
      });
      expect(events.filter((e) => e === "warmed_later")).toHaveLength(1);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("exit", resolve));
      t.cleanup();
    }
  }, 120_000);
});

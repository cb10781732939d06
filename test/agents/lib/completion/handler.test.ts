/**
 * complete-lite's handler when the checker misses its budget at an identifier (docs/performance.md,
 * "Type-aware completion"): the syntactic answer is prepared while the checker works, so at the budget
 * nothing is parsed in full and the handler does not wait on. The checker here is a TypedEngine that
 * never answers in time: whether the real one does depends on the machine's load.
 */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ParseCache } from "../../../../agents/lib/code/cache.js";
import { TypedEngine, type TypedResult } from "../../../../agents/lib/completion/engine.js";
import { createCompleteLite } from "../../../../agents/lib/completion/handler.js";
import { standaloneContext } from "../../../../agents/lib/runtime/context.js";
import { createLogger } from "../../../../protocol/util/log.js";
import type { AipRequest } from "../../../../protocol/contract/schemas.js";
import { bigFile } from "../../../../bench/scenarios/typed-completion.js";
import { DIST, tempDir } from "../../../helpers.js";

/** A checker that never answers within the budget: it does what the real engine does meanwhile and at the budget. */
class LateChecker extends TypedEngine {
  /** Per request: what `extend.worthIt()` said at the budget (true: the handler would wait on for the checker). */
  readonly waitedOn: boolean[] = [];
  /** Per request: the cache's counts right after `meanwhile.run()`. */
  readonly afterPrepare: ReturnType<ParseCache["stats"]>[] = [];
  constructor(private readonly cache: ParseCache) {
    super();
  }
  override complete(
    _req: unknown,
    budgetMs: number,
    _log?: unknown,
    extend?: { untilMs: number; worthIt: () => boolean },
    meanwhile?: { afterMs: number; run: () => void },
  ): Promise<TypedResult> {
    meanwhile?.run();
    this.afterPrepare.push(this.cache.stats());
    this.waitedOn.push(extend?.worthIt() ?? false);
    return Promise.resolve({ reason: `the checker did not answer within the budget (${budgetMs} ms)`, fallback: [] });
  }
}

describe("complete-lite handler, checker late at an identifier", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  const big = bigFile();
  beforeAll(() => {
    t = tempDir("aiph-");
    root = realpathSync(t.dir);
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src/big.ts"), big);
  });
  afterAll(() => t.cleanup());

  it("answers from a parse prepared while the checker worked: no full parse of the 2,000-line buffer, no wait past the budget", async () => {
    const cache = new ParseCache();
    const late = new LateChecker(cache);
    const handler = createCompleteLite(cache, late);
    const log = createLogger({ agentName: "test", destination: false });
    const ask = async (source: string, offset: number) => {
      const before = source.slice(0, offset);
      const cursor = { line: before.split("\n").length, column: offset - (before.lastIndexOf("\n") + 1) };
      const request = {
        action: "complete",
        context: { workspace_root: root, file_path: "src/big.ts", source_code: source, cursor },
        constraints: { max_items: 10 },
      } as unknown as AipRequest;
      return (await handler(request, standaloneContext({ traceId: "t", budgetMs: 5_000, log }))) as {
        engine: string;
        engine_reason?: string;
        items: { label: string }[];
      };
    };
    // A half-typed statement: the buffer does not parse, the cursor's parse is patched. The first request
    // parses the buffer and the patched one in full (nothing cached yet): the checker is waited on.
    const start = big.indexOf("  // the cursor types here");
    let text = `${big.slice(0, start)}  const v = ${big.slice(start)}`;
    let pos = start + "  const v = ".length;
    await ask(text, pos);
    expect(late.waitedOn).toEqual([true]);
    const full = cache.stats().full;
    const type = async (chars: string) => {
      let last: Awaited<ReturnType<typeof ask>> | undefined;
      for (const ch of chars) {
        text = text.slice(0, pos) + ch + text.slice(pos);
        pos++;
        const before = cache.stats();
        last = await ask(text, pos);
        expect(last.engine).toBe("syntactic");
        expect(last.engine_reason).toBe("the checker did not answer within the budget (15 ms)");
        // The keystroke's parse happened while the checker worked.
        expect(late.afterPrepare.at(-1)!.incremental).toBeGreaterThan(before.incremental);
      }
      return last!.items.map((i) => i.label);
    };
    // `h` mends the statement; `(` opens a call the buffer never closes.
    expect((await type("hel")).sort()).toEqual(Array.from({ length: 10 }, (_, d) => `helper${d}`));
    expect((await type("per4(ra"))[0]).toBe("raw");
    expect(late.waitedOn.slice(1)).toEqual(Array.from({ length: 10 }, () => false));
    expect(cache.stats().full).toBe(full);
  });
});

describe("typed engine, a request queued behind one that fell back", () => {
  it("waits on for the checker even when the caller's fallback is cheap: the earlier list serves it", async () => {
    const t = tempDir("aipq-");
    const root = realpathSync(t.dir);
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, lib: ["ES2022"] } }));
    const text = "export const alphaValue = 1;\nexport const alphaOther = 2;\nconst x = alpha";
    writeFileSync(join(root, "src/a.ts"), text);
    // The built engine: its worker is dist/agents/lib/completion/worker.js.
    const { TypedEngine: Engine } = (await import(join(DIST, "agents/lib/completion/engine.js"))) as {
      TypedEngine: typeof TypedEngine;
    };
    const engine = new Engine();
    try {
      const req = { root, path: join(root, "src/a.ts"), text, offset: text.length, limit: 10 };
      const cheap = { untilMs: 60_000, worthIt: () => false };
      // The first request finds the workspace loading: it falls back at its budget, the worker still busy with it.
      const first = await engine.complete(req, 1, undefined, cheap);
      expect("reason" in first && first.reason).toMatch(/still loading/);
      // The next one is queued behind it: it waits on although the fallback is cheap, and the checker answers.
      const next = await engine.complete(req, 1, undefined, cheap);
      expect("answer" in next).toBe(true);
      if ("answer" in next)
        expect(
          next.answer.items
            .map((i) => i.label)
            .slice(0, 2)
            .sort(),
        ).toEqual(["alphaOther", "alphaValue"]);
    } finally {
      await engine.close();
      t.cleanup();
    }
  }, 60_000);
});

/**
 * Member completion while the checker loads a workspace: the syntactic engine answers what it can know
 * from the receiver's declaration (a built-in type, a class or interface of the file, one imported from
 * a local module) instead of nothing, and says which engine answered and why.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ParseCache } from "../../../../agents/lib/code/cache.js";
import { TypedEngine, type TypedResult } from "../../../../agents/lib/completion/engine.js";
import { createCompleteLite } from "../../../../agents/lib/completion/handler.js";
import { standaloneContext } from "../../../../agents/lib/runtime/context.js";
import type { AipRequest } from "../../../../protocol/contract/schemas.js";
import { createLogger } from "../../../../protocol/util/log.js";
import { ROOT, tempDir } from "../../../helpers.js";

const LOADING = "the checker is still loading this workspace (budget 150 ms)";

/** The typed engine of a workspace that is still loading: it never answers. */
class Loading extends TypedEngine {
  asked = 0;
  override complete(): Promise<TypedResult> {
    this.asked++;
    return Promise.resolve({ reason: LOADING, fallback: [] });
  }
}

interface Answer {
  engine: string;
  engine_reason?: string;
  context: string;
  receiver_kind?: string;
  items: { label: string; kind: string; detail: string }[];
}

const log = createLogger({ agentName: "test", destination: false });
const typed = new Loading();
const handler = createCompleteLite(new ParseCache(), typed);

/** Complete at the `|` of `source` (the marker removed), as file `path` of `root`. */
async function at(root: string, path: string, marked: string): Promise<Answer> {
  const offset = marked.indexOf("|");
  const source = marked.slice(0, offset) + marked.slice(offset + 1);
  const before = source.slice(0, offset);
  const cursor = { line: before.split("\n").length, column: offset - (before.lastIndexOf("\n") + 1) };
  const request = {
    action: "complete",
    context: { workspace_root: root, file_path: path, source_code: source, cursor },
    constraints: { max_items: 50 },
  } as unknown as AipRequest;
  return (await handler(request, standaloneContext({ traceId: "t", budgetMs: 5_000, log }))) as Answer;
}

const labels = (a: Answer): string[] => a.items.map((i) => i.label);

const t = tempDir("aipload-");
afterAll(() => t.cleanup());
const root = realpathSync(t.dir);
mkdirSync(join(root, "src"));
writeFileSync(
  join(root, "src/registry.ts"),
  [
    "export class AgentRecord {",
    "  private secret = 1;",
    "  constructor(readonly name: string) {}",
    "  serves(action: string): boolean { return action === this.name; }",
    "  snapshot(): Record<string, unknown> { return {}; }",
    "}",
    "export interface Options { strict: boolean; limit: number }",
    "export enum Role { Stable, Canary }",
    "export const defaults = { timeoutMs: 500, retries: 2 };",
    "",
  ].join("\n"),
);
const MAIN = [
  'import { AgentRecord, Role, defaults } from "./registry.js";',
  'import type { Options } from "./registry.js";',
  "export function pick(agents: readonly AgentRecord[], rec: AgentRecord, opts: Options, tags: Map<string, number>) {",
  "  const made = new AgentRecord('x');",
  "  const word = `a`;",
  "  BODY",
  "}",
  "",
].join("\n");
const main = (body: string): string => MAIN.replace("BODY", body);

describe("member completion while the checker loads", () => {
  it("an array parameter offers the array's methods, narrowed by the prefix (agents.f)", async () => {
    const a = await at(root, "src/main.ts", main("agents.f|"));
    expect(a.engine).toBe("syntactic");
    expect(a.engine_reason).toBe(LOADING);
    expect(a.context).toBe("member");
    expect(a.receiver_kind).toBe("builtin");
    expect(labels(a).slice(0, 6).sort()).toEqual(
      ["fill", "filter", "find", "findIndex", "findLast", "findLastIndex"].sort(),
    );
    expect(labels(a)).toContain("flatMap");
  });

  it("a parameter of an imported class's type offers its public members, read from its module", async () => {
    const a = await at(root, "src/main.ts", main("rec.|"));
    expect(a.receiver_kind).toBe("imported");
    expect(labels(a).sort()).toEqual(["name", "serves", "snapshot"]);
    expect(a.items.find((i) => i.label === "serves")).toMatchObject({ kind: "method" });
  });

  it("a constructed instance, an imported interface, enum and object, and Map and string locals", async () => {
    expect(labels(await at(root, "src/main.ts", main("made.s|"))).sort()).toEqual(["serves", "snapshot"]);
    expect(labels(await at(root, "src/main.ts", main("opts.|"))).sort()).toEqual(["limit", "strict"]);
    expect(labels(await at(root, "src/main.ts", main("Role.|"))).sort()).toEqual(["Canary", "Stable"]);
    expect(labels(await at(root, "src/main.ts", main("defaults.|"))).sort()).toEqual(["retries", "timeoutMs"]);
    expect(labels(await at(root, "src/main.ts", main("tags.ha|")))[0]).toBe("has");
    expect(labels(await at(root, "src/main.ts", main("word.startsW|")))).toEqual(["startsWith"]);
  });

  it("in this repository's own router, `agents.f` in describeRegistered offers filter, find, flatMap", async () => {
    const path = "orchestrator/request/router.ts";
    const text = readFileSync(join(ROOT, path), "utf8");
    const anchor = "  const serving = agents.filter((a) => a.serves(action));";
    expect(text).toContain(anchor);
    const a = await at(ROOT, path, text.replace(anchor, `  agents.f|\n${anchor}`));
    expect(a.engine_reason).toBe(LOADING);
    expect(labels(a)).toEqual(expect.arrayContaining(["filter", "find", "flatMap", "forEach"]));
    expect(typed.asked).toBeGreaterThan(0);
  });
});

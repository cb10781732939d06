/** How members rank after `expr.` with nothing typed: a real language service on temp workspaces. */
import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkspaceService } from "../../../../agents/lib/code/service.js";
import { accessUsage, likeness, priorPoints, words } from "../../../../agents/lib/completion/member-rank.js";
import { typedCompletions } from "../../../../agents/lib/completion/typed.js";
import { tempDir } from "../../../helpers.js";

const CONFIG = JSON.stringify({ compilerOptions: { strict: true, target: "ES2022", lib: ["ES2022"], types: [] } });

const API = `export class Store {
  size = 0;
  label = "";
  ready = false;
  get count(): number {
    return this.size;
  }
  add(item: string): void {
    this.size++;
  }
  rename(from: string, to: string): string {
    return from + to;
  }
  clear(): void {}
}
export class Other {
  size = 0;
  add(item: number): void {}
  close(): void {}
}
`;

/** Other workspace files: \`api.fetchUser\` used often. */
const CLIENT = `export const api = {
  fetchUser(id: string): Promise<string> {
    return Promise.resolve(id);
  },
  fetchAll(): Promise<string[]> {
    return Promise.resolve([]);
  },
  abort(): void {},
};
`;
const USES = `import { api } from "./client.js";
export async function a() {
  await api.fetchUser("1");
  await api.fetchUser("2");
  await api.fetchUser("3");
}
`;

describe("member ranking (typed engine)", () => {
  let t: { dir: string; cleanup: () => void };
  let root: string;
  let svc: WorkspaceService;
  beforeAll(async () => {
    t = tempDir("aipmr-");
    root = realpathSync(t.dir);
    const files: Record<string, string> = {
      "tsconfig.json": CONFIG,
      "src/store.ts": API,
      "src/client.ts": CLIENT,
      "src/uses.ts": USES,
      "src/main.ts": "export {};\n",
    };
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(join(root, rel, ".."), { recursive: true });
      writeFileSync(join(root, rel), text);
    }
    svc = new WorkspaceService(root);
    await svc.loaded;
    expect(svc.state).toBe("ready");
  }, 60_000);
  afterAll(() => {
    svc.dispose();
    t.cleanup();
  });

  /** Labels at the `|` of `code` (the cursor marker removed), in src/main.ts. */
  function labels(code: string, limit = 8): string[] {
    const offset = code.indexOf("|");
    const text = code.slice(0, offset) + code.slice(offset + 1);
    return typedCompletions(svc, join(root, "src/main.ts"), text, offset, limit).items.map((i) => i.label);
  }

  it("an own member used twice in the file ranks above an inherited toString", () => {
    const got = labels(`const o = { width: 1, height: 2, area(): number { return 0; } };
o.area();
o.area();
export const n = o.|
`);
    expect(got[0]).toBe("area");
    expect(got).toContain("width");
    expect(got.indexOf("toString") === -1 || got.indexOf("toString") > got.indexOf("height")).toBe(true);
  });

  it("`Object.` offers Object's own functions before what every function inherits (apply, bind, call)", () => {
    const got = labels(`export const k = Object.|\n`, 5);
    expect(got).toContain("keys");
    for (const inherited of ["apply", "bind", "call", "arguments", "caller"]) expect(got).not.toContain(inherited);
  });

  it("a plain function's own members are the ones it inherits: `f.` offers call, apply, bind", () => {
    const got = labels(`function f(a: number): number { return a; }\nexport const g = f.|\n`);
    expect(got).toEqual(expect.arrayContaining(["call", "apply", "bind"]));
  });

  it("never offers the member being declared at the cursor", () => {
    const got = labels(`export class Url {
  host = "";
  port = 0;
  get hostname(): string {
    return this.|
  }
}
`);
    expect(got).not.toContain("hostname");
    expect(got).toEqual(expect.arrayContaining(["host", "port"]));
  });

  it("never offers plain identifiers after a `.` the checker cannot type", () => {
    const got = labels(`const input = "x";\nexport const r = parseUnknown(input).|\n`);
    expect(got).not.toContain("input");
  });

  it("a member called with arguments: one whose parameters take them", () => {
    const got = labels(`import { Store } from "./store.js";\nconst s = new Store();\ns.|("a", "b");\n`, 3);
    expect(got[0]).toBe("rename");
    expect(got.slice(0, 3)).not.toContain("size");
  });

  it("a member read further (`x.|.toUpperCase()`) has that member", () => {
    const got = labels(
      `import { Store } from "./store.js";\nconst s = new Store();\nexport const n = s.|.toUpperCase();\n`,
      1,
    );
    expect(got).toEqual(["label"]);
  });

  it("in a condition, a boolean member first", () => {
    const got = labels(`import { Store } from "./store.js";\nconst s = new Store();\nif (s.|) s.clear();\n`, 1);
    expect(got).toEqual(["ready"]);
  });

  it("an argument: a member assignable to the parameter's type", () => {
    const got = labels(
      `import { Store } from "./store.js";\nconst s = new Store();\nfunction takesNumber(n: number): void {}\ntakesNumber(s.|);\n`,
      2,
    );
    expect(got).toEqual(expect.arrayContaining(["size", "count"]));
  });

  it("assigned: the member that takes the value (`this.run = this.run.bind(this)` is the method)", () => {
    const got = labels(`export class Job {
  name = "";
  count = 0;
  constructor() {
    this.| = this.run.bind(this);
  }
  run(): void {}
}
`);
    expect(got[0]).toBe("run");
  });

  it("uses on a receiver of the same type count, uses of the same name on another type do not", () => {
    const got = labels(`import { Store, Other } from "./store.js";
const s = new Store();
const o = new Other();
o.close();
o.close();
o.close();
s.clear();
export const x = s.|
`);
    expect(got.indexOf("clear")).toBeGreaterThanOrEqual(0);
    expect(got).not.toContain("close");
    expect(got[0]).toBe("clear");
  });

  it("usage in the workspace's other files: `api.fetchUser` first", () => {
    const got = labels(`import { api } from "./client.js";\nexport const p = api.|\n`, 3);
    expect(got[0]).toBe("fetchUser");
  });

  it("a call's rest arguments: `xs.|(index, 1)` on an array of functions is splice, not push (whose items are functions)", () => {
    const got = labels(
      `declare const hooks: Array<() => void>;\ndeclare const index: number;\nhooks.|(index, 1);\n`,
      3,
    );
    // slice(index, 1) takes them too.
    expect(got).toContain("splice");
    expect(got).not.toContain("push");
  });

  it("constructed (`new o.|(1)`): a member with a construct signature that takes the arguments, not a function", () => {
    const got = labels(
      `declare const ns: { alpha: number; make(): number; Maker: new (n: number) => { n: number } };\nexport const m = new ns.|(1);\n`,
      1,
    );
    expect(got).toEqual(["Maker"]);
  });

  it("named like the variable it initializes: `const timeout = o.|` offers timeout before a member used once", () => {
    const decl = `declare const o: { alpha: number; beta: number; retries: number; timeout: number };\nexport const used = o.alpha;\n`;
    expect(labels(`${decl}export const timeout = o.|\n`, 1)).toEqual(["timeout"]);
    // Through a comparison and `?:` on its way.
    expect(labels(`${decl}export const retries = o.| === 0 ? 1 : 2;\n`, 1)).toEqual(["retries"]);
  });

  it("named like the property it initializes, also through a call of one argument", () => {
    const decl = `declare const o: { alpha: string; beta: string; method: string };\nexport const used = o.alpha;\n`;
    expect(labels(`${decl}export const x = { method: o.| ?? "GET" };\n`, 1)).toEqual(["method"]);
    expect(labels(`${decl}export const y = { method: String(o.|) };\n`, 1)).toEqual(["method"]);
  });

  it("named partly like the variable: `const index = xs.|(x)` is indexOf, before push", () => {
    const got = labels(`declare const xs: string[];\nexport const index = xs.|("a");\n`, 3);
    expect(got[0]).toBe("indexOf");
  });

  it("assigned a variable: `this.| = name` is the member called name; passed as a parameter: named like it", () => {
    const got = labels(`export class P {
  label = "";
  name = "";
  constructor(name: string) {
    this.label = "";
    this.| = name;
  }
}
`);
    expect(got[0]).toBe("name");
    // padStart(maxLength: number, fillString?: string)
    const arg = labels(
      `declare const o: { alpha: number; maxLength: number };\nexport const s = "".padStart(o.|);\n`,
      1,
    );
    expect(arg).toEqual(["maxLength"]);
  });

  it("members of library types follow public usage: startsWith and includes before padEnd on a string", () => {
    const got = labels(`declare const s: string;\nexport const b = s.|\n`, 20);
    expect(got.indexOf("includes")).toBeGreaterThanOrEqual(0);
    expect(got.indexOf("includes")).toBeLessThan(got.indexOf("padEnd") === -1 ? 99 : got.indexOf("padEnd"));
    expect(got[0]).toBe("length");
  });
});

describe("member ranking signals", () => {
  it("accessUsage counts `.name` per name and per receiver word, not decimals or spreads", () => {
    const u = accessUsage("a.b(); a?.b; c.b; x.y.z; 1.5; [...xs]; f().g");
    expect(u.names.get("b")).toBe(3);
    expect(u.pairs.get("a.b")).toBe(2);
    expect(u.pairs.get("y.z")).toBe(1);
    expect(u.names.get("g")).toBe(1);
    expect(u.names.has("5")).toBe(false);
    expect(u.names.has("xs")).toBe(false);
  });

  it("names split into words, and how alike two names' words are", () => {
    expect(words("#getResponseRequest")).toEqual(["get", "response", "request"]);
    expect(words("_deprecatedHooks")).toEqual(["deprecated", "hooks"]);
    expect(words("parseJSONBody")).toEqual(["parse", "json", "body"]);
    expect(likeness(words("_filter"), words("filter"))).toBe(1);
    // Plural and shared first letters; `of` left out.
    expect(likeness(words("totalBytes"), words("byteLength"))).toBeGreaterThan(0);
    expect(likeness(words("indexOf"), words("index"))).toBeGreaterThan(likeness(words("lastIndexOf"), words("index")));
    expect(likeness(words("searchParameters"), words("searchParams"))).toBeGreaterThan(0.5);
    // Four letters in common are not the same word (`call`, `callbacks`).
    expect(likeness(words("callHook"), words("callbacks"))).toBe(0);
  });

  it("the prior knows public usage of library members and of global pairs", () => {
    expect(priorPoints("keys", "Object")).toBeGreaterThan(priorPoints("getOwnPropertySymbols", "Object"));
    expect(priorPoints("length", undefined)).toBeGreaterThan(priorPoints("padEnd", undefined));
    expect(priorPoints("startsWith", undefined)).toBeGreaterThan(0);
    expect(priorPoints("zzNotAMemberAnyoneUses", undefined)).toBe(0);
  });
});

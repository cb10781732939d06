/** The completion ranking's usage counts (typed.ts usageOf), kept from one buffer to the next, against a scan of the whole buffer. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { usageOf, type Usage } from "../../../../agents/lib/completion/typed.js";

const sorted = (u: Usage) => [[...u.count].sort(), [...u.member].sort(), [...u.nearest].sort()];

describe("typed engine's usage counts", () => {
  it("updated edit by edit, equal a scan of the whole buffer after each edit", () => {
    let text = readFileSync(new URL("../../../../agents/lib/completion/typed.ts", import.meta.url), "utf8").slice(
      0,
      4000,
    );
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = ["a", ".", "x.y", " ", "\n", "#p", "1", "foo", "?.", "(", "$", "_b2", "..."];
    for (let i = 0; i < 200; i++) {
      const at = rnd(text.length + 1);
      const cut = rnd(4) === 0 ? rnd(20) : 0;
      text = text.slice(0, at) + (rnd(3) === 0 ? "" : pieces[rnd(pieces.length)]!) + text.slice(at + cut);
      const offset = rnd(text.length + 1);
      const kept = sorted(usageOf("a.ts", text, offset, offset));
      usageOf("b.ts", "", 0, 0); // another file: the next call scans the whole buffer
      expect(JSON.stringify(kept), `edit ${i}`).toBe(JSON.stringify(sorted(usageOf("a.ts", text, offset, offset))));
    }
  });

  it("a paste of more names than are spliced in place, and edits around it, equal a whole scan", () => {
    const scan = (path: string, text: string, offset: number) => {
      usageOf("other.ts", "", 0, 0);
      return JSON.stringify(sorted(usageOf(path, text, offset, offset)));
    };
    let text = "const a = b.c;\nfunction f() {\n  return a?.d;\n}\n";
    usageOf("p.ts", text, 0, 0);
    const paste = Array.from({ length: 12_000 }, (_, i) => `x${i % 50}.y${i % 7}`).join(" ");
    for (const [at, insert] of [
      [text.indexOf("return"), paste],
      [5, "q"],
      [text.length, "\nz.w"],
    ] as const) {
      text = text.slice(0, Math.min(at, text.length)) + insert + text.slice(Math.min(at, text.length));
      const kept = JSON.stringify(sorted(usageOf("p.ts", text, 10, 10)));
      expect(kept).toBe(scan("p.ts", text, 10));
      usageOf("p.ts", text, 10, 10); // the next edit updates from this buffer
    }
  });

  it("counts names, member pairs after `.` and `?.`, and the nearest occurrence", () => {
    const text = "a.b; a?.b; c . d\nb";
    const u = usageOf("c.ts", text, text.length, text.length);
    expect(u.count.get("b")).toBe(3);
    expect(u.member.get("a.b")).toBe(2);
    expect(u.member.get("c.d")).toBe(1);
    expect(u.nearest.get("b")).toBe(1);
    expect(u.nearest.get("a")).toBe(text.length - 5);
  });
});

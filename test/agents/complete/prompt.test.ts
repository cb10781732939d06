/** The typed context line of agent-complete's prompt (agents/complete/prompt.ts). */
import { describe, expect, it } from "vitest";
import { TYPED_CONTEXT_CHARS, typedContextLine } from "../../../agents/complete/prompt.js";

const item = (label: string, signature?: string) => ({
  label,
  kind: "method",
  insert_text: label,
  detail: "",
  ...(signature ? { signature } : {}),
});

describe("typedContextLine", () => {
  it("members: signatures without the checker's kind and owner prefix, in the engine's order", () => {
    const line = typedContextLine({
      context: "member",
      offered: 3,
      items: [
        item("rename", "(method) Store.rename(from: string, to: string): string"),
        item("size", "(property) Store.size: number"),
        item("clear"),
      ],
    });
    expect(line).toBe("// MEMBERS: rename(from: string, to: string): string; size: number; clear\n");
  });

  it("identifiers: IN_SCOPE with each declaration's signature", () => {
    const line = typedContextLine({
      context: "identifier",
      offered: 1,
      items: [item("makeStore", "(alias) function makeStore(initial: number): Store")],
    });
    expect(line).toBe("// IN_SCOPE: function makeStore(initial: number): Store\n");
  });

  it("nothing known: no line; a long list stops at the cap", () => {
    expect(typedContextLine(undefined)).toBe("");
    expect(typedContextLine({ context: "member", offered: 0, items: [] })).toBe("");
    const many = Array.from({ length: 200 }, (_, i) => item(`member${i}`, `(property) T.member${i}: string`));
    const line = typedContextLine({ context: "member", offered: 200, items: many });
    expect(line.length).toBeLessThanOrEqual(TYPED_CONTEXT_CHARS + 1);
    expect(line).toContain("member0: string; member1: string");
  });
});

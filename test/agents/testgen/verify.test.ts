/** A runner's failure as one line a person can act on. */
import { describe, expect, it } from "vitest";
import { failureLine } from "../../../agents/testgen/verify.js";

describe("failureLine", () => {
  it("joins a line that only introduces the failure with the one that says it, colours removed", () => {
    const vite =
      "\u001b[31mTransform failed with 1 error:\n\n\u001b[31m[TSCONFIG_ERROR] \u001b[0mFailed to load tsconfig '@sindresorhus/tsconfig': Tsconfig not found\n  Plugin: vite:oxc\n";
    expect(failureLine(vite)).toBe(
      "Transform failed with 1 error: [TSCONFIG_ERROR] Failed to load tsconfig '@sindresorhus/tsconfig': Tsconfig not found",
    );
  });

  it("keeps a line that stands alone, cut at 200 characters", () => {
    expect(failureLine("AssertionError: expected '$' to be 'US$'\n    at x.test.ts:3:4")).toBe(
      "AssertionError: expected '$' to be 'US$'",
    );
    expect(failureLine(`Error: ${"x".repeat(300)}`)).toHaveLength(200);
    expect(failureLine(undefined)).toBe("");
  });
});

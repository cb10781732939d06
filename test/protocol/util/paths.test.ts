import { describe, expect, it } from "vitest";
import { isInside, isInsideAny } from "../../../protocol/util/paths.js";

describe("isInside", () => {
  it("accepts the root and paths below it", () => {
    expect(isInside("/w", "/w")).toBe(true);
    expect(isInside("/w", "/w/a/b.ts")).toBe(true);
    expect(isInside("/w/", "a/../b.ts")).toBe(true);
  });
  it("rejects escapes and look-alike prefixes", () => {
    expect(isInside("/w", "/w/../x")).toBe(false);
    expect(isInside("/w", "../w2/a")).toBe(false);
    expect(isInside("/w", "/w2/a")).toBe(false);
    expect(isInside("/w", "/")).toBe(false);
    expect(isInside("/w", "..")).toBe(false);
    expect(isInside("/w", "/w/..foo")).toBe(true);
  });
  it("checks a list of roots", () => {
    expect(isInsideAny(["/tmp", "/run/aip"], "/run/aip/x.sock")).toBe(true);
    expect(isInsideAny(["/tmp", "/run/aip"], "/root/.ssh/id_rsa")).toBe(false);
  });
});

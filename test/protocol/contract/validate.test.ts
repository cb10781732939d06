import { describe, expect, it } from "vitest";
import { AipError } from "../../../protocol/contract/errors.js";
import { decodeJson, jsonDepthExceeds } from "../../../protocol/transport/json.js";
import { ManifestSchema, RequestSchema, cpuMillicores, memoryBytes } from "../../../protocol/contract/schemas.js";
import { isValidTraceId, newTraceId } from "../../../protocol/contract/trace.js";
import { validateRequest } from "../../../protocol/contract/validate.js";

function codeOf(fn: () => unknown): { code: string; detail: string } {
  try {
    fn();
  } catch (err) {
    if (err instanceof AipError) return { code: err.code, detail: err.message };
    throw err;
  }
  throw new Error("expected an AipError");
}

describe("request validation", () => {
  it("answers as the zod schema does, with or without its fast path", () => {
    const base = { action: "echo", context: { source_code: "a" }, constraints: {} };
    const variants: unknown[] = [
      base,
      { ...base, trace_id: "t-1" },
      { ...base, trace_id: "bad id" },
      { ...base, action: "" },
      { ...base, context: { ...base.context, cursor: { line: 1, column: 0, extra: 1 } } },
      { ...base, context: { ...base.context, cursor: { line: 1, column: 0 } } },
      { ...base, context: { ...base.context, cursor: { column: 7, line: 2 ** 53 - 1 } } },
      { ...base, context: { ...base.context, cursor: { line: 2 ** 53, column: 0 } } },
      { ...base, context: { ...base.context, cursor: { line: 0, column: 0 } } },
      { ...base, context: { ...base.context, cursor: { line: 1, column: -1 } } },
      { ...base, context: { ...base.context, cursor: { line: 1.5, column: 0 } } },
      { ...base, context: { ...base.context, cursor: { line: 1 } } },
      { ...base, context: { ...base.context, cursor: null } },
      { ...base, context: { ...base.context, cursor: [1, 0] } },
      { ...base, context: { language: "" } },
      { ...base, context: { source_code: 3 } },
      { ...base, constraints: { timeout_ms: 3_600_000, max_tokens: 5, languages: ["ts"], allow_truncation: true } },
      { ...base, constraints: { timeout_ms: 3_600_001 } },
      { ...base, constraints: { timeout_ms: 1.5 } },
      { ...base, constraints: { max_tokens: 0 } },
      { ...base, constraints: { languages: [""] } },
      { ...base, constraints: { agent: "" } },
      { ...base, constraints: { allow_truncation: "yes" } },
      { ...base, context: [] },
    ];
    for (const v of variants) {
      const zod = RequestSchema.safeParse(v);
      if (zod.success) expect(validateRequest(v)).toEqual(zod.data);
      else expect(codeOf(() => validateRequest(v)).code).toBe("AIP_ERR_INVALID_FIELD");
    }
  });

  it("returns a request with a plain cursor as it is (forwarded as its client sent it), one with other keys as zod's copy", () => {
    const plain = {
      action: "complete",
      context: { source_code: "a.", cursor: { line: 1, column: 2 } },
      constraints: {},
    };
    expect(validateRequest(plain)).toBe(plain);
    const extra = { ...plain, context: { ...plain.context, cursor: { line: 1, column: 2, offset: 2 } } };
    expect(validateRequest(extra)).not.toBe(extra);
    expect(validateRequest(extra).context.cursor).toEqual({ line: 1, column: 2 });
  });

  it("accepts a minimal request and keeps unknown constraint keys", () => {
    const r = validateRequest({ action: "echo", context: {}, constraints: { framework: "vitest" } });
    expect(r.constraints["framework"]).toBe("vitest");
  });

  it("names every missing field", () => {
    expect(codeOf(() => validateRequest({ context: {} }))).toEqual({
      code: "AIP_ERR_MISSING_FIELD",
      detail: "Missing required fields: action, constraints",
    });
  });

  it("reports wrong types with their paths", () => {
    const { code, detail } = codeOf(() =>
      validateRequest({ action: "x", context: { cursor: { line: 0, column: -1 } }, constraints: { languages: "ts" } }),
    );
    expect(code).toBe("AIP_ERR_INVALID_FIELD");
    expect(detail).toContain("context.cursor.line");
    expect(detail).toContain("context.cursor.column");
    expect(detail).toContain("constraints.languages");
  });

  it("rejects trace ids that are unsafe in logs", () => {
    expect(codeOf(() => validateRequest({ action: "x", context: {}, constraints: {}, trace_id: "a b\n" })).code).toBe(
      "AIP_ERR_INVALID_FIELD",
    );
    expect(isValidTraceId("abc-123:x.y_z")).toBe(true);
    expect(isValidTraceId("x".repeat(129))).toBe(false);
    expect(newTraceId()).toMatch(/^[0-9a-f]{32}$/);
    expect(newTraceId()).not.toBe(newTraceId());
  });

  it("rejects non-objects as invalid JSON requests", () => {
    expect(codeOf(() => validateRequest([1])).code).toBe("AIP_ERR_INVALID_JSON");
    expect(codeOf(() => validateRequest(null)).code).toBe("AIP_ERR_INVALID_JSON");
  });
});

describe("JSON decoding", () => {
  it("enforces the nesting limit without recursion, ignoring brackets in strings", () => {
    expect(jsonDepthExceeds("[".repeat(10_000), 64)).toBe(true);
    expect(jsonDepthExceeds(JSON.stringify({ a: "[[[[[[[[[[" }), 2)).toBe(false);
    expect(jsonDepthExceeds(JSON.stringify({ a: '\\"[[[[' }), 1)).toBe(false);
    expect(codeOf(() => decodeJson(Buffer.from("[".repeat(65) + "]".repeat(65)), 64)).detail).toContain(
      "deeper than the limit of 64",
    );
    expect(decodeJson(Buffer.from("[".repeat(64) + "]".repeat(64)), 64)).toBeDefined();
  });

  it("skips strings whole: escaped quotes and backslash runs end a string only where JSON ends it", () => {
    // The depth counted character by character, the reference the quote-to-quote skip must agree with.
    const reference = (text: string, limit: number): boolean => {
      let depth = 0;
      let inString = false;
      for (let i = 0; i < text.length; i++) {
        const c = text[i];
        if (inString) {
          if (c === "\\") i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === "[" || c === "{") {
          if (++depth > limit) return true;
        } else if (c === "]" || c === "}") depth--;
      }
      return false;
    };
    const strings = ["\\", '\\\\"[[', '\\"', 'a\\\\\\"[{', "[[[]]]", '"', "", "\\u0022[[["];
    for (const s of strings)
      for (const shape of [{ a: s, b: [[[[1]]]] }, [s, [[s, [[s]]]]], { [s]: { [s]: [[s]] } }]) {
        const text = JSON.stringify(shape);
        for (const limit of [1, 2, 3, 4, 5, 6])
          expect(jsonDepthExceeds(text, limit), `${text} at ${limit}`).toBe(reference(text, limit));
      }
    // An unterminated string holds no nesting; JSON.parse then says what is wrong.
    expect(jsonDepthExceeds('{"a":"[[[[[[', 2)).toBe(false);
    expect(codeOf(() => decodeJson(Buffer.from('{"a":"[[[[[['), 2)).detail).toContain("JSON parse failed");
  });

  it("accepts a leading byte order mark, as a UTF-8 decoder does", () => {
    expect(decodeJson(Buffer.from('\ufeff{"a":1}'), 64)).toEqual({ a: 1 });
    expect(decodeJson(new Uint8Array(Buffer.from(' {"a":"é"}')), 64)).toEqual({ a: "é" });
  });

  it("rejects invalid UTF-8 and empty input", () => {
    expect(codeOf(() => decodeJson(Buffer.from([0x7b, 0xff, 0x7d]), 64)).detail).toBe("Request is not valid UTF-8");
    expect(codeOf(() => decodeJson(Buffer.from("  \n"), 64)).code).toBe("AIP_ERR_INVALID_JSON");
  });
});

describe("manifest schema", () => {
  const good = {
    aip: "1",
    name: "testgen",
    version: "1.0.0",
    description: "d",
    capabilities: ["testgen"],
    languages: ["typescript"],
    resources: { cpu: "200m", memory: "512Mi", gpu: false },
    max_concurrent: 8,
    timeouts_ms: { default: 2000 },
  };

  it("accepts the DESIGN.md example and rejects unknown keys and bad quantities", () => {
    expect(ManifestSchema.safeParse(good).success).toBe(true);
    expect(ManifestSchema.safeParse({ ...good, extra: 1 }).success).toBe(false);
    const bad = ManifestSchema.safeParse({ ...good, resources: { cpu: "lots", memory: "512Mi", gpu: false } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["resources", "cpu"]);
  });

  it("converts quantities", () => {
    expect(cpuMillicores("200m")).toBe(200);
    expect(cpuMillicores("1.5")).toBe(1500);
    expect(memoryBytes("512Mi")).toBe(512 * 1024 * 1024);
    expect(memoryBytes("1G")).toBe(1e9);
  });
});

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AipError, ERROR_CODES, ERROR_REGISTRY, problem } from "../../../protocol/contract/errors.js";
import { errorResponse } from "../../../protocol/contract/envelope.js";
import { ProblemSchema } from "../../../protocol/contract/schemas.js";
import { ROOT } from "../../helpers.js";

// The codes and statuses DESIGN.md lists; the registry must hold at least these, unchanged.
const DESIGN: Record<string, number> = {
  AIP_ERR_INVALID_JSON: 400,
  AIP_ERR_MISSING_FIELD: 400,
  AIP_ERR_INVALID_FIELD: 400,
  AIP_ERR_PAYLOAD_TOO_LARGE: 413,
  AIP_ERR_NO_ROUTE: 404,
  AIP_ERR_UNAVAILABLE: 503,
  AIP_ERR_SOCKET_BUSY: 503,
  AIP_ERR_TIMEOUT: 504,
  AIP_ERR_MODEL_TIMEOUT: 504,
  AIP_ERR_CONTEXT_TRUNCATED: 413,
  AIP_ERR_PARSE: 422,
  AIP_ERR_SYNTAX: 422,
  AIP_ERR_AGENT_CRASHED: 502,
  AIP_ERR_BAD_AGENT_RESPONSE: 502,
  AIP_ERR_FORBIDDEN_PATH: 403,
  AIP_ERR_CANCELLED: 499,
  AIP_ERR_UNKNOWN: 500,
};

describe("error registry", () => {
  it("defines every DESIGN.md code with its HTTP status, a title and a suggestion", () => {
    for (const [code, status] of Object.entries(DESIGN)) {
      const def = ERROR_REGISTRY[code as keyof typeof ERROR_REGISTRY];
      expect(def, code).toBeDefined();
      expect(def.status, code).toBe(status);
      expect(def.title.length, code).toBeGreaterThan(3);
      expect(def.suggestion.length, code).toBeGreaterThan(10);
    }
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });

  it("is documented in the table of docs/aip-1.md, both ways", () => {
    const readme = readFileSync(join(ROOT, "docs/aip-1.md"), "utf8");
    const documented = new Set(
      [...readme.matchAll(/^\| `(AIP_ERR_[A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => `${m[1]} ${m[2]}`),
    );
    const registry = new Set(ERROR_CODES.map((c) => `${c} ${ERROR_REGISTRY[c].status}`));
    expect([...documented].sort()).toEqual([...registry].sort());
  });

  it("builds RFC 9457 problems with detail, instance and extension members", () => {
    const p = problem("AIP_ERR_MISSING_FIELD", {
      detail: "Missing required field: action",
      instance: "t-1",
      extensions: { fields: ["action"] },
    });
    expect(p).toEqual({
      type: "AIP_ERR_MISSING_FIELD",
      title: "Missing required field",
      status: 400,
      detail: "Missing required field: action",
      suggestion: ERROR_REGISTRY.AIP_ERR_MISSING_FIELD.suggestion,
      instance: "t-1",
      fields: ["action"],
    });
    expect(ProblemSchema.safeParse(p).success).toBe(true);
  });

  it("extension members cannot overwrite the registry's fields", () => {
    const p = problem("AIP_ERR_TIMEOUT", { extensions: { status: 200, type: "x" } });
    expect(p.status).toBe(504);
    expect(p.type).toBe("AIP_ERR_TIMEOUT");
  });

  it("turns unknown exceptions into AIP_ERR_UNKNOWN without leaking the message or stack", () => {
    const env = errorResponse(new Error("secret /etc/passwd at line 3"), "t-2");
    expect(env.error.type).toBe("AIP_ERR_UNKNOWN");
    expect(JSON.stringify(env)).not.toContain("secret");
    expect(env.error.instance).toBe("t-2");
    const known = errorResponse(
      new AipError("AIP_ERR_PARSE", "Unexpected token at 3:4", { extensions: { line: 3, column: 4 } }),
      "t-3",
    );
    expect(known.error).toMatchObject({
      type: "AIP_ERR_PARSE",
      status: 422,
      detail: "Unexpected token at 3:4",
      line: 3,
      column: 4,
    });
  });
});

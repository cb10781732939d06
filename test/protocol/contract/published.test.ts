/** The published contract: committed files equal the generated ones, both validate, and real answers match the served schema. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACTIONS, actionInput } from "../../../protocol/contract/actions.js";
import { httpRequest, invokeHttp } from "../../../protocol/transport/client.js";
import { isAipError } from "../../../protocol/contract/errors.js";
import { publishedFiles } from "../../../tools/schema.js";
import { ROOT } from "../../helpers.js";
import { COMPLETE, modelEnv } from "../../agents/lib/llm/tiny-model.js";
import { startAgency, until, type Agency } from "../../orchestrator/harness.js";

type Json = Record<string, any>;

function schemaValidator(doc: object): Ajv2020 {
  // strict: an unknown keyword or a malformed schema is an error, not ignored.
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  ajv.addKeyword("actions").addKeyword("error_codes");
  ajv.addSchema(doc, "aip");
  return ajv;
}

describe("committed contract files", () => {
  it("protocol/contract/schema.json and protocol/contract/openapi.json equal what the code generates (npm run schema rewrites them)", () => {
    for (const [path, text] of Object.entries(publishedFiles()))
      expect(readFileSync(join(ROOT, path), "utf8"), path).toBe(text);
  });

  it("the OpenAPI document is valid OpenAPI 3.1", async () => {
    const result = await new Validator().validate(
      JSON.parse(readFileSync(join(ROOT, "protocol/contract/openapi.json"), "utf8")) as Parameters<
        Validator["validate"]
      >[0],
    );
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it("the JSON Schema document compiles (draft 2020-12, strict) and names every action", () => {
    const doc = JSON.parse(readFileSync(join(ROOT, "protocol/contract/schema.json"), "utf8")) as Json;
    const ajv = schemaValidator(doc);
    expect(doc.actions).toEqual(["echo", "summarize", "search", "testgen", "complete", "diagnose"]);
    for (const name of ["Request", "Problem", "ErrorResponse", "SummarizePayload", "CompleteResponse"])
      expect(ajv.getSchema(`aip#/$defs/${name}`), name).toBeTruthy();
    const completeRequest = ajv.getSchema("aip#/$defs/CompleteRequest")!;
    expect(
      completeRequest({
        action: "complete",
        context: { cursor: { line: 1, column: 0 } },
        constraints: { max_items: 5 },
      }),
    ).toBe(true);
    expect(completeRequest({ action: "complete", context: { cursor: { line: 0, column: 0 } }, constraints: {} })).toBe(
      false,
    );
    expect(completeRequest({ action: "complete", context: {}, constraints: { max_items: 5000 } })).toBe(false);
    expect(
      ajv.getSchema("aip#/$defs/SearchRequest")!({
        action: "search",
        context: { workspace_root: "/w" },
        constraints: {},
      }),
    ).toBe(false);
  });

  it("the agents' validation: a missing required field names it, a wrong one says what was expected and what came", () => {
    let missing: unknown;
    try {
      actionInput("search", { context: { workspace_root: "/w" }, constraints: {} });
    } catch (err) {
      missing = err;
    }
    expect(isAipError(missing) && missing.code).toBe("AIP_ERR_MISSING_FIELD");
    expect(isAipError(missing) && missing.extensions).toEqual({ fields: ["context.query"] });
    expect(() => actionInput("complete", { context: {}, constraints: { best_effort: "yes" } })).toThrow(
      'constraints.best_effort: expected a boolean, got "yes"',
    );
    expect(() =>
      actionInput("search", { context: { workspace_root: "/w", query: "q" }, constraints: { paths: ["src/**", 3] } }),
    ).toThrow("constraints.paths.1: expected an array of non-empty strings, got 3");
    expect(actionInput("testgen", { context: {}, constraints: { framework: "jest", extra: 1 } }).constraints).toEqual({
      framework: "jest",
      extra: 1,
    });
  });
});

describe("answers of a real agency match the schema it serves", () => {
  let agency: Agency;
  const dist = (name: string): string => join(ROOT, `dist/agents/${name}/main.js`);
  const manifest = (name: string): string => join(ROOT, `manifests/${name}.json`);
  beforeAll(async () => {
    agency = await startAgency(
      ["dummy", "summarize", "search", "testgen", "complete-lite", "diagnose"].map((name) => ({
        name,
        command: dist(name),
        manifest: manifest(name),
      })),
    );
    await until(() => agency.orchestrator.agents.every((a) => a.state === "healthy"), 30_000, "agents healthy");
  }, 60_000);
  afterAll(async () => agency.stop());

  it("serves /v1/schema and /openapi.json equal to the committed files", async () => {
    const files = publishedFiles();
    const schema = await httpRequest(agency.socket, { path: "/v1/schema" });
    expect(schema.status).toBe(200);
    expect(schema.headers["content-type"]).toMatch(/^application\/schema\+json/);
    expect(JSON.parse(schema.body)).toEqual(JSON.parse(files["protocol/contract/schema.json"]!));
    const openapi = await httpRequest(agency.socket, { path: "/openapi.json" });
    expect(openapi.status).toBe(200);
    expect(JSON.parse(openapi.body)).toEqual(JSON.parse(files["protocol/contract/openapi.json"]!));
  });

  it("one request per action: each answer validates against its action's response schema", async () => {
    const ajv = schemaValidator(JSON.parse((await httpRequest(agency.socket, { path: "/v1/schema" })).body) as object);
    const module = "/** Adds. */\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n";
    const source = `${module}export const total = ad`;
    const requests: Record<keyof typeof ACTIONS, Json> = {
      echo: { context: { source_code: "a\nb" }, constraints: {} },
      summarize: { context: { source_code: module, language: "typescript" }, constraints: {} },
      search: {
        context: { workspace_root: join(ROOT, "protocol"), query: "trace id pattern" },
        constraints: { limit: 3 },
      },
      testgen: {
        // The small project diagnose reads too: the checker's program over this whole repository adds CPU, not cover.
        context: { workspace_root: join(ROOT, "test/fixtures/code/testgen-lib"), file_path: "src/money.ts" },
        constraints: { function: "format" },
      },
      complete: {
        context: { source_code: source, language: "typescript", cursor: { line: 5, column: 23 } },
        constraints: {},
      },
      diagnose: {
        // A small project: the checker's first load of a large one may outlast the wait for it.
        context: {
          workspace_root: join(ROOT, "test/fixtures/code/testgen-lib"),
          file_path: "src/money.ts",
          source_code: "export const n: number = 'x';\n",
        },
        // The checker's first load of even a small project can outlast the default wait on a busy machine.
        constraints: { check_wait_ms: 60_000, timeout_ms: 90_000 },
      },
    };
    const answers: Record<string, Json> = {};
    for (const [action, req] of Object.entries(requests)) {
      const { json } = await invokeHttp(agency.socket, { action, ...req });
      const validate = ajv.getSchema(`aip#/$defs/${action[0]!.toUpperCase()}${action.slice(1)}Response`)!;
      expect(validate(json) ? [] : validate.errors, action).toEqual([]);
      expect(json.status, `${action}: ${JSON.stringify(json.error)}`).toBe("success");
      answers[action] = json.payload as Json;
    }
    expect(answers.echo).toMatchObject({ received_action: "echo", context_lines: 2 });
    expect(answers.summarize!.outline.functions[0].name).toBe("add");
    expect(answers.search!.hits[0].path).toBe("contract/trace.ts");
    expect(answers.testgen!.test_path).toBe("src/money.test.ts");
    expect(answers.complete!.engine).toBe("syntactic");
    expect(answers.complete!.items[0]).toMatchObject({ label: "add", kind: "function" });
    expect(answers.complete!.replace).toEqual({ start: { line: 5, column: 21 }, end: { line: 5, column: 23 } });
    expect(answers.diagnose!.diagnostics[0]).toMatchObject({
      file_path: "src/money.ts",
      line: 1,
      code: "TS2322",
    });

    // A problem validates too, and the request schema agrees with the agent on what is wrong.
    const bad = (
      await invokeHttp(agency.socket, { action: "search", context: { workspace_root: ROOT }, constraints: {} })
    ).json as Json;
    expect(ajv.getSchema("aip#/$defs/SearchResponse")!(bad)).toBe(true);
    expect(bad.error.type).toBe("AIP_ERR_MISSING_FIELD");
    expect(
      ajv.getSchema("aip#/$defs/SearchRequest")!({
        action: "search",
        context: { workspace_root: ROOT },
        constraints: {},
      }),
    ).toBe(false);
  }, 60_000);
});

describe("the model engine answers the same complete shape", () => {
  it("engine model: one item with the generated text, validated against CompletePayload", async () => {
    const agency = await startAgency([
      {
        name: "complete",
        command: COMPLETE,
        manifest: join(ROOT, "manifests/complete.json"),
        env: modelEnv(true, { AIP_WARMUP_KEYSTROKES: "0" }),
      },
    ]);
    try {
      await until(() => agency.orchestrator.agents[0]!.state === "healthy", 30_000, "complete healthy");
      const ajv = schemaValidator(JSON.parse(publishedFiles()["protocol/contract/schema.json"]!) as object);
      const { json } = (await invokeHttp(agency.socket, {
        action: "complete",
        context: {
          language: "typescript",
          source_code: "export const alpha = 1;\nconst b = al",
          cursor: { line: 2, column: 12 },
        },
        constraints: { max_tokens: 3, best_effort: true, timeout_ms: 30_000, inference_timeout_ms: 20_000 },
      })) as { json: Json };
      const validate = ajv.getSchema("aip#/$defs/CompleteResponse")!;
      expect(validate(json) ? [] : validate.errors).toEqual([]);
      expect(json.payload.engine).toBe("model");
      expect(json.payload.items).toEqual([
        { label: expect.any(String), kind: "text", insert_text: json.payload.completion, detail: "model" },
      ]);
      expect(json.payload.replace).toEqual({ start: { line: 2, column: 12 }, end: { line: 2, column: 12 } });
    } finally {
      await agency.stop();
    }
  }, 60_000);
});

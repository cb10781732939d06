/**
 * The published contract: JSON Schema (zod's own conversion) for requests, every payload and the
 * problem, served at `GET /v1/schema`, and an OpenAPI 3.1 document for the HTTP surface, served at
 * `GET /openapi.json`. Both are committed as protocol/contract/schema.json and protocol/contract/openapi.json; a test
 * keeps them equal to what this module generates (`npm run schema` rewrites them).
 */
import { z } from "zod";
import { ACTIONS, type ActionName } from "./actions.js";
import { ERROR_REGISTRY } from "./errors.js";
import { ErrorResponseSchema, ProblemSchema, RequestSchema, SuccessResponseSchema } from "./schemas.js";

type JsonObject = Record<string, unknown>;

/** The protocol's version: AIP-1. */
export const AIP_VERSION = "1.0.0";

const capital = (s: string): string => s[0]!.toUpperCase() + s.slice(1);

/** One zod schema as a JSON Schema fragment (no `$schema` key: it sits inside a document). */
function fragment(schema: z.ZodType, io: "input" | "output"): JsonObject {
  const out = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" }) as JsonObject;
  delete out.$schema;
  return out;
}

/** The named schemas, in a stable order: Request, Problem, Response, then per action its request, payload and success answer. */
function definitions(ref: (name: string) => string): Record<string, JsonObject> {
  const defs: Record<string, JsonObject> = {
    Request: fragment(RequestSchema, "input"),
    Problem: fragment(ProblemSchema, "output"),
    ErrorResponse: fragment(ErrorResponseSchema, "output"),
    SuccessResponse: fragment(SuccessResponseSchema, "output"),
  };
  for (const name of Object.keys(ACTIONS) as ActionName[]) {
    const contract = ACTIONS[name];
    const N = capital(name);
    defs[`${N}Request`] = {
      ...fragment(
        RequestSchema.extend({ action: z.literal(name), context: contract.context, constraints: contract.constraints }),
        "input",
      ),
      description: contract.description,
    };
    defs[`${N}Payload`] = fragment(contract.payload, "output");
    defs[`${N}Response`] = {
      oneOf: [
        {
          allOf: [
            { $ref: ref("SuccessResponse") },
            { type: "object", required: ["payload"], properties: { payload: { $ref: ref(`${N}Payload`) } } },
          ],
        },
        { $ref: ref("ErrorResponse") },
      ],
    };
  }
  return defs;
}

/** The JSON Schema document served at GET /v1/schema. */
export function schemaDocument(): JsonObject {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "AIP-1",
    description:
      "AIP-1 requests, answers, per-action payloads and the problem. Positions: line 1-based, column 0-based in UTF-16 code units.",
    actions: Object.keys(ACTIONS),
    error_codes: Object.keys(ERROR_REGISTRY),
    $defs: definitions((name) => `#/$defs/${name}`),
  };
}

const problemResponse = (description: string): JsonObject => ({
  description,
  content: { "application/json": { schema: { $ref: "#/components/schemas/ErrorResponse" } } },
});
const jsonResponse = (description: string, schema: JsonObject = { type: "object" }): JsonObject => ({
  description,
  content: { "application/json": { schema } },
});

/** The OpenAPI 3.1 document served at GET /openapi.json: every route of the orchestrator's socket. */
export function openApiDocument(): JsonObject {
  const ref = (name: string): JsonObject => ({ $ref: `#/components/schemas/${name}` });
  const names = Object.keys(ACTIONS).map(capital);
  return {
    openapi: "3.1.0",
    info: {
      title: "agency (AIP-1)",
      version: AIP_VERSION,
      description:
        "The orchestrator's HTTP surface on its Unix socket (curl --unix-socket ./run/aip.sock http://aip/...). The same requests also go as NDJSON lines on that socket.",
    },
    servers: [
      { url: "http://aip", description: "the Unix socket (./run/aip.sock, or /run/aip/aip.sock under systemd)" },
    ],
    paths: {
      "/v1/invoke": {
        post: {
          operationId: "invoke",
          summary: "Route one request to an agent",
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: { oneOf: names.map((n) => ref(`${n}Request`)), discriminator: { propertyName: "action" } },
              },
            },
          },
          responses: {
            "200": jsonResponse("the agent's answer (status success)", {
              oneOf: names.map((n) => ref(`${n}Response`)),
            }),
            "4XX": problemResponse(
              "a bad request: invalid JSON or field, no route, too large, forbidden path, cancelled",
            ),
            "5XX": problemResponse("the agency could not answer: unavailable, busy, timeout, agent crashed"),
          },
        },
      },
      "/healthz": {
        get: {
          operationId: "healthz",
          summary: "Agency and per-agent status",
          responses: { "200": jsonResponse("ok or degraded"), "503": jsonResponse("no agent available") },
        },
      },
      "/metrics": {
        get: {
          operationId: "metrics",
          summary: "Prometheus text",
          responses: { "200": { description: "metrics", content: { "text/plain": { schema: { type: "string" } } } } },
        },
      },
      "/v1/agents": {
        get: {
          operationId: "agents",
          summary: "Registered agents with manifests, pool and health",
          responses: { "200": jsonResponse("the agents") },
        },
      },
      "/v1/schema": {
        get: {
          operationId: "schema",
          summary: "JSON Schema of requests, payloads and the problem",
          responses: { "200": jsonResponse("a JSON Schema 2020-12 document") },
        },
      },
      "/openapi.json": {
        get: {
          operationId: "openapi",
          summary: "This document",
          responses: { "200": jsonResponse("an OpenAPI 3.1 document") },
        },
      },
      "/v1/admin/health-check": {
        post: {
          operationId: "healthCheck",
          summary:
            "Probe every agent now; restart any that does not answer (admin socket only; 403 on the main socket)",
          responses: { "200": jsonResponse("what was checked") },
        },
      },
      "/v1/admin/canary": {
        get: {
          operationId: "canaryStatus",
          summary: "Canary versions, traffic share and decisions (admin socket only)",
          responses: { "200": jsonResponse("canary status") },
        },
      },
      ...Object.fromEntries(
        (["start", "promote", "rollback"] as const).map((op) => [
          `/v1/admin/canary/${op}`,
          {
            post: {
              operationId: `canary${capital(op)}`,
              summary: `Canary ${op} (admin socket only; start names a version declared in the agency config)`,
              requestBody: {
                required: true,
                content: {
                  "application/json": {
                    schema:
                      op === "start"
                        ? {
                            type: "object",
                            additionalProperties: false,
                            required: ["agent", "version"],
                            properties: {
                              agent: { type: "string" },
                              version: { type: "string" },
                              percent: { type: "number", minimum: 0, maximum: 100 },
                            },
                          }
                        : { type: "object", required: ["agent"], properties: { agent: { type: "string" } } },
                  },
                },
              },
              responses: {
                "200": jsonResponse("the canary's new state"),
                "4XX": problemResponse("a bad body, an unknown agent, an undeclared version or a failed vetting (403)"),
              },
            },
          },
        ]),
      ),
    },
    components: { schemas: definitions((name) => `#/components/schemas/${name}`) },
  };
}

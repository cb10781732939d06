/**
 * `aip mcp`: an MCP server over stdio (@modelcontextprotocol/sdk) exposing the agency to coding agents
 * (docs/integrations.md "Use it from a coding agent"). Tool inputs are built from the per-action contracts in
 * protocol/contract/actions.ts, outputs are the action payloads. Files are named relative to the workspace (the
 * client's roots, or --workspace) and the agents confine them to it exactly as for any AIP-1 request.
 */
import { isAbsolute, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { RootsListChangedNotificationSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import {
  CompleteConstraintsSchema,
  CompletePayloadSchema,
  DiagnoseConstraintsSchema,
  DiagnosePayloadSchema,
  SearchConstraintsSchema,
  SearchContextSchema,
  SearchPayloadSchema,
  SummarizeConstraintsSchema,
  SummarizePayloadSchema,
  TestgenConstraintsSchema,
  TestgenPayloadSchema,
} from "../../protocol/contract/actions.js";
import { CursorSchema } from "../../protocol/contract/schemas.js";
import { AipCaller, agencyForServer, type Agency } from "./agency.js";
import { EXIT_CLEANUP_LIMIT_MS, guardExit } from "./server-exit.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";

const PATH = z.string().min(1).describe("the file, relative to the workspace root (or absolute inside it)");
const CURSOR = CursorSchema.describe("a position: line 1-based, column 0-based in UTF-16 code units");

/** The 5 tools: input shapes from the action contracts, output = the action's payload. */
const TOOLS = {
  summarize_file: {
    action: "summarize",
    description:
      'Outline (imports, exports, functions, classes, types, consts) and a short summary of a TypeScript, JavaScript or Python file, or of the function at a cursor (scope "function").',
    input: { path: PATH, scope: SummarizeConstraintsSchema.shape.scope, cursor: CURSOR.optional() },
    output: SummarizePayloadSchema,
  },
  search_workspace: {
    action: "search",
    description:
      "Ranked search (BM25) over the workspace's code and docs: definitions first, with path, lines, symbol and snippet.",
    input: {
      query: SearchContextSchema.shape.query,
      limit: SearchConstraintsSchema.shape.limit,
      paths: SearchConstraintsSchema.shape.paths,
      languages: SearchConstraintsSchema.shape.languages,
    },
    output: SearchPayloadSchema,
  },
  generate_tests: {
    action: "testgen",
    description:
      "A formatted test file (vitest, jest or node:test; pytest or unittest for Python) for a function or method, named or at a cursor. Returns its path and content; writes nothing to the workspace. The file is always checked in-process, typechecked or for Python parsed (nothing of the workspace runs). Only if the workspace's owner trusted it (aip trust DIR, or trusted_workspaces in the agency config) is the workspace's own test runner run on it, inside a bubblewrap sandbox (no network, read-only workspace, no home); otherwise checks.skipped.run says \"workspace not trusted\" and how to trust it.",
    input: {
      path: PATH,
      function: TestgenConstraintsSchema.shape.function,
      cursor: CURSOR.optional(),
      framework: TestgenConstraintsSchema.shape.framework,
    },
    output: TestgenPayloadSchema,
  },
  complete_at: {
    action: "complete",
    description:
      "Completions at a position of a file: ranked identifiers, members after '.', and keyword snippets (or model text when a model is configured).",
    input: {
      path: PATH,
      cursor: CURSOR,
      source_code: z.string().optional().describe("the buffer, when it differs from the file on disk"),
      max_items: CompleteConstraintsSchema.shape.max_items,
    },
    output: CompletePayloadSchema,
    // complete-lite's own default is an editor's keystroke budget; a coding agent waits for its tool's
    // answer, and the first call on a workspace loads its project.
    timeoutMs: 5_000,
  },
  diagnose: {
    action: "diagnose",
    description:
      "Diagnose a failure: paste tsc, vitest/jest/node:test output or a stack trace as `output` to get the cause's file, line, code and the failing assertion; or give `path` for a file's type errors with fixes, each checked on an in-memory copy (verified: true when the error is gone and none appeared). Writes nothing.",
    input: {
      path: PATH.optional(),
      output: z.string().optional().describe("tool output or a stack trace to diagnose"),
      source_code: z.string().optional().describe("the buffer, when it differs from the file on disk"),
      verify: DiagnoseConstraintsSchema.shape.verify,
    },
    output: DiagnosePayloadSchema,
  },
} as const;

export type ToolName = keyof typeof TOOLS;

/** An error result the model can read: the AIP code and detail in the text, the whole problem beside it. */
function toolError(type: string, detail: string, problem?: unknown): CallToolResult {
  return {
    isError: true,
    content: [
      { type: "text", text: `${type}: ${detail}` },
      ...(problem ? [{ type: "text" as const, text: JSON.stringify(problem) }] : []),
    ],
  };
}

/**
 * An agent's message in the tool's own argument names: the model called `complete_at` with `cursor`
 * and `max_items`, not an AIP request with `context.cursor` and `constraints.max_items`.
 */
export function inToolTerms(text: string): string {
  return text
    .replace(/context\.workspace_root/g, "the workspace (aip mcp --workspace, or the client's roots)")
    .replace(/context\.file_path/g, "path")
    .replace(/context\.(cursor|source_code|query)/g, "$1")
    .replace(/constraints\.(\w+)/g, "$1");
}

export function createMcpServer(agency: Agency, workspace: string | undefined): McpServer {
  const server = new McpServer(
    { name: "aip", version: "1.0.0" },
    {
      instructions:
        "Code intelligence for TypeScript, JavaScript and Python from the local agency: summarize_file, search_workspace, generate_tests, complete_at, diagnose.",
    },
  );
  const aip = new AipCaller(agency.socket);

  // A client whose roots change says so (roots/list_changed): an embedded agency then allows the new
  // list besides its configured roots, restarting on the same socket; tool calls wait for that.
  let rootsSettled: Promise<unknown> = Promise.resolve();
  if (workspace === undefined && agency.setClientRoots)
    server.server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
      rootsSettled = rootsSettled
        .then(roots)
        .then(async (paths) => {
          if (await agency.setClientRoots!(paths))
            process.stderr.write(`aip mcp: the embedded agency now allows the client's roots ${paths.join(", ")}\n`);
        })
        .catch((err: Error) => process.stderr.write(`aip mcp: the client's new roots: ${err.message}\n`));
    });

  /** The workspace roots: --workspace, else the client's file:// roots. */
  async function roots(): Promise<string[]> {
    if (workspace !== undefined) return [workspace];
    if (!server.server.getClientCapabilities()?.roots) return [];
    const listed = await server.server.listRoots();
    return listed.roots.filter((r) => r.uri.startsWith("file:")).map((r) => fileURLToPath(r.uri));
  }

  for (const [name, tool] of Object.entries(TOOLS) as [ToolName, (typeof TOOLS)[ToolName]][]) {
    server.registerTool(
      name,
      { description: tool.description, inputSchema: tool.input, outputSchema: tool.output },
      async (args: Record<string, unknown>, extra: { signal: AbortSignal }): Promise<CallToolResult> => {
        await rootsSettled;
        const all = await roots();
        if (all.length === 0)
          return toolError(
            "AIP_ERR_MISSING_FIELD",
            "No workspace: start aip mcp with --workspace DIR, or give the server roots",
          );
        const path = typeof args.path === "string" ? args.path : undefined;
        // The root that holds an absolute path (else the first); the agent checks containment (symlinks resolved).
        const root =
          (path !== undefined && isAbsolute(path) ? all.find((r) => !relative(r, path).startsWith("..")) : undefined) ??
          all[0]!;
        const { path: _p, cursor, source_code: source, query, output, ...constraints } = args;
        const context: Record<string, unknown> = {
          workspace_root: root,
          ...(path !== undefined ? { file_path: path } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
          ...(source !== undefined ? { source_code: source } : {}),
          ...(query !== undefined ? { query } : {}),
          ...(output !== undefined ? { output } : {}),
        };
        try {
          await agency.ready;
        } catch (err) {
          return toolError(
            "AIP_ERR_UNAVAILABLE",
            `The embedded agency did not start: ${(err as Error).message}${agency.logFile ? ` (log: ${agency.logFile})` : ""}`,
          );
        }
        let answer;
        try {
          const timeout = "timeoutMs" in tool ? { timeout_ms: tool.timeoutMs } : {};
          // A coding agent asks once: a diagnosis waits for a checker still loading the workspace.
          const wait = tool.action === "diagnose" && output === undefined ? { check_wait_ms: 10_000 } : {};
          answer = await aip.invoke(
            { action: tool.action, context, constraints: { ...timeout, ...wait, ...constraints } },
            extra.signal,
          );
        } catch (err) {
          return toolError(
            "AIP_ERR_UNAVAILABLE",
            `The agency on ${agency.socket} did not answer: ${(err as Error).message}`,
          );
        }
        if (!answer.ok) {
          const p = answer.problem;
          const worded = { ...p, detail: inToolTerms(p.detail), suggestion: inToolTerms(p.suggestion) };
          return toolError(p.type, worded.detail, worded);
        }
        return { content: [{ type: "text", text: JSON.stringify(answer.payload) }], structuredContent: answer.payload };
      },
    );
  }
  return server;
}

export const mcp: Command = {
  usage: `Usage: aip mcp [--workspace DIR] [--socket PATH] [--config FILE]

Speaks the Model Context Protocol on stdin/stdout with 5 tools: summarize_file,
search_workspace, generate_tests, complete_at, diagnose. Files are confined to the workspace:
--workspace DIR, else the roots the client gives. Requests go to the agency on --socket
(default: $AIP_SOCKET or ./run/aip.sock); when none answers, an embedded agency is
started (from --config). See docs/integrations.md "Use it from a coding agent".`,
  async run(argv) {
    const { flags, positionals } = parseArgs(argv, ["workspace", "socket", "config"]);
    if (positionals.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`);
    const workspace = typeof flags.workspace === "string" ? resolve(flags.workspace) : undefined;
    // An embedded agency allows --workspace, else the client's roots (asked once it has initialized).
    let rootsKnown: (paths: string[]) => void = () => undefined;
    const clientRoots = new Promise<string[]>((resolveRoots) => (rootsKnown = resolveRoots));
    const agency = await agencyForServer(
      "mcp",
      flags,
      workspace !== undefined ? Promise.resolve([workspace]) : clientRoots,
    );
    if (agency === undefined) return EXIT.aipError;
    const guard = guardExit(() => agency.close(), EXIT_CLEANUP_LIMIT_MS);
    if (agency.embedded)
      process.stderr.write(
        `aip mcp: no agency answered; started an embedded agency on ${agency.socket} (logs: ${agency.logFile})\n`,
      );
    const server = createMcpServer(agency, workspace);
    server.server.oninitialized = () => {
      const listed =
        agency.embedded && workspace === undefined && server.server.getClientCapabilities()?.roots
          ? server.server
              .listRoots()
              .then((r) => r.roots.filter((x) => x.uri.startsWith("file:")).map((x) => fileURLToPath(x.uri)))
          : Promise.resolve([]);
      listed.then(rootsKnown, () => rootsKnown([]));
    };
    const transport = new StdioServerTransport();
    const closed = new Promise<void>((resolveClosed) => {
      transport.onclose = resolveClosed;
      process.stdin.once("end", resolveClosed);
    });
    await server.connect(transport);
    await closed;
    await server.close();
    await guard.cleanup();
    guard.restore();
    return EXIT.ok;
  },
};

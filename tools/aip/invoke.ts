/** `aip invoke ACTION --file F`: build a request from a file, print the payload or the problem. */
import { readFileSync } from "node:fs";
import { extname, resolve } from "node:path";
import { invokeHttp } from "../../protocol/transport/client.js";
import type { Problem } from "../../protocol/contract/errors.js";
import { EXIT, UsageError, parseArgs, type Command } from "./command.js";
import { barrelNote, flagHint } from "./hints.js";
import { socketPath } from "./socket.js";

const LANGUAGES: Record<string, string> = {
  ".ts": "typescript",
  ".tsx": "typescript",
  ".mts": "typescript",
  ".cts": "typescript",
  ".js": "javascript",
  ".jsx": "javascript",
  ".mjs": "javascript",
  ".cjs": "javascript",
  ".py": "python",
  ".md": "markdown",
  ".json": "json",
};

function int(flag: string | true | undefined, name: string, min: number): number | undefined {
  if (flag === undefined) return undefined;
  const n = Number(flag);
  if (typeof flag !== "string" || !Number.isInteger(n) || n < min)
    throw new UsageError(`--${name} must be an integer >= ${min}, got ${JSON.stringify(flag)}`);
  return n;
}

export const invoke: Command = {
  usage: `Usage: aip invoke ACTION [--file F] [--line L --column C] [--language LANG] [--workspace DIR]
                  [--query TEXT] [--constraint KEY=JSON]... [--timeout MS] [--json] [--socket PATH]

Builds an AIP-1 request (context.source_code and file_path from --file; cursor from
--line (1-based) and --column (0-based)) and prints the payload, or the problem.
  --query TEXT            context.query (search), e.g. --query "parse a url"
  --constraint KEY=JSON   one constraint; repeat the flag for more, e.g.
                          --constraint framework='"jest"' --constraint languages='["typescript","javascript"]'
                          (a value without quotes that is not JSON is taken as a string: --constraint framework=jest)
  --json                  print the whole response envelope
Exit status: 0 success, 1 AIP error (the problem is printed), 2 usage error.`,
  async run(argv) {
    const { flags, lists, positionals } = parseArgs(
      argv,
      ["file", "line", "column", "language", "workspace", "query", "constraint", "timeout", "socket"],
      ["json"],
      ["constraint"],
    );
    if (positionals.length !== 1) throw new UsageError("expected exactly one ACTION");
    const line = int(flags.line, "line", 1);
    const column = int(flags.column, "column", 0);
    if ((line === undefined) !== (column === undefined)) throw new UsageError("--line and --column go together");
    const context: Record<string, unknown> = {};
    if (typeof flags.file === "string") {
      const path = resolve(flags.file);
      try {
        context.source_code = readFileSync(path, "utf8");
      } catch (err) {
        throw new UsageError(`cannot read --file ${flags.file}: ${(err as Error).message}`);
      }
      context.file_path = path;
      const lang = LANGUAGES[extname(path)];
      if (lang) context.language = lang;
    }
    if (typeof flags.language === "string") context.language = flags.language;
    if (typeof flags.workspace === "string") context.workspace_root = resolve(flags.workspace);
    if (typeof flags.query === "string") context.query = flags.query;
    if (line !== undefined) context.cursor = { line, column };
    const constraints: Record<string, unknown> = {};
    for (const pair of lists.constraint ?? []) {
      const eq = pair.indexOf("=");
      if (eq < 1) throw new UsageError(`--constraint expects KEY=JSON, got ${JSON.stringify(pair)}`);
      const key = pair.slice(0, eq);
      const text = pair.slice(eq + 1);
      if (text === "") throw new UsageError(`--constraint ${key}: no value (KEY=JSON)`);
      try {
        constraints[key] = JSON.parse(text);
      } catch {
        // A bare word is a string (framework=jest); anything that looks like JSON must be JSON.
        if (/^[[{"\d-]|^(true|false|null)$/.test(text))
          throw new UsageError(`--constraint ${key}: value is not JSON: ${text}`);
        constraints[key] = text;
      }
    }
    const timeout = int(flags.timeout, "timeout", 1);
    if (timeout !== undefined) constraints.timeout_ms = timeout;
    const sock = socketPath(flags.socket);
    let res;
    try {
      res = await invokeHttp(sock, { action: positionals[0], context, constraints }, (timeout ?? 30_000) + 5000);
    } catch (err) {
      console.error(
        `aip invoke: cannot reach the orchestrator on ${sock}: ${(err as Error).message} (is \`aip up\` running?)`,
      );
      return EXIT.aipError;
    }
    const env = res.json as { status: string; payload?: unknown; error?: Record<string, unknown> };
    if (flags.json) console.log(JSON.stringify(env, null, 2));
    else if (env.status === "success")
      console.log(typeof env.payload === "string" ? env.payload : JSON.stringify(env.payload, null, 2));
    if (env.status === "success") {
      const note = barrelNote(env.payload, context.workspace_root !== undefined);
      if (note) console.error(note);
    }
    if (env.status !== "success") {
      const e = env.error ?? {};
      const hint = flagHint(e as unknown as Problem);
      if (!flags.json)
        console.error(
          `${String(e.type)} (${String(e.status)}): ${String(e.detail)}\n  ${hint ? `aip invoke: ${hint}\n  ` : ""}suggestion: ${String(e.suggestion ?? "")}`,
        );
      return EXIT.aipError;
    }
    return EXIT.ok;
  },
};

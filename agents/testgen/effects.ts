/**
 * Side effects a generated test should not trigger (docs/agents.md, "testgen", "Which functions are
 * not called"), read from the code: the function's body and the functions and methods of the same
 * file it calls, three calls deep. A function that does any of these is left to a marked stub, never
 * called by the observation run:
 *
 * - the network: `fetch`, `XMLHttpRequest`, `WebSocket`, `EventSource`, anything imported from
 *   http, https, http2, net, tls, dgram, dns, undici, axios, got, node-fetch, ky, ws;
 * - writing files: fs / fs/promises writes (writeFile, appendFile, mkdir, rm, rmdir, unlink, rename,
 *   copyFile, cp, symlink, link, chmod, chown, truncate, utimes, createWriteStream, open), through
 *   a named import or the module's namespace (`fs.writeFileSync`);
 * - processes: anything from child_process, cluster or worker_threads; `process.exit`, `process.kill`,
 *   `process.abort`, `process.chdir`, `process.setuid`…;
 * - timers left running: `setInterval`, and `setTimeout` outside a `new Promise(…)` (a delay that is
 *   awaited ends; a timer started and returned does not).
 */
import type { TSESTree } from "@typescript-eslint/typescript-estree";
import type { Node, Program } from "../lib/code/parse.js";
import { walk } from "../lib/code/walk.js";

const NET_MODULES =
  /^(node:)?(http|https|http2|net|tls|dgram|dns|dns\/promises)$|^(undici|axios|got|node-fetch|ky|ws|cross-fetch|isomorphic-fetch|superagent)(\/.*)?$/;
const FS_MODULES = /^(node:)?fs(\/promises)?$|^fs-extra$|^graceful-fs$/;
const PROC_MODULES = /^(node:)?(child_process|cluster|worker_threads)$|^(execa|cross-spawn)$/;
export const FS_WRITES =
  /^(writeFile|appendFile|mkdir|mkdtemp|rm|rmdir|unlink|rename|copyFile|cp|symlink|link|chmod|chown|lchown|truncate|ftruncate|utimes|futimes|createWriteStream|open|write|writev|outputFile|outputJson|writeJson|remove|emptyDir|ensureDir|ensureFile|move|copy)(Sync)?$/;
const NET_GLOBALS = new Set(["fetch", "XMLHttpRequest", "WebSocket", "EventSource"]);
const PROCESS_CALLS = new Set(["exit", "kill", "abort", "chdir", "setuid", "setgid", "seteuid", "setegid", "umask"]);
/** Calls followed into the same file's functions, at most this deep. */
const MAX_DEPTH = 3;

export interface Effect {
  kind: "network" | "fs-write" | "process" | "timer";
  /** What was seen, for the stub's reason: "calls fetch", "fs.writeFileSync", "setInterval". */
  what: string;
  /** Where (1-based line of the file). */
  line: number;
}

type Any = TSESTree.Node;

/** The imported bindings of the file: local name → module specifier and imported name ("*" for namespaces and defaults). */
function importsOf(program: Program): Map<string, { from: string; name: string }> {
  const out = new Map<string, { from: string; name: string }>();
  for (const s of program.body) {
    if (s.type === "ImportDeclaration") {
      for (const sp of s.specifiers) {
        const name =
          sp.type === "ImportSpecifier"
            ? sp.imported.type === "Identifier"
              ? sp.imported.name
              : sp.imported.value
            : "*";
        out.set(sp.local.name, { from: s.source.value, name });
      }
    }
    // `const fs = require("fs")`, `const { writeFileSync } = require("node:fs")`.
    if (s.type === "VariableDeclaration")
      for (const d of s.declarations) {
        const init = d.init;
        if (
          init?.type === "CallExpression" &&
          init.callee.type === "Identifier" &&
          init.callee.name === "require" &&
          init.arguments[0]?.type === "Literal" &&
          typeof init.arguments[0].value === "string"
        ) {
          const from = init.arguments[0].value;
          if (d.id.type === "Identifier") out.set(d.id.name, { from, name: "*" });
          else if (d.id.type === "ObjectPattern")
            for (const p of d.id.properties)
              if (p.type === "Property" && p.key.type === "Identifier" && p.value.type === "Identifier")
                out.set(p.value.name, { from, name: p.key.name });
        }
      }
  }
  return out;
}

/** Top-level functions (and `const f = () => …`) and class methods of the file, by name. */
function localFunctions(program: Program): Map<string, Node[]> {
  const out = new Map<string, Node[]>();
  const add = (name: string, n: Node): void => {
    out.set(name, [...(out.get(name) ?? []), n]);
  };
  walk(program, (n) => {
    if (n.type === "FunctionDeclaration" && n.id) add(n.id.name, n);
    else if (
      n.type === "VariableDeclarator" &&
      n.id.type === "Identifier" &&
      (n.init?.type === "ArrowFunctionExpression" || n.init?.type === "FunctionExpression")
    )
      add(n.id.name, n.init);
    else if (n.type === "MethodDefinition" && n.key.type === "Identifier") add(n.key.name, n.value);
    else if (n.type === "ClassDeclaration" && n.id) add(n.id.name, n);
    return true;
  });
  return out;
}

/** The effects of `fn` (see the module comment); [] when none is seen. */
export function effectsOf(fn: Node, program: Program): Effect[] {
  const imports = importsOf(program);
  const locals = localFunctions(program);
  const out: Effect[] = [];
  const seenKinds = new Set<string>();
  const visited = new Set<Node>();
  const push = (e: Effect): void => {
    const k = `${e.kind} ${e.what}`;
    if (seenKinds.has(k)) return;
    seenKinds.add(k);
    out.push(e);
  };
  const visit = (root: Node, depth: number): void => {
    if (visited.has(root)) return;
    visited.add(root);
    const inPromise: Any[] = [];
    const parents = new Map<Any, Any | undefined>();
    const parentOf = (x: Any): Any | undefined => parents.get(x);
    walk(root, (n, parentNode) => {
      const a = n as Any;
      parents.set(a, parentNode as Any | undefined);
      const line = a.loc.start.line;
      if (a.type === "NewExpression" && a.callee.type === "Identifier" && a.callee.name === "Promise")
        inPromise.push(a);
      if (a.type === "Identifier" && NET_GLOBALS.has(a.name) && !imports.has(a.name) && !locals.has(a.name)) {
        const p = parentOf(a);
        const isKey = p?.type === "Property" && p.key === a && !p.computed;
        const isMember = p?.type === "MemberExpression" && p.property === a && !p.computed;
        if (!isKey && !isMember) push({ kind: "network", what: `uses ${a.name}`, line });
      }
      if (a.type === "Identifier" && imports.has(a.name)) {
        const imp = imports.get(a.name)!;
        const p = parentOf(a);
        const member =
          p?.type === "MemberExpression" && p.object === a && p.property.type === "Identifier"
            ? p.property.name
            : undefined;
        if (NET_MODULES.test(imp.from)) push({ kind: "network", what: `uses ${imp.from}`, line });
        else if (PROC_MODULES.test(imp.from)) push({ kind: "process", what: `uses ${imp.from}`, line });
        else if (FS_MODULES.test(imp.from)) {
          const used = imp.name === "*" ? member : imp.name;
          if (used !== undefined && FS_WRITES.test(used))
            push({ kind: "fs-write", what: `${imp.from.replace(/^node:/, "")}.${used}`, line });
          // `fs.promises.writeFile`
          if (member === "promises" && p?.type === "MemberExpression") {
            const pp = parentOf(p);
            if (
              pp?.type === "MemberExpression" &&
              pp.property.type === "Identifier" &&
              FS_WRITES.test(pp.property.name)
            )
              push({ kind: "fs-write", what: `fs.promises.${pp.property.name}`, line });
          }
        }
      }
      if (
        a.type === "MemberExpression" &&
        a.object.type === "Identifier" &&
        a.object.name === "process" &&
        a.property.type === "Identifier" &&
        PROCESS_CALLS.has(a.property.name)
      )
        push({ kind: "process", what: `process.${a.property.name}`, line });
      if (a.type === "CallExpression") {
        const c = a.callee;
        const name =
          c.type === "Identifier"
            ? c.name
            : c.type === "MemberExpression" &&
                c.property.type === "Identifier" &&
                (c.object.type === "ThisExpression" ||
                  (c.object.type === "Identifier" && (c.object.name === "globalThis" || c.object.name === "window")))
              ? c.property.name
              : undefined;
        if (name === "setInterval") push({ kind: "timer", what: "setInterval", line });
        else if (name === "setTimeout" && !inPromise.some((p) => p.range[0] <= a.range[0] && a.range[1] <= p.range[1]))
          push({ kind: "timer", what: "setTimeout (not awaited)", line });
        // Into the same file's functions and methods.
        if (name !== undefined && depth < MAX_DEPTH) for (const f of locals.get(name) ?? []) visit(f, depth + 1);
      }
      if (a.type === "NewExpression" && a.callee.type === "Identifier" && depth < MAX_DEPTH)
        for (const f of locals.get(a.callee.name) ?? []) visit(f, depth + 1);
      return true;
    });
  };
  visit(fn, 0);
  return out;
}

/** The stub's reason for the effects seen. */
export function effectReason(effects: Effect[]): string {
  const kinds: Record<Effect["kind"], string> = {
    network: "reaches the network",
    "fs-write": "writes files",
    process: "starts or ends processes",
    timer: "leaves a timer running",
  };
  const e = effects[0]!;
  return `not called: it ${kinds[e.kind]} (${e.what}, line ${e.line}); mock that, then assert the result`;
}

/**
 * The process's state that differs between machines and runs: the command line, the terminal, the
 * working directory; and a random source (an example's `shuffle([1, 2, 3]) // => [3, 1, 2]` was one draw).
 */
const ENV_MEMBERS =
  /^(?:process\.(argv|execArgv|cwd)|Math\.random|crypto\.(getRandomValues|randomUUID|randomInt|randomBytes))$/;

/**
 * What of its environment `fn` reads (and the functions of its file it calls, three calls deep):
 * `process.argv`, `process.cwd`, a stream's `isTTY`. Results its examples state are then the author's
 * command line and terminal, not something a test can pin. Undefined when it reads none of them.
 */
export function environmentOf(fn: Node, program: Program): string | undefined {
  const locals = localFunctions(program);
  const visited = new Set<Node>();
  let found: string | undefined;
  const visit = (root: Node, depth: number): void => {
    if (visited.has(root) || found !== undefined) return;
    visited.add(root);
    walk(root, (n) => {
      const a = n as Any;
      if (found !== undefined) return false;
      if (a.type === "MemberExpression" && a.property.type === "Identifier") {
        const what = a.object.type === "Identifier" ? `${a.object.name}.${a.property.name}` : undefined;
        if (what !== undefined && ENV_MEMBERS.test(what)) found = what;
        else if (a.property.name === "isTTY") found = "a stream's isTTY";
        else if (what === "Date.now") found = "the current time (Date.now)";
      }
      if (a.type === "NewExpression" && a.callee.type === "Identifier" && a.callee.name === "Date")
        if (a.arguments.length === 0) found = "the current time (new Date())";
      if (a.type === "CallExpression" && a.callee.type === "Identifier" && depth < MAX_DEPTH)
        for (const f of locals.get(a.callee.name) ?? []) visit(f, depth + 1);
      return true;
    });
  };
  visit(fn, 0);
  return found;
}

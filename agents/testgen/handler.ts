/** The testgen action: the function at the cursor (or named) → a formatted, parse-checked test file. */
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { format } from "prettier";
import { actionInput } from "../../protocol/actions.js";
import { AipError } from "../../protocol/errors.js";
import type { AipRequest } from "../../protocol/schemas.js";
import { ParseCache } from "../lib/code/cache.js";
import { dialectOf } from "../lib/code/language.js";
import {
  guardHandler,
  parseProgram,
  partialFields,
  reportDiagnostics,
  type Node,
  type Program,
} from "../lib/code/parse.js";
import { signatureOf } from "../lib/code/signature.js";
import { loadRequestSource } from "../lib/code/source.js";
import { readContained } from "../lib/code/workspace.js";
import type { HandlerContext } from "../lib/runtime/types.js";
import { testLocation, usesJsSuffix } from "./paths.js";
import { constructorArgs, renderTest, thrownBy, type Framework } from "./render.js";
import { targetAtCursor, targetByName } from "./target.js";

/** ESM packages (`"type": "module"`) import with `.js` suffixes; used when the source has no relative imports to copy. */
async function isEsmPackage(root: string | undefined): Promise<boolean> {
  if (root === undefined) return false;
  try {
    const pkg = await readContained(root, join(root, "package.json"), { maxBytes: 256 * 1024 });
    return (JSON.parse(pkg.text) as { type?: unknown }).type === "module";
  } catch {
    return false;
  }
}

async function isDir(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

/** Names exported by `export { a, b as c }` lists (local name → exported name). */
function exportedLocals(program: Program): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of program.body) {
    if (s.type === "ExportNamedDeclaration" && !s.source) {
      for (const sp of s.specifiers)
        if (sp.local.type === "Identifier" && sp.exported.type === "Identifier")
          out.set(sp.local.name, sp.exported.name);
    }
  }
  return out;
}

/** How the top-level declaration `decl` (a function, variable or class) is exported: its import name and default-ness. */
function exportOf(
  program: Program,
  top: Node | undefined,
  name: string,
): { name: string; isDefault: boolean } | undefined {
  const wrapper = program.body.find(
    (s) => top !== undefined && s.range[0] <= top.range[0] && top.range[1] <= s.range[1],
  );
  if (wrapper?.type === "ExportDefaultDeclaration") return { name, isDefault: true };
  if (wrapper?.type === "ExportNamedDeclaration") return { name, isDefault: false };
  const alias = exportedLocals(program).get(name);
  if (alias === "default") return { name, isDefault: true };
  return alias !== undefined ? { name: alias, isDefault: false } : undefined;
}

/** A prettier run to load its parsers before the first request. */
export async function warmPrettier(): Promise<void> {
  await format("const a = 1;\n", { parser: "typescript" });
  await format("const a = 1;\n", { parser: "babel" });
}

/** The testgen handler over a parse cache (one per process). */
export function createTestgen(cache = new ParseCache()) {
  return guardHandler(async (request: AipRequest, ctx: HandlerContext): Promise<unknown> => {
    const { constraints } = actionInput("testgen", request);
    const framework: Framework = constraints.framework ?? "vitest";
    const fnName = constraints.function;
    const testPathIn = constraints.test_path;
    const cursor = request.context.cursor;
    if (fnName === undefined && cursor === undefined) {
      throw new AipError(
        "AIP_ERR_MISSING_FIELD",
        "Missing required field: context.cursor (or name the function in constraints.function)",
        {
          extensions: { fields: ["context.cursor", "constraints.function"] },
        },
      );
    }
    const src = await loadRequestSource(request, cache);
    const { parsed } = src;
    ctx.timer.mark("parse");
    // Everything is read off the tree before the first await below (the cache may hand the tree on).
    const target = fnName !== undefined ? targetByName(parsed, fnName) : targetAtCursor(parsed, cursor!);
    const sig = signatureOf(target.slice, parsed.source);
    const ts = parsed.dialect.language === "typescript";
    const notes: string[] = [];
    const program = parsed.program;
    const topDecl = target.cls ?? target.slice.decl;
    const exportName = target.cls ? ((target.cls as { id?: { name: string } | null }).id?.name ?? "default") : sig.name;
    const exp = target.importable ? exportOf(program, topDecl, exportName) : undefined;
    const isPrivate =
      sig.name.startsWith("#") || /^(private|protected)\b/.test(sig.text.replace(/^(static|async|public)\s+/, ""));
    if (!target.importable)
      notes.push(
        `${sig.name} is local to another function; it cannot be imported. Test it through the function that contains it.`,
      );
    else if (!exp)
      notes.push(`${target.cls ? `class ${exportName}` : sig.name} is not exported; export it to test it directly.`);
    // An error reported right after the function (a missing `}` at the end of the file) is the function's too.
    let end = target.slice.range[1];
    while (end < parsed.source.length && /\s/.test(parsed.source[end]!)) end++;
    const broken = parsed.diagnostics.filter((d) => target.slice.range[0] <= d.start && d.start <= end);
    if (broken.length > 0) {
      const first = reportDiagnostics({ ...parsed, diagnostics: broken })[0]!;
      notes.push(
        `${sig.name} has a syntax error at line ${first.line} (${first.message}); the test is built from what parsed.`,
      );
    }
    if (isPrivate) notes.push(`${sig.name} is not public; test it through the public methods.`);
    const isStatic = target.slice.decl.type === "MethodDefinition" && target.slice.decl.static;
    const ctorArgs = target.cls ? constructorArgs(target.cls, parsed.source, ts) : [];
    const throws = thrownBy(target.slice.fn);
    const imports = program.body.flatMap((s) => (s.type === "ImportDeclaration" ? [s.source.value] : []));
    const mirror = src.root !== undefined && (await isDir(join(src.root, "test")));
    const loc = testLocation(src.displayPath ?? (ts ? "module.ts" : "module.js"), {
      mirrorUnderTest: mirror,
      jsSuffix: usesJsSuffix(imports) ?? (await isEsmPackage(src.root)),
      ...(testPathIn ? { testPath: testPathIn } : {}),
    });
    const importable = exp !== undefined && !isPrivate;
    const text = renderTest({
      sig,
      framework,
      ts,
      ...(importable ? { specifier: loc.specifier, importName: exp.name } : {}),
      defaultExport: exp?.isDefault ?? false,
      ctorArgs,
      isStatic,
      ...(throws !== undefined ? { throws } : {}),
      notes,
    });
    ctx.timer.mark("render");
    const testDialect = dialectOf(undefined, loc.test_path);
    let content: string;
    try {
      content = await format(text, {
        parser: testDialect.language === "typescript" ? "typescript" : "babel",
        printWidth: 100,
      });
      parseProgram(content, testDialect, loc.test_path);
    } catch (err) {
      throw new AipError(
        "AIP_ERR_SYNTAX",
        `The generated test for ${sig.name} does not parse: ${(err as Error).message.split("\n")[0]}`,
      );
    }
    ctx.timer.mark("format");
    return {
      test_path: loc.test_path,
      framework,
      content,
      signature: sig,
      import: importable ? { specifier: loc.specifier, name: exp.name, default: exp.isDefault } : null,
      notes,
      ...partialFields(parsed),
    };
  });
}

/**
 * The project files that the files a client has open import, directly or not (docs/agents.md,
 * "Type-aware completion"): what the typed engine's first program is made of. They are fetched before
 * that program is built, so that it is built once rather than once per level of imports (the service's
 * rounds learn one level per build). Only relative specifiers are followed here, resolved against the
 * project's listing in TypeScript's order (`candidatesFor` in resolve.ts: `./x.js` → `./x.ts`,
 * `./dir` → `./dir/index.ts`); packages and path aliases are left to the service's rounds, which fetch
 * whatever a build asks for.
 */
import { dirname, resolve } from "node:path";
import { candidatesFor } from "./resolve.js";
import { ts } from "./typescript.js";

/** Files fetched at once while the closure is walked. */
const PARALLEL = 16;

/** The project file a relative import of `from` names, if the listing `files` holds one. */
export function resolveRelative(from: string, spec: string, files: ReadonlySet<string>): string | undefined {
  if (!/^\.\.?(?:\/|$)/.test(spec)) return undefined;
  return candidatesFor(resolve(dirname(from), spec)).find((c) => files.has(c));
}

/**
 * Walk the imports from `open` through the project's files (`files`): each file's text comes from
 * `textOf`, after `fetch` when it is not held yet. Returns the files reached (`open` included).
 */
export async function importClosure(
  open: Iterable<string>,
  files: ReadonlySet<string>,
  textOf: (path: string) => string | undefined,
  fetch: (path: string) => Promise<void>,
): Promise<Set<string>> {
  const seen = new Set(open);
  const queue = [...seen];
  const visit = async (path: string): Promise<void> => {
    if (textOf(path) === undefined && files.has(path)) await fetch(path);
    const text = textOf(path);
    if (text === undefined) return;
    const info = ts.preProcessFile(text, true, false);
    for (const ref of [...info.importedFiles, ...info.referencedFiles]) {
      const target = resolveRelative(path, ref.fileName, files);
      if (target !== undefined && !seen.has(target)) {
        seen.add(target);
        queue.push(target);
      }
    }
  };
  let active = 0;
  await new Promise<void>((done) => {
    const pump = (): void => {
      while (active < PARALLEL && queue.length > 0) {
        active++;
        void visit(queue.shift()!)
          .catch(() => undefined)
          .finally(() => {
            active--;
            pump();
          });
      }
      if (active === 0 && queue.length === 0) done();
    };
    pump();
  });
  return seen;
}

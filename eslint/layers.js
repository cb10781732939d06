/**
 * The layer rule (docs/architecture.md): each folder may import only from the layers below it.
 *   protocol/contract/      nothing of ours but protocol/contract/ (the contract stands alone)
 *   protocol/util/          nothing of ours but protocol/util/
 *   protocol/transport/     protocol/
 *   agents/lib/             protocol/ and agents/lib/
 *   agents/<name>/          protocol/, agents/lib/ and its own folder (never a sibling agent)
 *   orchestrator/pool/      protocol/ and orchestrator/pool/
 *   orchestrator/core/      protocol/, orchestrator/pool/ and orchestrator/core/
 *   orchestrator/request/   protocol/, orchestrator/{pool,core,request}/
 *   orchestrator/lifecycle/ protocol/, orchestrator/{pool,core,request,lifecycle}/
 *   orchestrator/*.ts       protocol/ and orchestrator/ (the composition root; no subfolder imports it)
 *   test/, bench/    anything but dist/ and scripts/ (they run built executables as processes instead)
 *   scripts/, tools/ anything
 * Relative specifiers are resolved against the importing file; package imports are not ours.
 */
import { dirname, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

/** The orchestrator's folders, lowest first: each may import the ones before it, never its parent's files. */
const ORCHESTRATOR_LAYERS = ["pool", "core", "request", "lifecycle"];

/** The layer a repository-relative path belongs to, with the folders it may import from (undefined: anything). */
export function layerOf(rel) {
  if (rel.startsWith("protocol/contract/")) return { name: "protocol/contract", may: ["protocol/contract/"] };
  if (rel.startsWith("protocol/util/")) return { name: "protocol/util", may: ["protocol/util/"] };
  if (rel.startsWith("protocol/")) return { name: "protocol", may: ["protocol/"] };
  if (rel.startsWith("agents/lib/")) return { name: "agents/lib", may: ["protocol/", "agents/lib/"] };
  const agent = /^agents\/([^/]+)\//.exec(rel);
  if (agent) return { name: `agents/${agent[1]}`, may: ["protocol/", "agents/lib/", `agents/${agent[1]}/`] };
  const below = ORCHESTRATOR_LAYERS.findIndex((l) => rel.startsWith(`orchestrator/${l}/`));
  if (below >= 0)
    return {
      name: `orchestrator/${ORCHESTRATOR_LAYERS[below]}`,
      may: ["protocol/", ...ORCHESTRATOR_LAYERS.slice(0, below + 1).map((l) => `orchestrator/${l}/`)],
    };
  if (rel.startsWith("orchestrator/")) return { name: "orchestrator", may: ["protocol/", "orchestrator/"] };
  if (rel.startsWith("test/") || rel.startsWith("bench/"))
    return { name: rel.split("/")[0], mayNot: ["dist/", "scripts/"] };
  return undefined;
}

/** Why importing `target` (repository-relative) from a file in `layer` is not allowed, or undefined. */
export function violation(layer, target) {
  if (target.startsWith("../")) return `${layer.name} imports ${target}, outside the repository`;
  if (layer.may && !layer.may.some((p) => target.startsWith(p)))
    return `${layer.name} may import only from ${layer.may.join(", ")}; ${target} is not one of them`;
  if (layer.mayNot) {
    const hit = layer.mayNot.find((p) => target.startsWith(p));
    if (hit) return `${layer.name} may not import from ${hit} (${target})`;
  }
  return undefined;
}

const importsDown = {
  meta: {
    type: "problem",
    docs: { description: "Imports follow the layers of docs/architecture.md" },
    schema: [{ type: "object", properties: { root: { type: "string" } }, additionalProperties: false }],
  },
  create(context) {
    const root = context.options[0]?.root ?? ROOT;
    const file = context.physicalFilename ?? context.filename;
    const layer = layerOf(relative(root, file).split("\\").join("/"));
    if (!layer) return {};
    const check = (node, source) => {
      if (typeof source !== "string" || !source.startsWith(".")) return;
      const target = relative(root, resolve(dirname(file), source))
        .split("\\")
        .join("/");
      const why = violation(layer, target);
      if (why) context.report({ node, message: why });
    };
    return {
      ImportDeclaration: (node) => check(node.source, node.source.value),
      ExportNamedDeclaration: (node) => node.source && check(node.source, node.source.value),
      ExportAllDeclaration: (node) => check(node.source, node.source.value),
      ImportExpression: (node) => node.source.type === "Literal" && check(node.source, node.source.value),
      TSImportType: (node) => {
        const arg = node.argument;
        const lit = arg?.type === "TSLiteralType" ? arg.literal : arg;
        if (lit?.type === "Literal") check(lit, lit.value);
      },
    };
  },
};

export default { rules: { "imports-down": importsDown } };

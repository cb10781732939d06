/** `npm run schema`: write protocol/schema.json and protocol/openapi.json from protocol/published.ts (a test keeps them equal). */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { openApiDocument, schemaDocument } from "../protocol/published.js";

/** The committed files' text: 2-space JSON and a final newline. */
export function publishedFiles(): Record<string, string> {
  return {
    "protocol/schema.json": `${JSON.stringify(schemaDocument(), null, 2)}\n`,
    "protocol/openapi.json": `${JSON.stringify(openApiDocument(), null, 2)}\n`,
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("../..", import.meta.url));
  for (const [path, text] of Object.entries(publishedFiles())) {
    writeFileSync(`${root}${path}`, text);
    console.log(`wrote ${path}`);
  }
}

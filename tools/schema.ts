/** The published contract files (`npm run schema` writes them): protocol/schema.json and protocol/openapi.json from protocol/published.ts (a test keeps them equal). */
import { openApiDocument, schemaDocument } from "../protocol/published.js";

/** The committed files' text: 2-space JSON and a final newline. */
export function publishedFiles(): Record<string, string> {
  return {
    "protocol/schema.json": `${JSON.stringify(schemaDocument(), null, 2)}\n`,
    "protocol/openapi.json": `${JSON.stringify(openApiDocument(), null, 2)}\n`,
  };
}

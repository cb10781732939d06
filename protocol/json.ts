/** Strict JSON decoding for untrusted input: UTF-8 validity, size and nesting limits before JSON.parse. */
import { AipError } from "./errors.js";

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** Deepest nesting of objects/arrays in a JSON text, stopping early once `limit` is passed. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Only JSON whitespace (or nothing): looks at the text up to its first other character, never copies it. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return false;
  }
  return true;
}

/** Decode one JSON document from bytes; every failure is an AIP_ERR_INVALID_JSON with a reason. */
export function decodeJson(bytes: Uint8Array, maxDepth: number): unknown {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new AipError("AIP_ERR_INVALID_JSON", "Request is not valid UTF-8");
  }
  if (isBlank(text)) throw new AipError("AIP_ERR_INVALID_JSON", "Request is empty: expected one JSON object");
  if (jsonDepthExceeds(text, maxDepth)) {
    throw new AipError("AIP_ERR_INVALID_JSON", `JSON nesting is deeper than the limit of ${maxDepth}`, {
      extensions: { limit: maxDepth },
    });
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new AipError("AIP_ERR_INVALID_JSON", `JSON parse failed: ${(err as Error).message}`);
  }
}

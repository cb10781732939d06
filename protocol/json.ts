/** Strict JSON decoding for untrusted input: UTF-8 validity, size and nesting limits before JSON.parse. */
import { isUtf8 } from "node:buffer";
import { AipError } from "./errors.js";

/**
 * Deepest nesting of objects/arrays in a JSON text, stopping early once `limit` is passed. Strings are
 * skipped from quote to quote (indexOf), not character by character: a request that is mostly one
 * large string (a source file) costs almost nothing here (docs/performance.md).
 */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // The string ends at the next quote preceded by an even number of backslashes.
      let q = i;
      for (;;) {
        q = text.indexOf('"', q + 1);
        if (q === -1) return false; // unterminated: JSON.parse says so
        let b = q - 1;
        while (text.charCodeAt(b) === 0x5c) b--;
        if ((q - 1 - b) % 2 === 0) break;
      }
      i = q;
    } else if (c === 0x7b || c === 0x5b) {
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
  // Validate first (simdutf, no copy), then decode: faster than a fatal TextDecoder on large requests.
  if (!isUtf8(bytes)) throw new AipError("AIP_ERR_INVALID_JSON", "Request is not valid UTF-8");
  let text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // a byte order mark is not part of the JSON
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

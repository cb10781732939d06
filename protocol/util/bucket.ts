/**
 * The canary bucket of a trace id, so any client can predict where a request lands:
 * bucket = FNV-1a 32-bit hash of the trace id's UTF-8 bytes, mod 100.
 * A request goes to the canary when bucket < percent.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a, 32-bit, over the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let hash = FNV_OFFSET;
  // Trace ids are ASCII (TRACE_ID_PATTERN): their UTF-8 bytes are their char codes, no buffer needed.
  let ascii = true;
  for (let i = 0; i < text.length && ascii; i++) ascii = text.charCodeAt(i) < 0x80;
  if (ascii) {
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, FNV_PRIME) >>> 0;
    }
    return hash >>> 0;
  }
  for (const byte of Buffer.from(text, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, FNV_PRIME) >>> 0;
  }
  return hash >>> 0;
}

/** 0-99: the trace id's bucket. */
export function canaryBucket(traceId: string): number {
  return fnv1a32(traceId) % 100;
}

/** True when a request with this trace id goes to a canary taking `percent` of traffic. */
export function goesToCanary(traceId: string, percent: number): boolean {
  return canaryBucket(traceId) < percent;
}

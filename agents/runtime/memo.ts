/**
 * Bounded memos keyed by text. V8 represents `source.slice(a, b)` as a view into `source`, so a short
 * key cut from a request's buffer keeps the whole buffer alive for as long as the key is stored:
 * a per-line token-count memo held every keystroke's 65 KB buffer (140 KB of heap per request, found
 * by a heap-growth test). Keys and long-lived strings are copied with `detach` first.
 */

/** A copy of `text` that does not keep the string it was cut from alive. */
export function detach(text: string): string {
  return text.length < 13 ? text : (" " + text).slice(1);
}

/** A memo of at most `max` entries keyed by text, least recently used dropped first. */
export class TextMemo<V> {
  /** Values with the detached copy of their key (a hit re-inserts that copy, never the caller's string). */
  private readonly map = new Map<string, { key: string; value: V }>();

  constructor(private readonly max: number) {}

  get size(): number {
    return this.map.size;
  }

  /** The value for `key`, computed by `compute` (and remembered) when absent. */
  get(key: string, compute: (key: string) => V): V {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      this.map.delete(hit.key);
      this.map.set(hit.key, hit);
      return hit.value;
    }
    const value = compute(key);
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
    const own = detach(key);
    this.map.set(own, { key: own, value });
    return value;
  }
}

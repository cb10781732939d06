/**
 * Bounded memos keyed by text. V8 represents `source.slice(a, b)` as a view into `source`, so a short
 * key cut from a request's buffer keeps the whole buffer alive for as long as the key is stored:
 * a per-line token-count memo held every keystroke's whole buffer (found by a heap-growth test). Keys and long-lived strings are copied with `detach` first.
 */

/** A copy of `text` that does not keep the string it was cut from alive. */
export function detach(text: string): string {
  return text.length < 13 ? text : (" " + text).slice(1);
}

/**
 * A memo of at most `max` entries keyed by text; the entry used longest ago is dropped first, where
 * "used" counts a hit only once the entry is in the older half of the memo: moving an entry to the
 * young end on every hit (a Map delete and set) is a visible cost for the hundreds of per-line
 * token counts of a prompt, and an entry that recent is not the next to go anyway.
 */
export class TextMemo<V> {
  /** Values with the detached copy of their key (a hit re-inserts that copy, never the caller's string) and when they were (re)inserted. */
  private readonly map = new Map<string, { key: string; value: V; stamp: number }>();
  private stamp = 0;

  constructor(private readonly max: number) {}

  get size(): number {
    return this.map.size;
  }

  /** The value for `key`, computed by `compute` (and remembered) when absent. */
  get(key: string, compute: (key: string) => V): V {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      if (this.stamp - hit.stamp > this.max / 2) {
        this.map.delete(hit.key);
        hit.stamp = ++this.stamp;
        this.map.set(hit.key, hit);
      }
      return hit.value;
    }
    const value = compute(key);
    if (this.map.size >= this.max) this.map.delete(this.map.keys().next().value as string);
    const own = detach(key);
    this.map.set(own, { key: own, value, stamp: ++this.stamp });
    return value;
  }
}

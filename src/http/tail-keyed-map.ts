// A bounded map keyed by long credentials (a bearer token is some 800 characters). V8 hashes a
// string key in full the first time each string object is looked up, and every request brings
// new ones: ~1 µs per lookup for a token. This one hashes the key's tail alone (a JWT's
// signature) and compares the whole key on a hit, so a key that shares a tail is simply not found.

/** Enough of a base64url signature to tell tokens apart: 192 bits. */
const TAIL_LENGTH = 32;

const tailOf = (key: string): string => (key.length <= TAIL_LENGTH ? key : key.slice(-TAIL_LENGTH));

export class TailKeyedMap<V> {
  readonly #entries = new Map<string, { key: string; value: V }>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(tailOf(key));
    return entry?.key === key ? entry.value : undefined;
  }

  /** Stores value under key; when full, the oldest entry goes first. */
  set(key: string, value: V): void {
    const tail = tailOf(key);
    if (!this.#entries.has(tail) && this.#entries.size >= this.#limit) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(tail, { key, value });
  }
}

/**
 * The deepest nesting of objects/arrays in a JSON text, strings skipped: one linear pass, so a
 * text can be refused before JSON.parse recurses into it. The request body guard, batch-job
 * lines and the json verifier all measure with it.
 */
const QUOTE = 0x22, BACKSLASH = 0x5c, OPEN_OBJ = 0x7b, OPEN_ARR = 0x5b, CLOSE_OBJ = 0x7d, CLOSE_ARR = 0x5d;

/** Stops counting, and returns, as soon as the depth passes `stopAt`. */
export function jsonDepth(text: Uint8Array | string, stopAt = Infinity): number {
  // UTF-8 bytes: every delimiter is ASCII, and no byte of a multi-byte character is one.
  const buf = typeof text === "string" ? Buffer.from(text, "utf8") : Buffer.isBuffer(text) ? text : Buffer.from(text.buffer, text.byteOffset, text.length);
  const n = buf.length;
  let depth = 0, max = 0;
  for (let i = 0; i < n; i++) {
    const c = buf[i];
    if (c === QUOTE) i = stringEnd(buf, i, n);
    else if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (++depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) depth--;
  }
  return max;
}

/** Bytes of a string read one by one before the rest is searched natively. */
const SHORT_STRING = 64;

/**
 * The index of the quote that closes the string opened at `open` (n when it is unterminated).
 * Stretches of SHORT_STRING bytes are read one by one (keys and short values end there: a
 * native call costs more than they do); past a stretch with no quote in it, the rest is searched
 * with indexOf (memchr), so a 1 MiB completion costs microseconds, not a JavaScript step per
 * byte. A quote found that way closes the string when an even run of backslashes precedes it;
 * an escaped one goes back to reading by the byte, so text dense with escaped quotes costs one
 * native call per stretch at most, never one per quote.
 */
function stringEnd(buf: Buffer, open: number, n: number): number {
  let i = open + 1;
  for (;;) {
    for (const stop = Math.min(n, i + SHORT_STRING); i < stop; i++) {
      const c = buf[i];
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) return i;
    }
    // From i on nothing is pending: an escape begun on the last byte read took its second byte.
    const q = buf.indexOf(QUOTE, i);
    if (q < 0) return n;
    let b = q - 1;
    while (b >= i && buf[b] === BACKSLASH) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    i = q + 1;
  }
}

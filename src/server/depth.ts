/**
 * Refuses JSON nested deeper than a limit before it is parsed. One linear pass over the bytes,
 * skipping strings; it runs in body-parser's `verify` hook, so nothing deep reaches a handler.
 */
import { HttpError } from "./errors.js";

const QUOTE = 0x22, BACKSLASH = 0x5c, OPEN_OBJ = 0x7b, OPEN_ARR = 0x5b, CLOSE_OBJ = 0x7d, CLOSE_ARR = 0x5d;

/** The deepest nesting of objects/arrays in a JSON text (strings skipped). */
export function jsonDepth(buf: Uint8Array, stopAt = Infinity): number {
  let depth = 0, max = 0, inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_OBJ || c === OPEN_ARR) {
      if (++depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (c === CLOSE_OBJ || c === CLOSE_ARR) depth--;
  }
  return max;
}

export function depthGuard(maxDepth: number) {
  return (_req: unknown, _res: unknown, buf: Buffer) => {
    if (jsonDepth(buf, maxDepth) > maxDepth) {
      throw new HttpError(400, `request JSON is nested deeper than ${maxDepth} levels; flatten it (or raise ASSAY_MAX_DEPTH)`);
    }
  };
}

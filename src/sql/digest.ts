/**
 * The comparison keys of a result's values and rows (verifiers/sql/compare.ts compares with
 * them), and a result's digest: one hash of its rows as the comparison sees them, so the SQLite
 * process can tell a model result that equals the gold's without sending its rows back (issue 35:
 * deserialising and keying every row on the server's event loop cost more than the query on
 * Spider-sized databases). Used on both sides: the server digests the gold's cached rows, the
 * SQLite process the model's, with the same functions.
 */
import { hash } from "node:crypto";
import { bigIntDigits, type Cell } from "./types.js";

/** 2^53: every double at or past it is an integer, written here by its exact digits. */
const EXACT_FROM = 2 ** 53;

/**
 * A value's exact comparison key: equal keys exactly when the values are equal. Integers compare
 * exactly, as Python compares int and float: an integer beyond 2^53 (an exact INT_TAG cell) and
 * a double are written by their exact digits, so 2^63-1 differs from the double 2^63 and from
 * 2^63-2, and 2^62 as an integer equals 2^62 as a real; 1 and 1.0 are one number. A string that
 * starts with NUL is a tag (types.ts: INT_TAG, BLOB_TAG, TEXT_TAG), any other a text. Numbers are
 * never rounded here: the comparison's float tolerance (verifiers/sql/compare.ts, float_digits)
 * maps a model's number onto a gold number within it before keying, and a digest is exact, so
 * equal digests always mean a match and a tolerance match is found by the comparison on the rows.
 */
export function cellKey(c: Cell): string {
  if (c === null) return "N";
  if (typeof c === "number") {
    if (Number.isFinite(c) && Math.abs(c) >= EXACT_FROM) return `n${BigInt(c)}`;
    return `n${c === 0 ? 0 : c}`;
  }
  const digits = bigIntDigits(c);
  return digits === null ? `s${c}` : `n${digits}`;
}

/** Row key from cell keys, in the order given by `perm` (length-prefixed, so no separator can collide). */
export function rowKey(keys: string[], perm: number[] | null): string {
  let s = "";
  const n = keys.length;
  for (let i = 0; i < n; i++) {
    const k = keys[perm ? perm[i] : i];
    s += `${k.length}:${k}`;
  }
  return s;
}

/**
 * What a digest is taken under: the comparison's row rule (columns as they come). Values are
 * keyed exactly (cellKey), whatever the comparison's float_digits: a result equal to the gold's
 * only within that tolerance has another digest, and comes back with its rows to be compared.
 */
export interface DigestRule {
  /** "bag": duplicates count; "set": they do not. */
  rows: "bag" | "set";
  /** Rows in their order (else as a multiset, or a set). */
  ordered: boolean;
}

/**
 * A hash of `rows` under `rule`: two results have the same digest exactly when the comparison's
 * first pass (columns in their own order) calls them equal with no float tolerance (float_digits
 * 0), and so equal under any: the same row keys in the same order
 * (ordered), the same multiset of row keys (bag), the same set (set); two empty results have the
 * same digest whatever their columns, as the comparison says. The row keys, sorted unless
 * ordered (and made distinct for a set), are hashed with SHA-256 length-prefixed, so equal
 * digests mean equal keys short of a SHA-256 collision. O(cells + rows log rows).
 */
export function resultDigest(rows: readonly Cell[][], rule: DigestRule): string {
  const n = rows.length;
  let keys = new Array<string>(n);
  for (let i = 0; i < n; i++) {
    const r = rows[i];
    let s = "";
    for (let c = 0; c < r.length; c++) {
      const k = cellKey(r[c]);
      s += `${k.length}:${k}`;
    }
    keys[i] = s;
  }
  if (!rule.ordered) {
    keys.sort();
    if (rule.rows === "set") keys = keys.filter((k, i) => i === 0 || k !== keys[i - 1]);
  }
  // one string hashed at once (crypto.hash): the same bytes as one update a key, without a
  // call into the hash per row (issue 35). Every piece starts with an ASCII digit, so no
  // surrogate pair can form across two pieces and the UTF-8 is that of the pieces one by one.
  let text = `${rule.ordered ? "ordered" : rule.rows} ${keys.length}\n`;
  for (const k of keys) text += `${k.length}:${k}`;
  return hash("sha256", text, "base64");
}

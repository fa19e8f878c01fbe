import { test } from "node:test";
import assert from "node:assert/strict";
import { jsonDepth } from "./json-depth.js";

/** The byte-at-a-time definition the fast scan must agree with. */
function naive(text: string | Buffer, stopAt = Infinity): number {
  const buf = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  let depth = 0, max = 0, inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) {
        max = depth;
        if (max > stopAt) return max;
      }
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

test("strings are skipped: brackets, escaped quotes and backslash runs inside them do not count", () => {
  assert.equal(jsonDepth('{"a":"[[[{{{"}'), 1);
  assert.equal(jsonDepth('{"a":"\\"[[[\\""}'), 1);
  assert.equal(jsonDepth('{"a":"\\\\"}'), 1);
  assert.equal(jsonDepth('{"a":"\\\\\\"[[\\"","b":1}'), 1); // \\ and \" keep [[ inside the string
  assert.equal(jsonDepth('{"a":"\\\\","b":[[1]]}'), 3);
  assert.equal(jsonDepth('[[["unterminated [[[['), 3);
  assert.equal(jsonDepth(JSON.stringify({ x: [{ y: ["é\"]\\", [[["ü"]]]] }] })), 7);
  assert.equal(jsonDepth(new TextEncoder().encode('[[{"k":"}}"}]]')), 3);
});

test("agrees with the byte-at-a-time scan on random texts of quotes, backslashes and brackets", () => {
  // Strings longer than the byte-at-a-time stretch (64 bytes) too: long runs of plain text, with
  // backslash runs and quotes at and around the switch to the native search.
  const alphabet = ['"', "\\", "\\\\\\", "[", "]", "{", "}", "a", ",", "é", "a".repeat(30), "a".repeat(61)];
  let seed = 7;
  const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) % n);
  for (let k = 0; k < 40_000; k++) {
    let s = "";
    for (let n = rnd(k % 2 ? 40 : 12); n > 0; n--) s += alphabet[rnd(alphabet.length)];
    const stop = rnd(3) === 0 ? rnd(4) : Infinity;
    assert.equal(jsonDepth(s, stop), naive(s, stop), JSON.stringify([s, stop]));
  }
});

test("escapes at every offset around the switch to the native search agree with the byte-at-a-time scan", () => {
  for (let k = 0; k < 140; k++) {
    for (const esc of ['\\"', '\\\\"', '\\\\\\"', '\\\\\\\\"', "\\\\", "\\a"]) {
      const s = `{"${"a".repeat(k)}${esc}[[{"x":"${"b".repeat(k)}\\"]"}]]}`;
      assert.equal(jsonDepth(s), naive(s), JSON.stringify(s));
    }
  }
});

test("stops as soon as the depth passes stopAt", () => {
  assert.equal(jsonDepth("[".repeat(1000), 64), 65);
});

test("a 1 MiB string costs far less than a JavaScript step per byte", () => {
  const body = Buffer.from(JSON.stringify({ response: "a\n".repeat(512 * 1024), reference: "\\".repeat(1000) }));
  const t = (f: () => unknown) => { const t0 = performance.now(); for (let i = 0; i < 5; i++) f(); return (performance.now() - t0) / 5; };
  t(() => jsonDepth(body)), t(() => naive(body));
  const fast = t(() => jsonDepth(body)), slow = t(() => naive(body));
  assert.equal(jsonDepth(body), 1);
  assert.ok(fast * 5 < slow, `fast scan ${fast.toFixed(2)} ms against ${slow.toFixed(2)} ms byte by byte`);
});

test("hostile strings (dense escaped quotes, backslash runs, a quote after every stretch) cost no more than the byte-at-a-time scan", () => {
  const mib = 1024 * 1024;
  const shapes: [string, string][] = [
    ["escaped quotes", '\\"'.repeat(mib / 2)],
    ["a backslash run", "\\\\".repeat(mib / 2)],
    ["escaped backslash then escaped quote", '\\\\\\"'.repeat(mib / 4)],
    ["an escaped quote after every 64 bytes", ("a".repeat(64) + '\\"').repeat(mib / 66)],
  ];
  const t = (f: () => unknown) => { const t0 = performance.now(); for (let i = 0; i < 5; i++) f(); return (performance.now() - t0) / 5; };
  for (const [name, inner] of shapes) {
    const body = Buffer.from(`{"response":"${inner}","k":[[1]]}`);
    assert.equal(jsonDepth(body), naive(body), name);
    t(() => jsonDepth(body)), t(() => naive(body));
    const fast = t(() => jsonDepth(body)), slow = t(() => naive(body));
    assert.ok(fast < 2 * slow + 1, `${name}: ${fast.toFixed(2)} ms against ${slow.toFixed(2)} ms byte by byte`);
  }
});

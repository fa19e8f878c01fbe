/**
 * Hostile JavaScript in the js backend: each is the program's fault and ends with the program's
 * status (never sandbox_error, which would make its item null), and a correct run right after
 * still works.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { openJs } from "./index.js";

const { sandbox: js, note } = await openJs();
const LIMITS = { wallMs: 2000, cpuMs: 1000, memoryMb: 128 };
const run = (code: string) => js!.run({ language: "javascript", code, limits: LIMITS });

async function correctAfter() {
  const r = await run("console.log(6 * 7)");
  assert.equal(r.status, "finished");
  assert.equal(r.stdout, "42\n");
}

test("WebAssembly is not there: a 4 GiB WebAssembly.Memory cannot land in the server", { skip: js ? false : note }, async () => {
  const r = await run("const m = new WebAssembly.Memory({ initial: 65536 }); console.log(m.buffer.byteLength)");
  assert.equal(r.status, "finished");
  assert.notEqual(r.exitCode, 0);
  assert.match(r.stderr, /WebAssembly is not defined/);
  await correctAfter();
});

test("no buffer grows after it is made: a resizable ArrayBuffer's growth is outside the memory limit", { skip: js ? false : note }, async () => {
  for (const code of [
    "const b = new ArrayBuffer(1, { maxByteLength: 2 ** 32 }); b.resize(2 ** 30); console.log(b.byteLength)",
    "console.log(new ArrayBuffer(8).transfer(2 ** 30).byteLength)",
  ]) {
    const r = await run(code);
    assert.equal(r.status, "finished", code);
    assert.notEqual(r.exitCode, 0, code);
    assert.match(r.stderr, /is not a function/, code);
  }
  await correctAfter();
});

test("prototype overrides inside the isolate cannot break the result", { skip: js ? false : note }, async () => {
  for (const code of [
    "Object.prototype.toJSON = () => 'pwned'; console.log('ok')",
    "Array.prototype.toJSON = () => 1; JSON.stringify = () => '{}'; console.log('ok')",
    "Object.defineProperty(Array.prototype, 0, { get() { throw new Error('x') } }); console.log('ok')",
  ]) {
    const r = await run(code);
    assert.notEqual(r.status, "sandbox_error", `${code}: ${r.message}`);
    if (r.status === "finished") assert.equal(r.stdout, "ok\n");
  }
  await correctAfter();
});

test("a run that ignores termination is a time limit, not a hang", { skip: js ? false : note }, async () => {
  const t0 = Date.now();
  const r = await js!.run({ language: "javascript", code: "const a = new Float64Array(6e6); for (let i = 0; i < a.length; i++) a[i] = Math.random(); for (;;) a.sort();", limits: { wallMs: 500, cpuMs: 500, memoryMb: 256 } });
  assert.equal(r.status, "time_limit");
  assert.ok(Date.now() - t0 < 10_000);
  await correctAfter();
});

test("a lone UTF-16 surrogate in the program is the program's text, not a machinery failure", { skip: js ? false : note }, async () => {
  const r = await run("// \ud800 stray\nconsole.log('fine')");
  assert.equal(r.status, "finished");
  assert.equal(r.stdout, "fine\n");
});

// What Node itself prints for these calls is the expected output: the isolate's console follows
// util.inspect's rules for the values programs print, printf-style formats, table, group, count.
const CONSOLE_CASES = [
  "console.table([{a:1,b:'x'},{a:22}]); console.table({r1:{c:1}, r2:{c:2}}); console.table([1,'two']);",
  "console.log([1,'a',{b:[1,{c:{d:1}}]}], new Map([['a',1]]), new Set([1]), null, undefined, -0, 10n, function f(){}, class A{}, Symbol('s'));",
  "class P{constructor(){this.x=1}}; console.log(new P(), [], {}, 'a%sb', 3);",
  "console.log('%s=%d %i %f %j %o %O %%', 'x', 4.5, 4.5, '2.5', {a:1}, {b:2}, {b:2});",
  "console.dir('s'); console.dir({a:{b:{c:{d:1}}}});",
  "console.group('G'); console.log('in'); console.group(); console.log('in2\\nx'); console.groupEnd(); console.groupEnd(); console.log('out');",
  "console.count(); console.count(); console.count('k'); console.countReset(); console.count();",
  "console.info([undefined, null, \"it's\"]); console.debug({ 'a-b': 1, c: 'x\\ny' });",
  "console.log([ , 1], new Array(3), [[[[1]]]], {a:[{b:{c:1}}]});",
  "console.log({long: 'aaaaaaaaaaaaaaaaaaaaaaaa', longer: 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb', z: [1, 2]});",
  "console.log(true, 1.5, NaN, Infinity, '', [''], 'x', '%s', Object.create(null));",
  "console.log(new Number(3), [1, 2, 3].map(String), {f(){}, g: () => 1});",
  "console.log('%c styled', 'color: red', 'tail'); console.log('%d', '42abc'); console.log('%i', 42.9);",
  "console.log([true, false], {x: undefined}, [null]);",
  "console.error('to %s', 'stderr', [1]); console.warn({w: 1});",
];

test("console prints what Node's console prints", { skip: js ? false : note }, async () => {
  const { spawnSync } = await import("node:child_process");
  // One Node process for every case (a process each is slow on a loaded host): each case's
  // output is framed by markers written straight to the streams.
  const mark = (i: number) => `\n@@case ${i}@@\n`;
  const script = CONSOLE_CASES.map((src, i) => `process.stdout.write(${JSON.stringify(mark(i))}); process.stderr.write(${JSON.stringify(mark(i))});\n{ ${src} }`).join("\n");
  const node = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
  const part = (text: string, i: number) => text.split(mark(i))[1].split(mark(i + 1))[0];
  for (const [i, src] of CONSOLE_CASES.entries()) {
    const r = await run(src);
    assert.equal(r.status, "finished", src);
    assert.equal(r.stdout, part(node.stdout, i), src);
    assert.equal(r.stderr, part(node.stderr, i), src);
  }
});

test("console.assert prints as Node's does and goes on; the failing line follows; console cannot be swapped", { skip: js ? false : note }, async () => {
  const r = await run("console.assert(1 === 1, 'fine');\nconsole.assert(2 + 2 === 5, 'math is %s', 'broken');\nconsole.assert(false);\nconsole.log('after')");
  assert.equal(r.status, "finished");
  assert.equal(r.exitCode, 0);
  assert.equal(r.stdout, "after\n");
  const lines = r.stderr.split("\n");
  assert.equal(lines[0], "Assertion failed: math is broken");
  assert.match(lines[1], /^\s+at .*<anonymous>:2:\d+\)$/);
  assert.equal(lines[2], "Assertion failed");
  const swap = await run("console.assert = () => {}; console = { assert() {} }; console.assert(false, 'still seen')");
  assert.match(swap.stderr, /Assertion failed: still seen/);
});

test("Node's event-driven stdin idioms read the whole stdin: process.stdin.on('data'/'end'), readline's 'line'/'close'", { skip: js ? false : note }, async () => {
  // Before, both failed ("module readline is not available", process.stdin undefined): a right
  // program that reads its input the way most Node solutions do scored 0.
  const withStdin = (code: string, stdin: string) => js!.run({ language: "javascript", code, stdin, limits: LIMITS });
  const rl = "const rl = require('readline').createInterface({ input: process.stdin });\nconst got = [];\nrl.on('line', (l) => got.push(l));\nrl.on('close', () => console.log(got.map(Number).reduce((a, b) => a + b, 0), got.length));";
  for (const [stdin, want] of [["1\n2\n3\n", "6 3\n"], ["1\r\n2\r\n3", "6 3\n"], ["", "0 0\n"]] as const) {
    const r = await withStdin(rl, stdin);
    assert.equal(r.exitCode, 0, r.stderr);
    assert.equal(r.stdout, want, JSON.stringify(stdin));
  }
  const data = "let input = '';\nprocess.stdin.setEncoding('utf8');\nprocess.stdin.on('data', (c) => { input += c; });\nprocess.stdin.on('end', () => { const [a, b] = input.trim().split(/\\s+/).map(Number); console.log(a + b); });";
  const r = await withStdin(data, "3 4\n");
  assert.equal(r.exitCode, 0, r.stderr);
  assert.equal(r.stdout, "7\n");
  // an exit or a throw in a listener is the program's, as in its own code
  const thrown = await withStdin("require('readline').createInterface({ input: process.stdin }).on('line', () => { throw new Error('bad line'); });", "x\n");
  assert.notEqual(thrown.exitCode, 0);
  assert.match(thrown.stderr, /bad line/);
  const exited = await withStdin("process.stdin.on('end', () => process.exit(3));", "");
  assert.equal(exited.exitCode, 3);
  await correctAfter();
});

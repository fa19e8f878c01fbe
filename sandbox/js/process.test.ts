/**
 * The js backend in a process of its own: a program that makes V8 abort the isolates' process
 * (a Set grown past what its heap limit can reallocate) is that program's memory_limit, the
 * programs that were running beside it get their own results, and the backend keeps serving.
 * In the server's own process the same program ended the server.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { openJsProcess } from "./process.js";

const { sandbox: js, note } = await openJsProcess();
after(() => js?.close());
const LIMITS = { wallMs: 8000, cpuMs: 8000, memoryMb: 32 };
const run = (code: string, stdin = "") => js!.run({ language: "javascript", code, stdin, limits: LIMITS });

test("a Set that outgrows its heap fails alone; the programs beside it get their own results", { skip: js ? false : note }, async () => {
  const ok = await run("console.log(6 * 7)");
  assert.equal(ok.status, "finished");
  assert.equal(ok.stdout, "42\n");
  const slow = "let s = 0; for (let i = 0; i < 3e7; i++) s += i % 7; console.log(input = require('fs').readFileSync(0, 'utf8').trim(), s > 0)";
  const [bomb, map, beside1, beside2] = await Promise.all([
    run("const s = new Set(); for (let i = 0; ; i++) s.add(i);"),
    run("const m = new Map(); for (let i = 0; ; i++) m.set(i, i);"),
    run(slow, "one"),
    run(slow, "two"),
  ]);
  for (const r of [bomb, map]) {
    assert.equal(r.status, "memory_limit", JSON.stringify(r));
    assert.match(r.message ?? "", /ended the JavaScript runtime's process|memory limit/);
  }
  assert.equal(beside1.status, "finished", JSON.stringify(beside1));
  assert.equal(beside1.stdout, "one true\n");
  assert.equal(beside2.stdout, "two true\n");
  assert.ok(js!.blamed >= 1 && js!.lostShared >= 1, `blamed ${js!.blamed}, lost ${js!.lostShared}`);
  const after = await run("console.log([1, 2, 3].map((x) => x * 2).join(' '))");
  assert.equal(after.stdout, "2 4 6\n", "still serving");
});

test("an array that outgrows its heap is the in-process memory limit, with no process lost", { skip: js ? false : note }, async () => {
  const lost = js!.lostShared;
  const r = await run("const a = []; for (;;) a.push({ i: a.length });");
  assert.equal(r.status, "memory_limit", JSON.stringify(r));
  assert.equal(js!.lostShared, lost);
});

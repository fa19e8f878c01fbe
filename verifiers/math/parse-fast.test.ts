/**
 * mathjs's expression node classes are left in dictionary mode by the `Object.defineProperty` of
 * their `name`, and V8 then aborts and restarts the optimising compile of whatever constructs
 * them for as long as the process parses (parse.ts, MATHJS_NODE_CLASSES). parse.ts puts them back
 * in fast mode when it loads. Both checks run in a child process: one needs V8's natives syntax,
 * the other its --trace-opt log; on a tree without the fix, both fail.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const parseTs = pathToFileURL(fileURLToPath(new URL("./parse.ts", import.meta.url))).href;

function child(flags: string[], code: string): string {
  const r = spawnSync(process.execPath, [...flags, "--import", "tsx", "--input-type=module", "-e", code], { cwd: root, encoding: "utf8", timeout: 60_000 });
  assert.equal(r.status, 0, `child failed: ${r.stderr}`);
  return r.stdout;
}

test("after parse.ts loads, every mathjs node class it lists is in fast mode (mathjs alone leaves them in dictionary mode)", () => {
  const out = child(["--allow-natives-syntax"], `
    const m = await import("mathjs/number");
    const fast = new Function("o", "return %HasFastProperties(o)");
    const before = fast(m.ConstantNode);
    const { MATHJS_NODE_CLASSES } = await import(${JSON.stringify(parseTs)});
    console.log(JSON.stringify({ before, n: MATHJS_NODE_CLASSES.length, after: MATHJS_NODE_CLASSES.map((C) => [C.name, fast(C)]), same: MATHJS_NODE_CLASSES.includes(m.parse("10").constructor) && MATHJS_NODE_CLASSES.includes(m.parse("(x)").constructor) }));
  `);
  const r = JSON.parse(out) as { before: boolean; n: number; after: [string, boolean][]; same: boolean };
  // the reason for the fix: if mathjs stops leaving them slow, this test says so
  assert.equal(r.before, false, "mathjs no longer leaves ConstantNode in dictionary mode: the workaround in parse.ts can go");
  assert.equal(r.n, 14);
  assert.deepEqual(r.after.filter(([, fast]) => !fast), [], "node classes still in dictionary mode");
  assert.ok(r.same, "the classes made fast are the ones mathjs's parse constructs");
});

test("parsing numbers and parentheses makes no endless aborted optimising compiles", () => {
  // 1.5 s of parse("10") and parse("(x)"): hundreds of "aborted optimizing" lines without the fix
  const log = child(["--trace-opt"], `
    await import(${JSON.stringify(parseTs)});
    const { parse } = await import("mathjs/number");
    const end = performance.now() + 1500;
    while (performance.now() < end) for (let i = 0; i < 100; i++) { parse("10"); parse("(x)"); parse("2*x+1"); }
  `);
  const aborted = log.split("\n").filter((l) => l.startsWith("[aborted optimizing")).length;
  assert.ok(aborted < 10, `${aborted} aborted optimising compiles in 1.5 s of parsing`);
});

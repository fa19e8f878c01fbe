import { test } from "node:test";
import assert from "node:assert/strict";
import ivm from "isolated-vm";
import { cpuTimeOf, disposeOf } from "./isolate.js";

test("an isolate that hits its heap limit disposes itself on its own thread; disposeOf and cpuTimeOf take that as gone", async () => {
  const iso = new ivm.Isolate({ memoryLimit: 8 });
  const ctx = await iso.createContext();
  assert.equal(typeof cpuTimeOf(iso), "bigint");
  await assert.rejects(ctx.eval("const a = []; for (;;) a.push(new Array(1000).fill(1));", { timeout: 10_000 }), /memory limit/);
  // Nobody here called dispose(): isolated-vm did, and a plain dispose() now throws.
  assert.equal(iso.isDisposed, true);
  assert.throws(() => iso.dispose(), /already disposed/);
  assert.doesNotThrow(() => disposeOf(iso));
  assert.equal(cpuTimeOf(iso), undefined);
});

test("disposeOf and cpuTimeOf survive the isolate going between the isDisposed check and the call", () => {
  // What a watchdog sees when the isolate's thread drops it at its heap limit just after the
  // check: isDisposed still reads false, then the call throws as isolated-vm does.
  let disposeCalls = 0;
  const racing = {
    isDisposed: false,
    dispose() {
      disposeCalls++;
      throw new Error("Isolate is already disposed");
    },
    get cpuTime(): bigint {
      throw new Error("Isolate is disposed");
    },
  };
  assert.doesNotThrow(() => disposeOf(racing));
  assert.equal(disposeCalls, 1, "it did try");
  assert.equal(cpuTimeOf(racing), undefined);
  // A live one is disposed once, and its CPU time read.
  const live = { isDisposed: false, cpuTime: 5n, dispose() { this.isDisposed = true; } };
  assert.equal(cpuTimeOf(live), 5n);
  disposeOf(live);
  disposeOf(live);
  assert.equal(live.isDisposed, true);
  assert.equal(cpuTimeOf(live), undefined);
});

/**
 * The job loop's pause and its wakes. A submit or a close can come while the loop awaits the
 * store (a PostgreSQL query takes a while): neither may be lost. A lost close left close() waiting
 * on a timer that does not keep the process alive (the PostgreSQL run of the store suites saw its
 * tests cancelled); a lost submit left the job queued until the next one came.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { testRuntime, quiet } from "../../tests/helpers.js";
import { memoryStore, type JobRow, type Store } from "../store/index.js";
import { JobService } from "./service.js";

/** A store whose jobs.unfinished() reads at once but answers only when the test lets it (`release`). */
function heldStore(shared: boolean) {
  const store: Store = memoryStore();
  const read = store.jobs.unfinished.bind(store.jobs);
  const state = { calls: 0, hold: false, release: () => {} };
  store.jobs.unfinished = async (): Promise<JobRow[]> => {
    state.calls++;
    const rows = await read();
    if (state.hold) await new Promise<void>((r) => (state.release = r));
    return rows;
  };
  if (shared) Object.defineProperty(store.jobs, "shared", { get: () => true });
  return { store, state };
}

const until = async (cond: () => boolean | Promise<boolean>, what: string, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

/** `p` settled within `ms`, with a timer that keeps this process alive meanwhile. */
const within = <T>(p: Promise<T>, ms: number, what: string) =>
  Promise.race([p, new Promise<never>((_, no) => setTimeout(() => no(new Error(`${what} did not return within ${ms} ms`)), ms))]);

/**
 * A job service over heldStore(shared), started with every read held: `body` runs once the loop's
 * first read of its own (after begin()'s, let through) is held. Closes everything after.
 */
async function withLoopInRead(shared: boolean, body: (svc: JobService, store: Store, state: ReturnType<typeof heldStore>["state"]) => Promise<void>) {
  const runtime = await testRuntime();
  const { store, state } = heldStore(shared);
  const svc = new JobService(runtime.config, quiet, store);
  try {
    state.hold = true;
    svc.start(runtime.scorer);
    await until(() => state.calls >= 1, "begin()'s read");
    state.release(); // begin(): nothing to resume
    await until(() => state.calls >= 2, "the loop's read, held");
    await body(svc, store, state);
  } finally {
    await svc.close();
    await store.close();
    await runtime.close();
  }
}

for (const shared of [false, true]) {
  test(`close() returns while the loop awaits the store (${shared ? "shared" : "embedded"} store)`, () =>
    withLoopInRead(shared, async (svc, _store, state) => {
      const closing = svc.close();
      state.release();
      await within(closing, 400, "close()"); // under the shared store's 500 ms pause, which closing must not wait out
    }));
}

test("a job submitted while the loop reads the store is scored without another submit", () =>
  withLoopInRead(false, async (svc, store, state) => {
    state.hold = false;
    // The held read saw no job; this one lands before it answers.
    const { id } = await svc.submit((async function* () { yield JSON.stringify({ verifier: "exact", response: "a", reference: "a" }); })(), {} as never);
    state.release();
    await until(async () => (await store.jobs.get(id)).status === "done", "the job to finish", 3_000);
    assert.equal((await store.jobs.get(id)).n_ok, 1);
  }));

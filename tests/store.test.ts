/**
 * The store's contract, the same suite on both backends: embedded SQLite (in memory) and a shared
 * PostgreSQL (a fresh schema per test; skipped with the reason when none answers, failed under
 * CI=true). Rubrics, presets and custom verifiers (versioned), the judge's verdict cache, batch
 * jobs (results once each, counts, order, summaries' queries, deletes in slices), and what only a
 * shared store needs: migrations that replicas starting together run once, writes from two
 * replicas to one rubric or one job that do not collide, and a job held by one replica at a time.
 */
import { describe, test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import pg from "pg";
import { memoryStore, openStore, RubricExists, RubricInvalid, RubricNotFound, NotFound, type Store } from "../src/store/index.js";
import { SCHEMA_VERSIONS } from "../src/store/db.js";
import type { RewardResult } from "../src/core/types.js";
import { freshSchema, storePgMissing } from "./store-backends.js";
import { loadConfig } from "../src/core/config.js";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { longestGap } from "./loop-watch.js";

const pgMissing = await storePgMissing();

interface Backend {
  name: "sqlite" | "postgres";
  skip?: string;
  /** A new, empty store; `more` opens further handles on the same store (other replicas). */
  open(t: TestContext): Promise<{ store: Store; more: () => Promise<Store>; url?: string }>;
}

/** Closes what a test opened (stores first, then their schema) when it ends. */
function cleanup(t: TestContext): (f: () => Promise<void>) => void {
  const fs: Array<() => Promise<void>> = [];
  t.after(async () => {
    for (const f of fs.reverse()) await f().catch(() => {});
  });
  return (f) => fs.push(f);
}

const BACKENDS: Backend[] = [
  {
    name: "sqlite",
    async open(t) {
      const opened = cleanup(t);
      const store = memoryStore();
      opened(() => store.close());
      return { store, more: async () => store };
    },
  },
  {
    name: "postgres",
    skip: pgMissing ?? undefined,
    async open(t) {
      const opened = cleanup(t);
      const s = await freshSchema();
      opened(s.drop);
      const more = async () => {
        const st = await openStore({ dataDir: ":memory:", url: s.url });
        opened(() => st.close());
        return st;
      };
      return { store: await more(), more, url: s.url };
    },
  },
];

const R = (n: number) => ({ title: `t${n}`, criteria: [{ id: "c", description: `criterion ${n}`, weight: 1 }] });
const ok = (reward: number, ms = 1): RewardResult => ({ id: null, verifier: "exact", reward, status: "ok", reason: "", details: {}, elapsed_ms: ms });
const err = (): RewardResult => ({ id: null, verifier: "exact", reward: null, status: "error", reason: "down", details: {}, elapsed_ms: 1 });

for (const b of BACKENDS) {
  describe(`store on ${b.name}`, { skip: b.skip }, () => {
    test("rubrics: versions, unchanged saves, delete, re-create continues the numbers", async (t) => {
      const { store } = await b.open(t);
      const r = store.rubrics;
      assert.equal((await r.create("cap", R(1))).version, 1);
      await assert.rejects(r.create("cap", R(1)), RubricExists);
      assert.deepEqual(await r.save("cap", R(1)).then((x) => [x.created, x.rubric.version]), [false, 1]);
      assert.deepEqual(await r.save("cap", R(2)).then((x) => [x.created, x.rubric.version]), [true, 2]);
      assert.equal((await r.get("cap", 1)).criteria[0].description, "criterion 1");
      assert.equal((await r.get("cap")).version, 2);
      assert.deepEqual((await r.versions("cap")).map((v) => v.version), [1, 2]);
      assert.deepEqual((await r.list()).map((v) => [v.id, v.version]), [["cap", 2]]);
      await assert.rejects(r.get("cap", 3), RubricNotFound);
      await r.delete("cap");
      await assert.rejects(r.get("cap"), RubricNotFound);
      await assert.rejects(r.get("cap", 1), RubricNotFound);
      await assert.rejects(r.delete("cap"), RubricNotFound);
      assert.equal((await r.create("cap", R(3))).version, 3);
      await assert.rejects(r.create("bad", { title: "x", criteria: [] }), RubricInvalid);
      await assert.rejects(r.get("bad"), RubricNotFound);
    });

    test("rubrics: export, import into another store reproduces the numbers; one bad rubric imports none", async (t) => {
      const { store } = await b.open(t);
      await store.rubrics.create("a", R(1));
      await store.rubrics.save("a", R(2));
      const doc = await store.rubrics.export();
      const { store: other } = await b.open(t);
      assert.deepEqual(await other.rubrics.import(doc), [{ id: "a", version: 2, added: 2 }]);
      assert.deepEqual(await other.rubrics.import(doc), [{ id: "a", version: 2, added: 0 }], "importing twice adds nothing");
      const bad = { ...doc, rubrics: [{ id: "b", versions: [R(1) as never] }, { id: "c", versions: [{ title: "x", criteria: [] } as never] }] };
      await assert.rejects(other.rubrics.import(bad), RubricInvalid);
      await assert.rejects(other.rubrics.get("b"), RubricNotFound, "all or nothing");
    });

    test("rubrics: a large import lets the event loop run while it writes (it held it for seconds on SQLite)", async (t) => {
      const { store } = await b.open(t);
      const doc = { format: "assay.rubrics/1", rubrics: Array.from({ length: 2000 }, (_, i) => ({ id: `r${i}`, versions: [R(1), R(2)] })) } as never;
      const t0 = performance.now();
      const { out, gap: longest, turns } = await longestGap(() => store.rubrics.import(doc));
      const ms = performance.now() - t0;
      assert.equal(out.length, 2000);
      assert.equal((await store.rubrics.get("r1999")).version, 2);
      // Timers ran during the import, and no gap between them was near the import's whole time.
      assert.ok(turns >= 3, `${turns} timer turns in a ${ms.toFixed(0)} ms import`);
      assert.ok(longest < Math.max(100, ms / 2), `the loop waited ${longest.toFixed(0)} ms at once in a ${ms.toFixed(0)} ms import`);
    });

    test("presets and custom verifiers: versioned the same way", async (t) => {
      const { store } = await b.open(t);
      const p = store.presets;
      const one = { parts: [{ verifier: "exact", weight: 1 }], options: {} } as never;
      const two = { parts: [{ verifier: "exact", weight: 2 }], options: {} } as never;
      assert.deepEqual((await p.save("p", one)).created, true);
      assert.deepEqual((await p.save("p", one)).created, false);
      assert.equal((await p.save("p", two)).doc.version, 2);
      assert.equal(await p.latest("p"), 2);
      assert.deepEqual((await p.get("p", 1)).parts, [{ verifier: "exact", weight: 1 }]);
      assert.deepEqual((await p.list()).map((x) => x.name), ["p"]);
      await p.delete("p");
      await assert.rejects(p.latest("p"), NotFound);
      await assert.rejects(p.get("p", 1), NotFound);
      assert.equal((await p.save("p", one)).doc.version, 3);
      const c = store.customVerifiers;
      const src = { language: "javascript", source: "exports.score = () => 1", compiled: "exports.score = () => 1" } as const;
      assert.equal((await c.save("v", src)).doc.version, 1);
      assert.equal((await c.get("v")).compiled, src.compiled);
      assert.deepEqual((await c.versions("v")).map((x) => x.version), [1]);
    });

    test("judge cache: get, put, replace, size", async (t) => {
      const { store } = await b.open(t);
      const j = store.judgeCache;
      assert.equal(await j.get("k"), undefined);
      await j.put("k", "m", "t1", { value: { a: 1 }, usage: { input_tokens: 1, output_tokens: 2 }, mode: "json" });
      await j.put("k", "m", "t1", { value: { a: 2 }, usage: { input_tokens: 1, output_tokens: 2 }, mode: "json" });
      assert.deepEqual((await j.get("k"))?.value, { a: 2 });
      assert.equal(await j.size(), 1);
    });

    test("jobs: upload in slices, results land once each, counts, order, done at the last", async (t) => {
      const { store } = await b.open(t);
      const J = store.jobs;
      await J.create("j1", { verifier: "exact" });
      await J.addItems("j1", 0, [{ item: "a", group: "g1" }, { item: "b", group: "g1" }]);
      await J.addItems("j1", 2, [{ item: "c", group: "g2" }, { item: "d", group: null }]);
      await assert.rejects(J.get("j1"), /no job/, "an upload is invisible until sealed");
      assert.deepEqual(await J.unfinished(), []);
      await J.seal("j1", 4);
      await J.create("j2", {});
      await J.addItems("j2", 0, [{ item: "x", group: null }]);
      await J.seal("j2", 1);
      assert.deepEqual((await J.unfinished()).map((j) => j.id), ["j1", "j2"], "oldest first");
      assert.deepEqual((await J.list()).map((j) => j.id), ["j2", "j1"], "newest first");
      assert.equal(await J.start("j1"), true);
      assert.equal((await J.get("j1")).status, "running");
      assert.deepEqual((await J.pending("j1", 0, 10)).map((p) => p.item), ["a", "b", "c", "d"]);
      assert.equal(await J.putResults("j1", [{ idx: 2, result: ok(0.95, 5) }, { idx: 0, result: ok(0.15) }]), 2);
      assert.equal(await J.putResults("j1", [{ idx: 2, result: ok(0, 9) }, { idx: 1, result: err() }]), 1, "a second write of index 2 is ignored");
      assert.deepEqual((await J.pending("j1", 0, 10)).map((p) => p.idx), [3]);
      assert.equal(await J.doneIn("j1", 0, 3), 3);
      let j = await J.get("j1");
      assert.deepEqual([j.done, j.n_ok, j.n_error, j.n_invalid, j.status], [3, 2, 1, 0, "running"]);
      assert.ok(Math.abs(j.reward_sum - 1.1) < 1e-9);
      assert.deepEqual((await J.results("j1", 0, 10)).map((r) => r.idx), [0, 1, 2], "in index order");
      assert.equal(JSON.parse((await J.results("j1", 2, 1))[0].result).reward, 0.95, "the first write of index 2 stands");
      assert.equal(await J.putResults("j1", [{ idx: 3, result: ok(1) }]), 1);
      j = await J.get("j1");
      assert.equal(j.status, "done");
      assert.ok(j.finished_at);
      assert.equal(await J.putResults("j1", [{ idx: 3, result: ok(0) }]), 0, "a finished job takes no results");
      // 0.15 -> bin 1, 0.95 -> bin 9 (truncated, not rounded), 1 -> bin 9
      assert.deepEqual(await J.histogram("j1"), [{ b: 1, n: 1 }, { b: 9, n: 2 }]);
      assert.deepEqual((await J.slowest("j1", 1)).map((r) => r.idx), [2]);
      assert.deepEqual(
        (await J.groups("j1", 1, 10, 200)).map((g) => [g.grp, g.n, g.scored, g.passed, g.first]),
        [["g1", 2, 1, 0, 0], ["g2", 1, 1, 0, 2]],
      );
      assert.deepEqual((await J.groups("j1", 1, 1, 1)).map((g) => g.grp), ["g"], "a label of labelChars, at most limit groups");
      const tally = (await J.groupTally("j1", 1)).map((t) => [t.scored, t.passed, t.groups, t.max_n]).sort();
      assert.deepEqual(tally, [[1, 0, 2, 2]], "both groups have 1 scored item and none passed; g1 has 2 items");
      assert.equal(await J.finish("j1", "cancelled"), false, "a finished job cannot be cancelled");
      assert.equal(await J.finish("j2", "cancelled"), true);
      assert.equal(await J.putResults("j2", [{ idx: 0, result: ok(1) }]), 0, "a cancelled job's results are dropped");
      assert.deepEqual(await J.expired("9999", 10), ["j1", "j2"]);
    });

    test("jobs: a delete in slices is invisible meanwhile and finished by dropUnsealed", async (t) => {
      const { store } = await b.open(t);
      const J = store.jobs;
      await J.create("d", {});
      await J.addItems("d", 0, Array.from({ length: 30 }, (_, i) => ({ item: String(i), group: null })));
      await J.seal("d", 30);
      await J.putResults("d", Array.from({ length: 30 }, (_, i) => ({ idx: i, result: ok(1) })));
      assert.equal(await J.deleteSome("d", 10), false);
      await assert.rejects(J.get("d"), /no job/);
      assert.deepEqual(await J.list(), []);
      await J.create("u", {}); // an upload a crash cut off
      assert.equal(await J.dropUnsealed(), b.name === "sqlite" ? 2 : 1, "on a shared store a fresh upload may be another replica's, in progress");
      assert.equal(await J.find("d"), undefined);
      assert.equal((await J.items("d", 0, 100)).length, 0);
    });

    test("a job is held by one replica at a time; a dead one's hold runs out", async (t) => {
      const { store, more } = await b.open(t);
      const other = await more();
      await store.jobs.create("h", {});
      await store.jobs.addItems("h", 0, [{ item: "a", group: null }]);
      await store.jobs.seal("h", 1);
      assert.equal(await store.jobs.claim("h", "A", 60_000), true);
      assert.equal(await store.jobs.claim("h", "A", 60_000), true, "renewing");
      if (b.name === "sqlite") {
        assert.equal(await other.jobs.claim("h", "B", 60_000), true, "one process owns an embedded store: no holds");
        return;
      }
      assert.equal(await other.jobs.claim("h", "B", 60_000), false, "held by A");
      await store.jobs.release("h", "A");
      assert.equal(await other.jobs.claim("h", "B", 50), true, "released");
      await new Promise((r) => setTimeout(r, 120));
      assert.equal(await store.jobs.claim("h", "A", 60_000), true, "B's lease ran out");
      assert.equal(await other.jobs.claim("h", "B", 60_000), false);
    });

    test("two replicas write one rubric and one job at once: distinct versions, each result once", { skip: b.name === "sqlite" ? "one process owns an embedded store" : undefined }, async (t) => {
      const { store, more } = await b.open(t);
      const other = await more();
      const saves = Array.from({ length: 12 }, (_, i) => (i % 2 ? store : other).rubrics.save("shared", R(i)));
      const versions = (await Promise.all(saves)).map((s) => s.rubric.version).sort((x, y) => x - y);
      assert.deepEqual(versions, Array.from({ length: 12 }, (_, i) => i + 1));
      await store.jobs.create("w", {});
      await store.jobs.addItems("w", 0, Array.from({ length: 200 }, (_, i) => ({ item: String(i), group: null })));
      await store.jobs.seal("w", 200);
      // both replicas score overlapping chunks (a chunk re-scored after a crash): every item lands once
      const writes = [];
      for (let s = 0; s < 200; s += 50) {
        const chunk = Array.from({ length: 60 }, (_, i) => ({ idx: Math.min(199, s + i), result: ok(1) }));
        writes.push(store.jobs.putResults("w", chunk), other.jobs.putResults("w", chunk));
      }
      const landed = (await Promise.all(writes)).reduce((a, n) => a + n, 0);
      assert.equal(landed, 200);
      const j = await other.jobs.get("w");
      assert.deepEqual([j.done, j.n_ok, j.status, j.reward_sum], [200, 200, "done", 200]);
    });

    test("a cancel committed while results are being written: the results are dropped, not counted on the cancelled job", { skip: b.name === "sqlite" ? "one process owns an embedded store" : undefined }, async (t) => {
      // Before: putResults read the job's status with a plain SELECT, so another replica's cancel
      // that committed after that read was overtaken: the results landed and were counted on a
      // job already cancelled (its cached summary then disagreed with its counts for good).
      const opened = cleanup(t);
      const s = await freshSchema();
      opened(s.drop);
      const st = await openStore({ dataDir: ":memory:", url: s.url });
      opened(() => st.close());
      await st.jobs.create("c", {});
      await st.jobs.addItems("c", 0, [{ item: "a", group: null }, { item: "b", group: null }]);
      await st.jobs.seal("c", 2);
      await st.jobs.start("c");
      const other = new pg.Client({ connectionString: s.url });
      await other.connect();
      try {
        await other.query("BEGIN");
        await other.query("UPDATE job SET status = 'cancelled' WHERE id = 'c'"); // another replica's cancel, not yet committed
        const writing = st.jobs.putResults("c", [{ idx: 0, result: ok(1) }]);
        await new Promise((r) => setTimeout(r, 300));
        await other.query("COMMIT");
        assert.equal(await writing, 0);
        const j = await st.jobs.get("c");
        assert.deepEqual([j.status, j.done, j.n_ok], ["cancelled", 0, 0]);
        assert.deepEqual(await st.jobs.results("c", 0, 10), []);
      } finally {
        await other.end();
      }
    });

    test("migrations: replicas starting together run each once; a newer schema is refused with what to do", { skip: b.name === "sqlite" ? "PRAGMA user_version (db.ts)" : undefined }, async (t) => {
      const opened = cleanup(t);
      const s = await freshSchema();
      opened(s.drop);
      const stores = await Promise.all(Array.from({ length: 4 }, () => openStore({ dataDir: ":memory:", url: s.url })));
      for (const st of stores) opened(() => st.close());
      const c = new pg.Client({ connectionString: s.url });
      await c.connect();
      try {
        const rows = (await c.query("SELECT version FROM schema_migrations ORDER BY version")).rows.map((r) => r.version);
        assert.deepEqual(rows, Array.from({ length: SCHEMA_VERSIONS.postgres }, (_, i) => i + 1));
        await c.query("INSERT INTO schema_migrations (version) VALUES ($1)", [SCHEMA_VERSIONS.postgres + 1]);
      } finally {
        await c.end();
      }
      await assert.rejects(openStore({ dataDir: ":memory:", url: s.url }), (e: Error) => {
        assert.match(e.message, /written by a newer Assay/);
        assert.doesNotMatch(e.message, /:assay@/, "the password is not shown");
        return true;
      });
    });
  });
}

test("a PostgreSQL that does not answer is a start-up error naming the setting and what to change", { skip: pgMissing ?? undefined }, async () => {
  await assert.rejects(openStore({ dataDir: ":memory:", url: "postgres://assay:secret@127.0.0.1:1/assay" }), (e: Error) => {
    assert.match(e.message, /ASSAY_STORE_URL=postgres:\/\/assay:\*\*\*@127\.0\.0\.1:1\/assay: cannot connect/);
    assert.match(e.message, /unset ASSAY_STORE_URL/);
    return true;
  });
});

test("ASSAY_STORE_URL: sqlite: or a postgres:// URL; anything else is refused saying what to write", () => {
  assert.equal(loadConfig({ ASSAY_STORE_URL: "sqlite:" }).storeUrl, "sqlite:");
  assert.equal(loadConfig({ ASSAY_STORE_URL: "postgres://u:p@db:5432/assay" }).storeUrl, "postgres://u:p@db:5432/assay");
  for (const bad of ["mysql://u@h/db", "assay.db", "postgres://u:p@db:5432/"]) {
    assert.throws(() => loadConfig({ ASSAY_STORE_URL: bad }), (e: Error) => /ASSAY_STORE_URL/.test(e.message) && /postgres:\/\/user:password@host:5432\/database/.test(e.message), bad);
  }
});

test("ASSAY_STORE_URL=sqlite:<folder> puts assay.db there; unset, under ASSAY_DATA_DIR", async () => {
  const a = mkdtempSync(join(tmpdir(), "assay-store-a-"));
  const b = mkdtempSync(join(tmpdir(), "assay-store-b-"));
  try {
    const s1 = await openStore({ dataDir: a, url: `sqlite:${b}` });
    await s1.rubrics.create("x", R(1));
    await s1.close();
    assert.deepEqual([existsSync(join(a, "assay.db")), existsSync(join(b, "assay.db"))], [false, true]);
    const s2 = await openStore({ dataDir: b, url: "sqlite:" });
    assert.equal(s2.backend, "sqlite");
    assert.equal((await s2.rubrics.get("x")).version, 1, "the same file, reopened");
    await s2.close();
  } finally {
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
});

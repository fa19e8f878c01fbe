/**
 * Two Assay server processes on loopback sharing one store (ASSAY_STORE_URL, PostgreSQL): what is
 * created on one is used on the other (a rubric in a /reward, a preset), a job submitted to one is
 * read, streamed and cancelled on the other, and when the replica scoring a job is SIGKILLed the
 * other finishes it: every result once, in input order. Skipped with the reason when no
 * PostgreSQL answers; under CI=true that fails instead (tests/store-backends.ts).
 */
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startServerProcess, type ServerProcess } from "./jobs-procs.js";
import { startJudgeFixture, type JudgeFixture } from "./fixtures/judge-server.js";
import { freshSchema, storePgMissing } from "./store-backends.js";

const pgMissing = await storePgMissing();
const LEASE_MS = 1500;

describe("two replicas on one PostgreSQL store", { skip: pgMissing ?? undefined, timeout: 900_000 }, () => {
  let fx: JudgeFixture;
  let schema: Awaited<ReturnType<typeof freshSchema>>;
  let db: pg.Client;
  let A: ServerProcess;
  let B: ServerProcess;
  const procs: ServerProcess[] = [];
  const dirs: string[] = [];
  let env: Record<string, string>;

  before(async () => {
    fx = await startJudgeFixture();
    schema = await freshSchema();
    db = new pg.Client({ connectionString: schema.url });
    await db.connect();
    const dir = mkdtempSync(join(tmpdir(), "assay-replicas-"));
    dirs.push(dir);
    env = {
      ASSAY_STORE_URL: schema.url,
      ASSAY_DATA_DIR: dir, // uploads only: the store is the PostgreSQL
      ASSAY_JOB_CHUNK: "50",
      ASSAY_JOB_LEASE_MS: String(LEASE_MS),
      ASSAY_JUDGE_BASE_URL: fx.url,
      ASSAY_JUDGE_MODEL: "fx",
      ASSAY_LOG_LEVEL: "info",
    };
    // a loaded machine takes a while to start two servers from sources
    [A, B] = await Promise.all([startServerProcess(env, 240_000), startServerProcess(env, 240_000)]);
    procs.push(A, B);
  });
  after(async () => {
    for (const p of procs) p.kill("SIGKILL");
    await Promise.all(procs.map((p) => p.exited));
    await db?.end().catch(() => {});
    await schema?.drop().catch(() => {});
    await fx?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const post = (base: string, path: string, body: unknown) =>
    fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = async (res: Response | Promise<Response>) => {
    const r = await res;
    return { status: r.status, body: (await r.json()) as any };
  };

  test("a rubric and a preset created on one replica are used in /reward on the other", async () => {
    let r = await json(post(A.url, "/rubrics", { id: "colours", title: "Colours", criteria: [{ id: "red", description: 'Mentions "red".', weight: 1 }] }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    r = await json(post(B.url, "/reward", { verifier: "rubric", prompt: "Name some colours.", response: "red and green", reference: { rubric_id: "colours" } }));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, "ok", r.body.reason);
    assert.equal(r.body.reward, 1);
    assert.deepEqual(r.body.details.rubric, { id: "colours", version: 1 });
    // a new version made on B is what A scores with next (nothing cached by name on A)
    r = await json(fetch(`${B.url}/rubrics/colours`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ title: "Colours", criteria: [{ id: "blue", description: 'Mentions "blue".', weight: 1 }] }) }));
    assert.equal(r.body.version, 2);
    r = await json(post(A.url, "/reward", { verifier: "rubric", prompt: "Name some colours.", response: "red and green", reference: { rubric_id: "colours" } }));
    assert.deepEqual([r.body.reward, r.body.details.rubric.version], [0, 2]);

    r = await json(post(B.url, "/presets", { name: "p", parts: [{ verifier: "exact", weight: 1 }] }));
    assert.equal(r.status, 201);
    r = await json(post(A.url, "/reward", { verifier: "preset:p", response: "yes", reference: "yes" }));
    assert.deepEqual([r.status, r.body.reward], [200, 1]);
    assert.equal((await fetch(`${A.url}/presets/p`, { method: "DELETE" })).status, 204);
    r = await json(post(B.url, "/reward", { verifier: "preset:p", response: "yes", reference: "yes" }));
    assert.equal(r.status, 400, "deleted on A: gone on B");
  });

  const items = (n: number) => Array.from({ length: n }, (_, i) => JSON.stringify({ id: i, verifier: "exact", response: i % 3 ? "yes" : "no", reference: "yes" })).join("\n");
  const submit = async (base: string, n: number) => {
    const res = await fetch(`${base}/jobs`, { method: "POST", headers: { "content-type": "application/x-ndjson" }, body: items(n) });
    assert.equal(res.status, 201);
    return ((await res.json()) as { id: string }).id;
  };
  const checkResults = (text: string, n: number) => {
    const lines = text.split("\n").filter(Boolean);
    assert.equal(lines.length, n);
    const ids = lines.map((l) => JSON.parse(l).id as number);
    assert.equal(new Set(ids).size, n, "no duplicates");
    assert.ok(ids.every((v, i) => v === i), "in input order");
    assert.ok(lines.every((l, i) => JSON.parse(l).reward === (i % 3 ? 1 : 0)));
  };

  test("a job submitted on one replica is listed, streamed and cancelled on the other", { timeout: 120_000 }, async () => {
    const id = await submit(A.url, 600);
    const seen = await json(fetch(`${B.url}/jobs/${id}`));
    assert.equal(seen.status, 200);
    assert.equal(seen.body.total, 600);
    assert.ok((await json(fetch(`${B.url}/jobs`))).body.jobs.some((j: { id: string }) => j.id === id));
    // followed on B while (either replica) scores it: ends when it is done, every result once, in order
    checkResults(await (await fetch(`${B.url}/jobs/${id}/results`)).text(), 600);
    const done = await json(fetch(`${A.url}/jobs/${id}?summary=true`));
    assert.deepEqual([done.body.status, done.body.done, done.body.counts.ok], ["done", 600, 600]);

    const big = await submit(A.url, 50_000);
    const c = await json(post(B.url, `/jobs/${big}/cancel`, {}));
    assert.equal(c.status, 200);
    assert.equal(c.body.status, "cancelled");
    assert.equal((await json(fetch(`${A.url}/jobs/${big}`))).body.status, "cancelled");
    // the replica that was scoring it stops within a chunk: no job stays held, nothing more lands
    const stopped = Date.now();
    for (;;) {
      const { rows } = await db.query("SELECT count(*)::int AS n FROM job WHERE id = $1 AND owner IS NOT NULL", [big]);
      if (rows[0].n === 0) break;
      assert.ok(Date.now() - stopped < 30_000, "the cancelled job is still held 30 s later");
      await new Promise((r) => setTimeout(r, 100));
    }
    const before = (await json(fetch(`${B.url}/jobs/${big}`))).body.done;
    await new Promise((r) => setTimeout(r, 500));
    assert.equal((await json(fetch(`${A.url}/jobs/${big}`))).body.done, before);
    assert.ok(before < 50_000);
  });

  test("SIGKILL of the replica scoring a job: the other finishes it, every result once, in order", { timeout: 480_000 }, async (t) => {
    const N = 6000;
    const id = await submit(A.url, N);
    let owner: string | null = null;
    for (;;) {
      const { rows } = await db.query("SELECT owner, done FROM job WHERE id = $1", [id]);
      if (rows[0].done > 0 && rows[0].owner) {
        owner = rows[0].owner;
        break;
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    const pid = Number(owner!.split(":")[1]);
    const victim = [A, B].find((p) => p.child.pid === pid);
    assert.ok(victim, `the job's holder ${owner} is one of the two replicas`);
    const survivor = victim === A ? B : A;
    victim.kill("SIGKILL");
    await victim.exited;
    const left = (await db.query("SELECT status, done, total FROM job WHERE id = $1", [id])).rows[0];
    const rows = (await db.query("SELECT count(*)::int AS n FROM job_result WHERE job_id = $1", [id])).rows[0].n;
    assert.equal(left.status, "running");
    assert.ok(left.done > 0 && left.done < N, `killed mid-job: ${left.done} of ${N} done`);
    assert.equal(rows, left.done, "the counts agree with the rows");

    let job: { status: string; done: number; counts: { ok: number }; mean_reward: number };
    const t0 = Date.now();
    let tookOver: number | undefined;
    for (;;) {
      job = (await (await fetch(`${survivor.url}/jobs/${id}`)).json()) as typeof job;
      if (tookOver === undefined && job.done > left.done) tookOver = Date.now() - t0;
      if (job.status !== "running" && job.status !== "queued") break;
      assert.ok(Date.now() - t0 < 150_000, `the survivor did not finish the job: ${JSON.stringify(job)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(job.status, "done");
    t.diagnostic(`killed at ${left.done} of ${N}; the survivor's first result ${tookOver} ms after the kill (lease ${LEASE_MS} ms); done ${Date.now() - t0} ms after it`);
    assert.deepEqual([job.done, job.counts.ok], [N, N]);
    checkResults(await (await fetch(`${survivor.url}/jobs/${id}/results`)).text(), N);
    const n = (await db.query("SELECT count(*)::int AS n FROM job_result WHERE job_id = $1", [id])).rows[0].n;
    assert.equal(n, N, "one row per item in the store");

    // the killed replica restarted on the same store sees it all
    const back = await startServerProcess(env, 240_000);
    procs.push(back);
    assert.equal((await json(fetch(`${back.url}/jobs/${id}`))).body.status, "done");
    assert.equal((await json(fetch(`${back.url}/rubrics/colours`))).body.version, 2);
  });
});

/**
 * HTTP pipeline overhead: Assay's /reward and /reward/batch with the `exact` verifier against a
 * bare express handler that parses the same body and returns a constant, both measured in this
 * run on this machine. Each server runs pinned to one core with the load generator (autocannon)
 * on the other; the two are measured alternately for --rounds rounds of --seconds.
 *
 * Two figures per case: requests/s (throughput, which the other processes of a shared machine
 * move by 2x or more) and the server process's CPU time per request (user + system, every
 * thread, from /proc), which they move far less. "cost vs bare" is the CPU ratio; "items/s per
 * core" is 1 s of CPU divided by the CPU one item costs. Targets (issue 38): /reward at most
 * 1.3x the bare handler; at least 150,000 items/s in batches of 256.
 *
 *   npm run build && npx tsx bench/http.ts [--seconds 5] [--rounds 3] [--before DIR]
 *
 * --before DIR: another built tree (a checkout of an earlier commit, `npx tsc -p tsconfig.json`
 * run in it): its server is measured in the same rounds, alternately with this tree's, and its
 * rows are added to the table, so a before and after come from one run on one machine.
 */
import { load, startAssay, startServer, table, type Load } from "./lib.js";

const arg = (name: string) => Number(process.argv[process.argv.indexOf(name) + 1]);
const seconds = arg("--seconds") || 5;
const rounds = arg("--rounds") || 3;
const BATCH = 256;
const item = (i: number) => ({ id: i, verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` });
const single = JSON.stringify(item(3));
const batch = JSON.stringify({ items: Array.from({ length: BATCH }, (_, i) => item(i)) });

const bare = await startServer(["bench/bare-server.mjs"], {}, { pin: true });
// The pipeline alone: no sandbox backend, whose warm container pool would otherwise start during
// the measurement and bill its start-up to the HTTP layer (bench/code.ts measures sandboxes).
const assay = await startAssay({ ASSAY_SANDBOX: "none" }, { pin: true });
const beforeDir = process.argv.includes("--before") ? process.argv[process.argv.indexOf("--before") + 1] : undefined;
const before = beforeDir ? await startServer([`${beforeDir}/dist/src/cli/main.js`, "serve"], { ASSAY_SANDBOX: "none" }, { pin: true }) : undefined;
try {
  const at = (s: typeof bare, path: string, body: string, connections: number, secs: number) =>
    load(`http://127.0.0.1:${s.port}${path}`, body, connections, secs, s.child.pid);
  const warm = 2;
  await at(bare, "/reward", single, 16, warm);
  await at(assay, "/reward", single, 16, warm);
  await at(bare, "/reward/batch", batch, 4, warm);
  await at(assay, "/reward/batch", batch, 4, warm);
  if (before) {
    await at(before, "/reward", single, 16, warm);
    await at(before, "/reward/batch", batch, 4, warm);
  }
  // Alternate bare and Assay for `rounds` rounds; the table keeps the round whose ratio is the median.
  type Round = { bs: Load; as: Load; bb: Load; ab: Load; os?: Load; ob?: Load };
  const done: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    const bs = await at(bare, "/reward", single, 32, seconds);
    const as = await at(assay, "/reward", single, 32, seconds);
    const bb = await at(bare, "/reward/batch", batch, 8, seconds);
    const ab = await at(assay, "/reward/batch", batch, 8, seconds);
    const os = before && (await at(before, "/reward", single, 32, seconds));
    const ob = before && (await at(before, "/reward/batch", batch, 8, seconds));
    for (const [name, r] of Object.entries({ bs, as, bb, ab, os, ob })) {
      if (r && (r.errors || r.non2xx)) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx} non-2xx`);
    }
    done.push({ bs, as, bb, ab, os, ob });
    console.log(
      `round ${i + 1}: single ${(as.cpuUsPerRequest / bs.cpuUsPerRequest).toFixed(2)}x bare by CPU (${(bs.rps / as.rps).toFixed(2)}x by requests/s), ` +
        `batch ${((1e6 * BATCH) / ab.cpuUsPerRequest).toFixed(0)} items/s per core (${(ab.rps * BATCH).toFixed(0)} items/s measured)` +
        // The before tree in the same round: a paired comparison, which a loaded machine's
        // window-to-window swings move far less than the medians of each case apart.
        (os && ob
          ? `; before: single ${(os.cpuUsPerRequest / bs.cpuUsPerRequest).toFixed(2)}x bare, batch ${((1e6 * BATCH) / ob.cpuUsPerRequest).toFixed(0)} items/s per core; ` +
            `after/before CPU a request: single ${(as.cpuUsPerRequest / os.cpuUsPerRequest).toFixed(2)}, batch ${(ab.cpuUsPerRequest / ob.cpuUsPerRequest).toFixed(2)}`
          : ""),
    );
  }
  const median = <T>(xs: T[], key: (x: T) => number) => [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)];
  const { bs, as } = median(done, (r) => r.as.cpuUsPerRequest / r.bs.cpuUsPerRequest);
  const { bb, ab } = median(done, (r) => r.ab.cpuUsPerRequest);
  const { os } = before ? median(done, (r) => r.os!.cpuUsPerRequest / r.bs.cpuUsPerRequest) : {};
  const { ob } = before ? median(done, (r) => r.ob!.cpuUsPerRequest) : {};
  const us = (x: number) => x.toFixed(0);
  const perCore = (l: Load, n: number) => ((1e6 * n) / l.cpuUsPerRequest).toFixed(0);
  const rows = [
    ["case", "requests/s", "items/s", "p50 ms", "p99 ms", "CPU µs/request", "items/s per core", "cost vs bare"],
    ["bare express, single", bs.rps.toFixed(0), bs.rps.toFixed(0), bs.p50, bs.p99, us(bs.cpuUsPerRequest), perCore(bs, 1), "1.00x"],
    ["assay /reward (exact)", as.rps.toFixed(0), as.rps.toFixed(0), as.p50, as.p99, us(as.cpuUsPerRequest), perCore(as, 1), `${(as.cpuUsPerRequest / bs.cpuUsPerRequest).toFixed(2)}x`],
    [`bare express, batch ${BATCH}`, bb.rps.toFixed(0), (bb.rps * BATCH).toFixed(0), bb.p50, bb.p99, us(bb.cpuUsPerRequest), perCore(bb, BATCH), "1.00x"],
    [`assay /reward/batch ${BATCH}`, ab.rps.toFixed(0), (ab.rps * BATCH).toFixed(0), ab.p50, ab.p99, us(ab.cpuUsPerRequest), perCore(ab, BATCH), `${(ab.cpuUsPerRequest / bb.cpuUsPerRequest).toFixed(2)}x`],
  ];
  if (os && ob) {
    rows.push(
      [`before: /reward (exact)`, os.rps.toFixed(0), os.rps.toFixed(0), os.p50, os.p99, us(os.cpuUsPerRequest), perCore(os, 1), `${(os.cpuUsPerRequest / bs.cpuUsPerRequest).toFixed(2)}x`],
      [`before: /reward/batch ${BATCH}`, ob.rps.toFixed(0), (ob.rps * BATCH).toFixed(0), ob.p50, ob.p99, us(ob.cpuUsPerRequest), perCore(ob, BATCH), `${(ob.cpuUsPerRequest / bb.cpuUsPerRequest).toFixed(2)}x`],
    );
  }
  console.log(`\nmedian of ${rounds} rounds of ${seconds} s per case${beforeDir ? ` (before: ${beforeDir})` : ""}:`);
  console.log(table(rows));
  const singleRatio = as.cpuUsPerRequest / bs.cpuUsPerRequest;
  const batchItems = (1e6 * BATCH) / ab.cpuUsPerRequest;
  console.log(`\n/reward costs ${singleRatio.toFixed(2)}x the bare handler's CPU per request (target <= 1.3x): ${singleRatio <= 1.3 ? "met" : "MISSED"}`);
  console.log(`/reward/batch of ${BATCH}: ${batchItems.toFixed(0)} items/s per core of server CPU (target >= 150000): ${batchItems >= 150_000 ? "met" : "MISSED"}`);
} finally {
  bare.child.kill();
  assay.child.kill();
  before?.child.kill();
}

/**
 * HTTP pipeline overhead: items/s through Assay's /reward and /reward/batch with the `exact`
 * verifier, against a bare express handler that parses the same body and returns a constant,
 * both measured in this run on this machine. Targets: single-request per-item cost at most 2x
 * the bare handler; at least 20,000 items/s in batches of 256.
 *
 *   npm run build && npx tsx bench/http.ts [--seconds 5] [--rounds 3]
 */
import { load, startAssay, startServer, table, type Load } from "./lib.js";

const arg = (name: string) => Number(process.argv[process.argv.indexOf(name) + 1]);
const seconds = arg("--seconds") || 5;
const rounds = arg("--rounds") || 3;
const item = (i: number) => ({ id: i, verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` });
const single = JSON.stringify(item(3));
const batch256 = JSON.stringify({ items: Array.from({ length: 256 }, (_, i) => item(i)) });

const bare = await startServer(["bench/bare-server.mjs"], {}, { pin: true });
// The pipeline alone: no sandbox backend, whose warm container pool would otherwise start during
// the measurement and bill its start-up to the HTTP layer (bench/code.ts measures sandboxes).
const assay = await startAssay({ ASSAY_SANDBOX: "none" }, { pin: true });
try {
  const warm = 2;
  await load(`http://127.0.0.1:${bare.port}/reward`, single, 16, warm);
  await load(`http://127.0.0.1:${assay.port}/reward`, single, 16, warm);
  await load(`http://127.0.0.1:${assay.port}/reward/batch`, batch256, 4, warm);
  // Each server runs pinned to its own core (see startServer's pin). Alternate bare and Assay for
  // `rounds` rounds and keep the round whose ratio is the median.
  type Round = { bs: Load; as: Load; bb: Load; ab: Load };
  const done: Round[] = [];
  for (let i = 0; i < rounds; i++) {
    const bs = await load(`http://127.0.0.1:${bare.port}/reward`, single, 32, seconds);
    const as = await load(`http://127.0.0.1:${assay.port}/reward`, single, 32, seconds);
    const bb = await load(`http://127.0.0.1:${bare.port}/reward/batch`, batch256, 8, seconds);
    const ab = await load(`http://127.0.0.1:${assay.port}/reward/batch`, batch256, 8, seconds);
    for (const [name, r] of Object.entries({ bs, as, bb, ab })) {
      if (r.errors || r.non2xx) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx} non-2xx`);
    }
    done.push({ bs, as, bb, ab });
    console.log(`round ${i + 1}: single ${(bs.rps / as.rps).toFixed(2)}x bare, batch ${(ab.rps * 256).toFixed(0)} items/s`);
  }
  const median = <T>(xs: T[], key: (x: T) => number) => [...xs].sort((a, b) => key(a) - key(b))[Math.floor(xs.length / 2)];
  const { bs, as } = median(done, (r) => r.bs.rps / r.as.rps);
  const { bb, ab } = median(done, (r) => r.ab.rps);
  const rows = [
    ["case", "requests/s", "items/s", "p50 ms", "p99 ms", "per-item cost vs bare"],
    ["bare express, single", bs.rps.toFixed(0), bs.rps.toFixed(0), bs.p50, bs.p99, "1.00x"],
    ["assay /reward (exact)", as.rps.toFixed(0), as.rps.toFixed(0), as.p50, as.p99, `${(bs.rps / as.rps).toFixed(2)}x`],
    ["bare express, batch 256", bb.rps.toFixed(0), (bb.rps * 256).toFixed(0), bb.p50, bb.p99, "1.00x"],
    ["assay /reward/batch 256", ab.rps.toFixed(0), (ab.rps * 256).toFixed(0), ab.p50, ab.p99, `${(bb.rps / ab.rps).toFixed(2)}x`],
  ];
  console.log(`\nmedian of ${rounds} rounds of ${seconds} s per case:`);
  console.log(table(rows));
  const singleRatio = bs.rps / as.rps;
  const batchItems = ab.rps * 256;
  console.log(`\nsingle-request overhead ${singleRatio.toFixed(2)}x bare (target <= 2x): ${singleRatio <= 2 ? "met" : "MISSED"}`);
  console.log(`batch items/s ${batchItems.toFixed(0)} (target >= 20000): ${batchItems >= 20000 ? "met" : "MISSED"}`);
} finally {
  bare.child.kill();
  assay.child.kill();
}

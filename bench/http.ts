/**
 * HTTP pipeline overhead: items/s through Assay's /reward and /reward/batch with the `exact`
 * verifier, against a bare express handler that parses the same body and returns a constant,
 * both measured in this run on this machine. Targets: single-request per-item cost at most 2x
 * the bare handler; at least 20,000 items/s in batches of 256.
 *
 *   npm run build && npx tsx bench/http.ts [--seconds 8]
 */
import { load, startAssay, startServer, table } from "./lib.js";

const seconds = Number(process.argv[process.argv.indexOf("--seconds") + 1]) || 8;
const item = (i: number) => ({ id: i, verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` });
const single = JSON.stringify(item(3));
const batch256 = JSON.stringify({ items: Array.from({ length: 256 }, (_, i) => item(i)) });

const bare = await startServer(["bench/bare-server.mjs"]);
const assay = await startAssay();
try {
  const warm = 2;
  await load(`http://127.0.0.1:${bare.port}/reward`, single, 16, warm);
  await load(`http://127.0.0.1:${assay.port}/reward`, single, 16, warm);
  const bs = await load(`http://127.0.0.1:${bare.port}/reward`, single, 32, seconds);
  const as = await load(`http://127.0.0.1:${assay.port}/reward`, single, 32, seconds);
  await load(`http://127.0.0.1:${assay.port}/reward/batch`, batch256, 4, warm);
  const bb = await load(`http://127.0.0.1:${bare.port}/reward/batch`, batch256, 8, seconds);
  const ab = await load(`http://127.0.0.1:${assay.port}/reward/batch`, batch256, 8, seconds);
  for (const [name, r] of Object.entries({ bs, as, bb, ab })) {
    if (r.errors || r.non2xx) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx} non-2xx`);
  }
  const rows = [
    ["case", "requests/s", "items/s", "p50 ms", "p99 ms", "per-item cost vs bare"],
    ["bare express, single", bs.rps.toFixed(0), bs.rps.toFixed(0), bs.p50, bs.p99, "1.00x"],
    ["assay /reward (exact)", as.rps.toFixed(0), as.rps.toFixed(0), as.p50, as.p99, `${(bs.rps / as.rps).toFixed(2)}x`],
    ["bare express, batch 256", bb.rps.toFixed(0), (bb.rps * 256).toFixed(0), bb.p50, bb.p99, "1.00x"],
    ["assay /reward/batch 256", ab.rps.toFixed(0), (ab.rps * 256).toFixed(0), ab.p50, ab.p99, `${(bb.rps / ab.rps).toFixed(2)}x`],
  ];
  console.log(table(rows));
  const singleRatio = bs.rps / as.rps;
  const batchItems = ab.rps * 256;
  console.log(`\nsingle-request overhead ${singleRatio.toFixed(2)}x bare (target <= 2x): ${singleRatio <= 2 ? "met" : "MISSED"}`);
  console.log(`batch items/s ${batchItems.toFixed(0)} (target >= 20000): ${batchItems >= 20000 ? "met" : "MISSED"}`);
} finally {
  bare.child.kill();
  assay.child.kill();
}

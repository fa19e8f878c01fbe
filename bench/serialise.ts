/**
 * Is a serialiser written from the response schema faster than V8's JSON.stringify for
 * /reward/batch's response (issue 38)? 256 RewardResults of the `exact` verifier's shape, each
 * serialised field by field as openapi.yaml's RewardResult declares them (JSON.stringify only for
 * strings and the free-form `details`), against JSON.stringify of the whole response; CPU µs per
 * response, two alternating rounds each, and a check that both give the same text.
 *
 *   npx tsx bench/serialise.ts
 */
import type { RewardResult } from "../src/core/types.js";

const results: RewardResult[] = Array.from({ length: 256 }, (_, i) => ({
  id: i,
  verifier: "exact",
  reward: i % 3 ? 0 : 1,
  status: "ok",
  reason: i % 3 ? "no match" : "exact match after normalisation",
  details: { normalized_response: `the answer is ${i % 7}`, normalized_reference: `the answer is ${i % 5}` },
  elapsed_ms: 0.012,
}));

function one(r: RewardResult): string {
  let o = "{";
  if (r.id !== undefined) o += '"id":' + (typeof r.id === "number" ? r.id : JSON.stringify(r.id)) + ",";
  o += '"verifier":' + JSON.stringify(r.verifier) + ',"reward":' + (r.reward === null ? "null" : r.reward);
  o += ',"status":"' + r.status + '","reason":' + JSON.stringify(r.reason) + ',"details":' + JSON.stringify(r.details);
  return o + ',"elapsed_ms":' + r.elapsed_ms + "}";
}
function fromSchema(rs: RewardResult[]): string {
  let o = '{"results":[';
  for (let i = 0; i < rs.length; i++) o += (i ? "," : "") + one(rs[i]!);
  return o + "]}";
}
const native = (rs: RewardResult[]) => JSON.stringify({ results: rs });

if (fromSchema(results) !== native(results)) throw new Error("the two serialisers disagree");
const N = 4_000;
for (let round = 1; round <= 2; round++) {
  for (const [name, f] of [["JSON.stringify", native], ["from the schema", fromSchema]] as const) {
    for (let i = 0; i < 500; i++) f(results);
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i++) f(results);
    const c = process.cpuUsage(c0);
    console.log(`round ${round}: ${name}: ${((c.user + c.system) / N).toFixed(1)} µs CPU per 256-result response`);
  }
}

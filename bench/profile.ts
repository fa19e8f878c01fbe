/**
 * A CPU profile of the compiled server under `/reward/batch` load (issue 38): the server runs with
 * `node --cpu-prof`, autocannon sends 256-item `exact` batches (the body bench/http.ts sends) for
 * --seconds after a 2 s warm-up, the server is stopped (SIGTERM: it closes and exits, which writes
 * the profile) and the profile's samples from the load window are summed by self time: the top
 * frames, and the same by module. CPU shares, not wall time: other processes on a shared machine
 * slow the whole profile alike.
 *
 *   npm run build && npx tsx bench/profile.ts [--seconds 8] [--top 20] [--path /reward/batch] [--keep DIR]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir, loadavg } from "node:os";
import { join, relative } from "node:path";
import { once } from "node:events";
import { load, root, startServer, table } from "./lib.js";

const argOf = (name: string) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const seconds = Number(argOf("--seconds")) || 8;
const top = Number(argOf("--top")) || 20;
const path = argOf("--path") ?? "/reward/batch";
const keep = argOf("--keep");
const BATCH = 256;
const item = (i: number) => ({ id: i, verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` });
const body = path === "/reward" ? JSON.stringify(item(3)) : JSON.stringify({ items: Array.from({ length: BATCH }, (_, i) => item(i)) });

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The nodes of the profile's samples in its last `windowUs`, less idle ones (the thread waiting for the socket, or for CPU on a shared machine: no CPU of ours). */
function* busySamples(p: Profile, windowUs: number): Generator<ProfileNode> {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  let t = p.startTime;
  const from = p.endTime - windowUs;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i]!;
    if (t < from) continue;
    const n = byId.get(p.samples[i]!)!;
    if (n.callFrame.functionName !== "(idle)") yield n;
  }
}

/** Self time per frame and per module over the profile's last `windowUs`, as shares of the window's busy (not idle) samples. */
export function summarise(p: Profile, windowUs: number): { frames: [string, number][]; modules: [string, number][]; samples: number } {
  const frame = new Map<string, number>();
  const module = new Map<string, number>();
  let counted = 0;
  for (const n of busySamples(p, windowUs)) {
    const { functionName, url, lineNumber } = n.callFrame;
    const abs = url.replace(/^file:\/\//, "");
    const nm = abs.lastIndexOf("node_modules/");
    const file = !url ? "" : nm >= 0 ? abs.slice(nm) : relative(root, abs);
    const mod = file.startsWith("node_modules/") ? file.split("/").slice(0, file.split("/")[1]!.startsWith("@") ? 3 : 2).join("/") : file || `(${functionName || "native"})`;
    const name = `${functionName || "(anonymous)"}${file ? ` ${file}:${lineNumber + 1}` : ""}`;
    frame.set(name, (frame.get(name) ?? 0) + 1);
    module.set(mod, (module.get(mod) ?? 0) + 1);
    counted++;
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / counted] as [string, number]);
  return { frames: sorted(frame), modules: sorted(module), samples: counted };
}

/**
 * The request's stages, by the module a frame is in: a sample counts for the innermost frame of
 * its stack that belongs to a stage (JSON.parse under the body reader is the body reader's, a
 * log line's write to its file the request log's, the socket write of any response node's http,
 * which a bare handler pays too); a frame of no stage is its caller's. First match wins.
 */
const STAGES: [string, RegExp][] = [
  ["request log + request id (request-log, pino, randomUUID)", /request-log\.js|node_modules\/(pino|sonic-boom|thread-stream|fast-redact|quick-format)|internal\/crypto\/random/],
  ["metrics (metrics.js, prom-client)", /server\/metrics\.js|node_modules\/prom-client/],
  ["API key (auth.js)", /server\/auth\.js/],
  ["origin and body type checks (origin.js)", /server\/origin\.js/],
  ["body read + parse + depth guard", /json-body\.js|depth\.js|json-depth\.js|node_modules\/(body-parser|raw-body|type-is|iconv-lite|content-type|media-typer|bytes|http-errors|unpipe)|string_decoder/],
  ["schema check (contract.js, ajv)", /core\/contract\.js|core\/schema\.js|node_modules\/ajv|^\(validate\d*\)@/],
  ["admission (http.js admit, limits.js)", /server\/limits\.js|@admit/],
  ["deadline timer (deadlines.js)", /core\/deadlines\.js/],
  ["scoring (scorer, registry, verifier)", /core\/(scorer|registry|completion|verifier)\.js|dist\/verifiers\//],
  ["response (sendJson: JSON.stringify, headers)", /@sendJson/],
  ["route handler (routes/*.js)", /server\/routes\//],
  ["express + router", /node_modules\/(express|router|finalhandler|parseurl|path-to-regexp|on-finished|depd|send|encodeurl|fresh|range-parser)/],
  ["node http + socket (a bare handler pays it too)", /^node:(_http_|net|internal\/streams|internal\/stream_base|stream)/],
];

/** Self time by stage (STAGES) over the profile's last `windowUs`, shares of the busy samples. */
export function byStage(p: Profile, windowUs: number): [string, number][] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stageOfNode = new Map<number, string>();
  const keyOf = (n: ProfileNode) => {
    const { functionName, url } = n.callFrame;
    const abs = url.replace(/^file:\/\//, "");
    const nm = abs.lastIndexOf("node_modules/");
    const file = !url ? `(${functionName || "native"})` : nm >= 0 ? abs.slice(nm) : abs.startsWith("node:") ? abs : relative(root, abs);
    return `${file}@${functionName}`;
  };
  const stageOf = (id: number): string => {
    let s = stageOfNode.get(id);
    if (s !== undefined) return s;
    const n = byId.get(id)!;
    const key = keyOf(n);
    const own = STAGES.find(([, re]) => re.test(key))?.[0];
    const up = parent.get(id);
    // A frame of no stage (a native such as writeString, node:fs, a closure) is its caller's.
    s = own ?? (up !== undefined ? stageOf(up) : "other");
    stageOfNode.set(id, s);
    return s;
  };
  const totals = new Map<string, number>();
  let counted = 0;
  for (const n of busySamples(p, windowUs)) {
    const name = n.callFrame.functionName === "(garbage collector)" ? "garbage collector" : stageOf(n.id);
    totals.set(name, (totals.get(name) ?? 0) + 1);
    counted++;
  }
  return [...totals].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / counted]);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const dir = keep ?? mkdtempSync(join(tmpdir(), "assay-prof-"));
  const server = await startServer(["--cpu-prof", "--cpu-prof-dir", dir, "dist/src/cli/main.js", "serve"], { ASSAY_SANDBOX: "none" }, { pin: true });
  const load0 = loadavg()[0]!;
  try {
    await load(`${server.url}${path}`, body, 8, 2);
    const l = await load(`${server.url}${path}`, body, 8, seconds, server.child.pid);
    if (l.errors || l.non2xx) throw new Error(`${l.errors} errors, ${l.non2xx} non-2xx`);
    server.child.kill("SIGTERM");
    await once(server.child, "exit");
    const file = readdirSync(dir).find((f) => f.endsWith(".cpuprofile"));
    if (!file) throw new Error(`no .cpuprofile in ${dir}: the server did not exit cleanly`);
    const p = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile;
    // The last (seconds - 1) s: the load window, less a margin for the shutdown.
    const s = summarise(p, (seconds - 1) * 1e6);
    const perItem = path === "/reward" ? 1 : BATCH;
    console.log(`POST ${path}: ${l.rps.toFixed(0)} requests/s, ${l.cpuUsPerRequest.toFixed(0)} µs CPU a request, ${((1e6 * perItem) / l.cpuUsPerRequest).toFixed(0)} items/s per core; load average ${load0.toFixed(1)} -> ${loadavg()[0]!.toFixed(1)}; ${s.samples} samples`);
    console.log(`\ntop ${top} frames by self time:`);
    console.log(table([["share", "frame"], ...s.frames.slice(0, top).map(([k, v]) => [`${(100 * v).toFixed(1)}%`, k])]));
    console.log(`\nby module:`);
    console.log(table([["share", "module"], ...s.modules.slice(0, top).map(([k, v]) => [`${(100 * v).toFixed(1)}%`, k])]));
    console.log(`\nby stage of the request (the innermost frame of a stage in each sample's stack; µs = share x CPU a request):`);
    console.log(table([["share", "µs a request", "stage"], ...byStage(p, (seconds - 1) * 1e6).map(([k, v]) => [`${(100 * v).toFixed(1)}%`, (v * l.cpuUsPerRequest).toFixed(0), k])]));
    if (keep) console.log(`\nprofile kept: ${join(dir, file)}`);
  } finally {
    if (server.child.exitCode === null) server.child.kill();
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

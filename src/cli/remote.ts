/**
 * `assay score FILE --server URL`: submits FILE to a running server as a batch job, follows it
 * with a progress bar and ETA, writes the results (`-o`), and prints the summary. Following
 * survives interruptions: a server that goes away is waited for, and running the same command
 * again after Ctrl-C (or a crash) follows the same job instead of submitting it twice: the job's
 * id is kept beside the output (`OUTPUT.assay-job`, else `FILE.assay-job`) until it is done.
 */
import { createReadStream, createWriteStream, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { Readable } from "node:stream";
import { once } from "node:events";
import cliProgress from "cli-progress";
import { formatSeconds } from "./format.js";
import { fetchWithin } from "../client/within.js";

export interface RemoteArgs {
  input?: string;
  server: string;
  output?: string;
  job?: string;
  verifier?: string;
  groupBy?: string;
  k?: string;
  deadlineMs?: number;
  apiKey?: string;
  progress: boolean;
  /** Seconds between progress polls. */
  pollS?: number;
}

interface JobView {
  id: string;
  status: "queued" | "running" | "done" | "failed" | "cancelled";
  total: number;
  done: number;
  counts: { ok: number; error: number; invalid: number };
  items_per_s: number | null;
  eta_s: number | null;
  mean_reward: number | null;
  error: string | null;
  summary?: Summary;
}
interface Summary {
  mean_reward: number | null;
  histogram: { bins: { from: number; to: number; count: number }[]; below_0: number; above_1: number };
  slowest: { index: number; id: unknown; verifier: string; elapsed_ms: number }[];
  groups: null | { field: string; count: number; pass_threshold: number; pass_at_k: Record<string, { value: number | null; groups: number }> };
}

interface Saved {
  server: string;
  id: string;
  input?: string;
  size?: number;
  mtimeMs?: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * Each exchange has a deadline that holds the process open (../client/within.ts: without one, a
 * server or balancer that closes the connection unread ends this command with exit code 0 and no
 * result). Uploading a large file and downloading its results take longest; a poll is small.
 */
const UPLOAD_MS = 15 * 60_000;
const POLL_MS = 30_000;
const DOWNLOAD_MS = 15 * 60_000;
const say = (s: string) => process.stderr.write(s + "\n");

export async function remoteScore(a: RemoteArgs): Promise<JobView> {
  const server = a.server.replace(/\/+$/, "");
  const headers: Record<string, string> = a.apiKey ? { authorization: `Bearer ${a.apiKey}` } : {};
  const statePath = `${a.output ?? a.input ?? a.job}.assay-job`;
  let id = a.job;
  if (!id && a.input && existsSync(statePath)) {
    const saved = JSON.parse(readFileSync(statePath, "utf8")) as Saved;
    const st = statSync(a.input);
    if (saved.server === server && saved.input === a.input && saved.size === st.size && saved.mtimeMs === st.mtimeMs) {
      id = saved.id;
      say(`following job ${id} again (from ${statePath}; delete it to submit anew)`);
    }
  }
  if (!id) {
    if (!a.input) throw new Error("give a FILE to submit, or --job ID to follow");
    id = await submit(server, headers, a);
    const st = statSync(a.input);
    writeFileSync(statePath, JSON.stringify({ server, id, input: a.input, size: st.size, mtimeMs: st.mtimeMs } satisfies Saved) + "\n");
    say(`submitted job ${id} to ${server} (Ctrl-C stops following, not the job; run the same command again to follow it)`);
  }
  const view = await follow(server, headers, id, a);
  if (a.output) await download(server, headers, id, a.output);
  if (view.status === "done") rmSync(statePath, { force: true });
  say(report(view));
  return view;
}

async function submit(server: string, headers: Record<string, string>, a: RemoteArgs): Promise<string> {
  const q = new URLSearchParams();
  if (a.verifier) q.set("verifier", a.verifier);
  if (a.groupBy) q.set("group_by", a.groupBy);
  if (a.k) q.set("k", a.k);
  if (a.deadlineMs) q.set("deadline_ms", String(a.deadlineMs));
  const url = `${server}/jobs${q.toString() ? `?${q}` : ""}`;
  const init = {
    method: "POST",
    headers: { ...headers, "content-type": "application/x-ndjson" },
    body: Readable.toWeb(createReadStream(a.input!)) as ReadableStream,
    duplex: "half",
  } as RequestInit;
  const [res, body] = await fetchWithin(url, init, UPLOAD_MS, async (r) => [r, (await r.json().catch(() => ({}))) as { id?: string; error?: string }] as const).catch((err: Error) => {
    throw new Error(`cannot submit to ${server}: ${(err.cause as Error | undefined)?.message ?? err.message}; is \`assay serve\` running there?`);
  });
  if (res.status !== 201 || !body.id) throw new Error(`the server refused the job (HTTP ${res.status}): ${body.error ?? "no reason given"}`);
  return body.id;
}

/** Polls the job until it finishes; waits out a server that is down or restarting. */
async function follow(server: string, headers: Record<string, string>, id: string, a: RemoteArgs): Promise<JobView> {
  const bar = a.progress
    ? new cliProgress.SingleBar(
        { format: "job |{bar}| {value}/{total} | {rate} items/s | ETA {eta_s} | mean reward {mean} | {note}", hideCursor: true },
        cliProgress.Presets.shades_classic,
      )
    : null;
  let started = false;
  let lastLine = 0;
  let down = 0;
  try {
    for (;;) {
      let view: JobView;
      try {
        view = await fetchWithin(`${server}/jobs/${id}`, { headers }, POLL_MS, async (res) => {
          if (res.status === 404) throw Object.assign(new Error(`the server has no job ${id}`), { fatal: true });
          if (!res.ok) throw new Error(`HTTP ${res.status}`);
          return (await res.json()) as JobView;
        });
        down = 0;
      } catch (err) {
        if ((err as { fatal?: boolean }).fatal) throw err;
        down++;
        const note = `server unreachable (${(err as Error).message}); retrying`;
        if (bar && started) bar.update({ note });
        else if (down === 1 || down % 10 === 0) say(note);
        await sleep(Math.min(5000, 250 * 2 ** Math.min(down, 5)));
        continue;
      }
      const payload = {
        rate: view.items_per_s === null ? "-" : view.items_per_s.toFixed(0),
        eta_s: view.eta_s === null ? "-" : formatSeconds(view.eta_s),
        mean: view.mean_reward === null ? "-" : view.mean_reward.toFixed(3),
        note: view.status,
      };
      if (bar) {
        if (!started) bar.start(view.total, view.done, payload);
        else bar.update(view.done, payload);
        started = true;
      } else if (Date.now() - lastLine > 5000 || view.status !== "running") {
        lastLine = Date.now();
        say(`job ${id}: ${view.status} ${view.done}/${view.total}, ${payload.rate} items/s, ETA ${payload.eta_s}`);
      }
      if (view.status === "done" || view.status === "failed" || view.status === "cancelled") return view;
      await sleep((a.pollS ?? 0.5) * 1000);
    }
  } finally {
    bar?.stop();
  }
}

/** Writes the results to `path`, in input order; a cut download goes on from the last whole line. */
async function download(server: string, headers: Record<string, string>, id: string, path: string): Promise<void> {
  const out = createWriteStream(path);
  let lines = 0;
  for (let attempt = 0; ; attempt++) {
    try {
      // A cut or timed-out download goes on from the last whole line it wrote.
      await fetchWithin(`${server}/jobs/${id}/results?from=${lines}&follow=false`, { headers }, DOWNLOAD_MS, async (res) => {
        if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
        let rest = "";
        const decoder = new TextDecoder();
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          const text = rest + decoder.decode(chunk, { stream: true });
          const cut = text.lastIndexOf("\n");
          if (cut < 0) {
            rest = text;
            continue;
          }
          const whole = text.slice(0, cut + 1);
          rest = text.slice(cut + 1);
          if (!out.write(whole)) await once(out, "drain");
          for (let i = 0; i < whole.length; i++) if (whole.charCodeAt(i) === 10) lines++;
        }
      });
      break;
    } catch (err) {
      if (attempt >= 30) throw new Error(`downloading results failed: ${(err as Error).message}`);
      say(`results download cut after ${lines} lines (${(err as Error).message}); going on`);
      await sleep(1000);
    }
  }
  out.end();
  await once(out, "finish");
  say(`wrote ${lines} results to ${path}`);
}

/** The summary as text, with the reward histogram drawn in the terminal. */
export function report(v: JobView): string {
  const out: string[] = [];
  const c = v.counts;
  out.push(`job ${v.id}: ${v.status}, ${v.done}/${v.total} items: ${c.ok} ok, ${c.error} error, ${c.invalid} invalid` + (v.items_per_s ? `, ${v.items_per_s.toFixed(0)} items/s` : ""));
  if (v.error) out.push(`error: ${v.error}`);
  out.push(`mean reward ${v.mean_reward === null ? "n/a" : v.mean_reward.toFixed(4)}`);
  const s = v.summary;
  if (!s) return out.join("\n");
  const max = Math.max(1, ...s.histogram.bins.map((b) => b.count), s.histogram.below_0, s.histogram.above_1);
  const bar = (n: number) => "█".repeat(Math.round((n / max) * 40)) || (n ? "▏" : "");
  out.push("reward histogram:");
  if (s.histogram.below_0) out.push(`  < 0.0     ${String(s.histogram.below_0).padStart(8)} ${bar(s.histogram.below_0)}`);
  for (const b of s.histogram.bins) out.push(`  ${b.from.toFixed(1)}-${b.to.toFixed(1)}${b.to === 1 ? "]" : ")"}  ${String(b.count).padStart(8)} ${bar(b.count)}`);
  if (s.histogram.above_1) out.push(`  > 1.0     ${String(s.histogram.above_1).padStart(8)} ${bar(s.histogram.above_1)}`);
  if (s.groups) {
    const ks = Object.entries(s.groups.pass_at_k)
      .map(([k, p]) => `pass@${k} ${p.value === null ? "n/a" : p.value.toFixed(4)} (${p.groups} groups)`)
      .join(", ");
    out.push(`${s.groups.count} groups by ${s.groups.field} (pass: reward >= ${s.groups.pass_threshold}): ${ks}`);
  }
  if (s.slowest.length) out.push(`slowest: ${s.slowest.map((x) => `#${x.index}${x.id !== null && x.id !== undefined ? ` (id ${JSON.stringify(x.id)})` : ""} ${x.elapsed_ms.toFixed(1)} ms`).join(", ")}`);
  return out.join("\n");
}

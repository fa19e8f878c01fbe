/**
 * `assay score in.jsonl -o out.jsonl`: scores a JSONL file in-process and writes one result per
 * input line, in input order, streaming (memory stays bounded by the window). A line that is not
 * a JSON object becomes an `invalid` result; no line is ever lost. `--resume` continues a run
 * that stopped: lines already in the output are kept and skipped.
 */
import { createReadStream, createWriteStream, existsSync, statSync, truncateSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { once } from "node:events";
import cliProgress from "cli-progress";
import pLimit from "p-limit";
import pino from "pino";
import { formatSeconds } from "./format.js";
import type { RewardResult } from "../core/types.js";
import { loadConfig, SETTINGS } from "../core/config.js";
import { createRuntime } from "../core/runtime.js";
import { lineText, tooDeep } from "../jobs/chunk.js";
import { lines as jsonlLines } from "../server/routes/jobs.js";

export interface ScoreArgs {
  input: string;
  output: string;
  verifier?: string;
  concurrency: number;
  deadlineMs?: number;
  resume: boolean;
  progress: boolean;
}

export interface ScoreSummary {
  lines: number;
  skipped: number;
  counts: Record<string, number>;
  rewardSum: number;
  seconds: number;
  /** The first invalid lines, "line N: reason", for stderr. */
  invalidLines: string[];
  /**
   * Items whose gold result was empty (`details.gold_empty`, the sql verifier): with the default
   * `empty_gold: "match"` any query returning nothing scores 1 on them, a reward a policy can learn.
   */
  goldEmpty: number;
}

/** How many invalid lines the summary names on stderr (the output file has every one). */
const SHOWN_INVALID = 5;

export interface LineCount {
  /** Newline bytes (0x0a): the file's whole lines. */
  newlines: number;
  /** Lines as a reader sees them: the whole ones plus a last one with no newline, if any. */
  lines: number;
  /** Byte offset just past the last newline (0 if none): where a cut-off last line starts. */
  wholeBytes: number;
  size: number;
}

/**
 * Counts a file's lines by streaming its bytes (never one string: a file over ~512 MiB is more
 * than a JS string holds). A missing file has none. `\r` is no line break, as for POST /jobs.
 */
export async function countLines(path: string): Promise<LineCount> {
  const count: LineCount = { newlines: 0, lines: 0, wholeBytes: 0, size: 0 };
  if (!existsSync(path)) return count;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    let at = chunk.indexOf(0x0a);
    while (at >= 0) {
      count.newlines++;
      count.wholeBytes = count.size + at + 1;
      at = chunk.indexOf(0x0a, at + 1);
    }
    count.size += chunk.length;
  }
  count.lines = count.newlines + (count.size > count.wholeBytes ? 1 : 0);
  return count;
}

function parseLine(line: string, lineNo: number, maxDepth: number, defaultVerifier?: string): { item: unknown } | { result: RewardResult } {
  // Nesting past ASSAY_MAX_DEPTH is refused before parsing, as the server does: deeper JSON
  // overflows the stack of whatever walks it.
  if (tooDeep(line, maxDepth)) return { result: invalid(lineNo, `line ${lineNo} is nested deeper than ${maxDepth} levels; flatten it (or raise ASSAY_MAX_DEPTH)`) };
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return { result: invalid(lineNo, `line ${lineNo} is not valid JSON: ${(e as Error).message}`) };
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) {
    return { result: invalid(lineNo, `line ${lineNo} must be a JSON object with verifier and response`) };
  }
  const item = value as Record<string, unknown>;
  if (item.verifier === undefined && defaultVerifier) item.verifier = defaultVerifier;
  return { item };
}

/**
 * A blank line keeps its place as an invalid result (so output line N is input line N), as a
 * batch job does with `--server`; blank lines at the end of the file are no items in either.
 */
function blankLine(lineNo: number): RewardResult {
  return invalid(lineNo, `line ${lineNo} is blank; remove it (one JSON item per line)`);
}

function invalid(lineNo: number, reason: string): RewardResult {
  return { id: null, verifier: "", reward: null, status: "invalid", reason, details: { line: lineNo }, elapsed_ms: 0 };
}

/** The input and the output's folder, checked before anything starts: a clear error, not a stack. */
function checkPaths(args: ScoreArgs): void {
  let input;
  try {
    input = statSync(args.input);
  } catch {
    throw new Error(`input ${args.input} does not exist; give the path of a JSONL file`);
  }
  if (!input.isFile()) throw new Error(`input ${args.input} is not a file; give the path of a JSONL file`);
  const folder = dirname(resolve(args.output));
  if (!existsSync(folder)) throw new Error(`the output's folder ${folder} does not exist; create it (mkdir -p ${JSON.stringify(folder)}) or give -o a path in an existing folder`);
  if (existsSync(args.output) && statSync(args.output).isDirectory()) throw new Error(`-o ${args.output} is a folder; give a file path such as ${join(args.output, "results.jsonl")}`);
}

export async function score(args: ScoreArgs): Promise<ScoreSummary> {
  checkPaths(args);
  const config = loadConfig(process.env, { batchConcurrency: args.concurrency, ...(args.deadlineMs ? { deadlineMs: args.deadlineMs } : {}) });
  // Logs go to stderr, and quieter than the server's unless ASSAY_LOG_LEVEL asks for more.
  const level = config.logLevel === SETTINGS.logLevel.default ? "warn" : config.logLevel;
  const runtime = await createRuntime(config, { log: pino({ level }, pino.destination(2)) });
  const { scorer } = runtime;
  // A misspelt --verifier would make every line that relies on it invalid: refuse before scoring.
  const unknown = args.verifier === undefined ? undefined : runtime.registry.unknownVerifier(args.verifier);
  if (unknown) {
    await runtime.close();
    throw new Error(`--verifier: ${unknown}`);
  }
  // Only whole lines of the output count: a line cut off by a crash is rewritten.
  const done = args.resume ? await countLines(args.output) : undefined;
  const skip = done?.newlines ?? 0;
  // Drop a partial last line, if any, before appending.
  if (done && skip > 0 && done.size > done.wholeBytes) truncateSync(args.output, done.wholeBytes);
  const out = createWriteStream(args.output, { flags: args.resume ? "a" : "w" });
  const total = (await countLines(args.input)).lines;
  const bar = args.progress
    ? new cliProgress.SingleBar(
        { format: "scoring |{bar}| {value}/{total} lines | {rate} lines/s | ETA {eta_formatted} | mean reward {mean}", etaBuffer: 200, formatTime: (t: number | string) => formatSeconds(t) },
        cliProgress.Presets.shades_classic,
      )
    : null;
  const t0 = performance.now();
  const summary: ScoreSummary = { lines: 0, skipped: skip, counts: {}, rewardSum: 0, seconds: 0, invalidLines: [], goldEmpty: 0 };
  bar?.start(Math.max(total - skip, 0), 0, { rate: "0", mean: "-" });

  const limit = pLimit(args.concurrency);
  const window = Math.max(64, args.concurrency * 8);
  const pending: Promise<RewardResult>[] = [];
  let written = 0;
  const write = async (r: RewardResult) => {
    if (!out.write(JSON.stringify(r) + "\n")) await once(out, "drain");
    written++;
    if (r.status === "invalid" && summary.invalidLines.length < SHOWN_INVALID) summary.invalidLines.push(`line ${skip + written}: ${r.reason}`);
    summary.counts[r.status] = (summary.counts[r.status] ?? 0) + 1;
    if (r.reward !== null) summary.rewardSum += r.reward;
    if ((r.details as { gold_empty?: unknown } | undefined)?.gold_empty === true) summary.goldEmpty++;
    const scored = summary.counts.ok ?? 0;
    bar?.update(written, {
      rate: (written / ((performance.now() - t0) / 1000)).toFixed(0),
      mean: scored ? (summary.rewardSum / scored).toFixed(3) : "-",
    });
  };

  // Lines exactly as POST /jobs reads them: split on `\n` only (a lone `\r` is JSON whitespace),
  // a leading BOM dropped, then lineText.
  let lineNo = 0;
  let blanks = 0; // blank lines not yet placed: placed when an item follows, dropped at the end
  for await (const raw of jsonlLines(createReadStream(args.input), Infinity)) {
    lineNo++;
    const line = lineText(raw);
    if (lineNo <= skip) continue;
    if (!line.trim()) {
      blanks++;
      continue;
    }
    for (; blanks > 0; blanks--) {
      pending.push(Promise.resolve(blankLine(lineNo - blanks)));
      while (pending.length >= window) await write(await pending.shift()!);
    }
    const parsed = parseLine(line, lineNo, config.maxDepth, args.verifier);
    pending.push("result" in parsed ? Promise.resolve(parsed.result) : limit(() => scorer.score(parsed.item)));
    // Results leave in input order; the window keeps memory bounded.
    while (pending.length >= window) await write(await pending.shift()!);
  }
  while (pending.length) await write(await pending.shift()!);
  out.end();
  await once(out, "finish");
  bar?.stop();
  await runtime.close();
  summary.lines = written;
  summary.seconds = (performance.now() - t0) / 1000;
  return summary;
}

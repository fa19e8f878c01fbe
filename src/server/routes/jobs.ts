/**
 * /jobs: batch scoring jobs over the jobs service (src/jobs). `POST /jobs` takes JSONL
 * (`application/x-ndjson`, one item per line, streamed into the store under ASSAY_JOB_MAX_BODY),
 * a multipart upload of such a file, or JSON `{items, ...options}` (validated from openapi.yaml
 * like every JSON body). Knows no verifier.
 */
import { Router, type Request, type RequestHandler } from "express";
import { once } from "node:events";
import type { Readable } from "node:stream";
import busboy from "busboy";
import { check } from "../../core/contract.js";
import { fieldOf } from "../../core/schema.js";
import { HttpError } from "../errors.js";
import { clientGone, type RouteDeps } from "../http.js";
import { JobRequestError, type JobService } from "../../jobs/service.js";
import type { JobOptions } from "../../jobs/summary.js";

/** A query parameter written as a decimal integer (`0x2`, `1e3`, an empty or repeated value: NaN). */
const decimal = (v: unknown): number => (typeof v === "string" && /^\d{1,16}$/.test(v) ? Number(v) : NaN);

/** Longest single JSONL line accepted (an item's prompt and response are capped at 1 MiB each). */
const MAX_LINE_BYTES = 16 * 1024 ** 2;

/** Service refusals as HTTP errors; anything else is rethrown (a 500). */
function asHttp(err: unknown): unknown {
  if (err instanceof JobRequestError) {
    return new HttpError(err.status, err.message, err.field, err.status === 413 ? { Connection: "close" } : {});
  }
  return err;
}

/** Longest the upload's parsing runs before the event loop gets a turn, ms. */
export const UPLOAD_SLICE_MS = 8;

/**
 * Splits a byte stream into lines, with a cap on the whole and on each line (413 past either).
 * Bounded slices: a fast client's upload arrives faster than it is parsed and stored, and a
 * stream's buffered chunks come through `for await` as microtasks, so without a break a 100 MB
 * upload held every other request for seconds. Every UPLOAD_SLICE_MS (the consumer's parsing
 * and storing of the lines included: it runs while this generator waits at `yield`) the event
 * loop takes a turn.
 */
export async function* lines(stream: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<string> {
  let since = performance.now();
  for await (const line of splitLines(stream, maxBytes)) {
    yield line;
    if (performance.now() - since > UPLOAD_SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      since = performance.now();
    }
  }
}

async function* splitLines(stream: AsyncIterable<Buffer | string>, maxBytes: number): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8");
  let total = 0;
  let partial: string[] = [];
  let partialLen = 0;
  let lineNo = 0;
  for await (const chunk of stream) {
    const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    total += buf.length;
    if (total > maxBytes) throw new JobRequestError(413, `upload is over the limit of ${maxBytes} bytes; split the dataset (or raise ASSAY_JOB_MAX_BODY)`);
    let text = decoder.decode(buf, { stream: true });
    let nl = text.indexOf("\n");
    while (nl >= 0) {
      partial.push(text.slice(0, nl));
      lineNo++;
      yield partial.length === 1 ? partial[0] : partial.join("");
      partial = [];
      partialLen = 0;
      text = text.slice(nl + 1);
      nl = text.indexOf("\n");
    }
    if (text) {
      partial.push(text);
      partialLen += Buffer.byteLength(text); // UTF-8 bytes, as the limit says (a CJK line is 3 bytes a character)
      if (partialLen > MAX_LINE_BYTES) throw new JobRequestError(413, `line ${lineNo + 1} is over ${MAX_LINE_BYTES} bytes; one item per line`);
    }
  }
  const last = partial.join("") + decoder.decode();
  if (last) yield last;
}

/** Options from the query string (and a multipart upload's fields), typed and checked against openapi.yaml JobOptions. */
function optionsOf(raw: Record<string, unknown>, where: string): JobOptions {
  const o: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (typeof value !== "string") throw new HttpError(400, `${where} ${key} must be given once, as text`, key);
    if (key === "k") o.k = value.split(",").map((s) => (/^\s*\d+\s*$/.test(s) ? Number(s) : s));
    else if (key === "deadline_ms" || key === "pass_threshold") o[key] = /^\s*-?(\d+\.?\d*|\.\d+)\s*$/.test(value) ? Number(value) : value;
    else o[key] = value;
  }
  const problem = check("JobOptions", o);
  if (problem) throw new HttpError(400, `${where} ${problem}`, fieldOf(problem));
  return o as JobOptions;
}

/** A multipart upload: option fields (before the file), then one file of JSONL. */
async function multipart(req: Request, query: Record<string, unknown>, maxBytes: number): Promise<{ options: JobOptions; lines: AsyncIterable<string> }> {
  const fields: Record<string, unknown> = {};
  let bb: busboy.Busboy;
  try {
    bb = busboy({ headers: req.headers, limits: { files: 1, fields: 16, fieldSize: 64 * 1024, fileSize: maxBytes + 1 } });
  } catch (err) {
    throw new HttpError(400, `multipart upload is malformed: ${(err as Error).message}`);
  }
  let seenFile = false;
  let late: string | undefined;
  let repeated: string | undefined;
  let moreFiles = false;
  const closed = new Promise<void>((resolve) => bb.once("close", resolve));
  bb.on("filesLimit", () => (moreFiles = true));
  const file = await new Promise<Readable | null>((resolve, reject) => {
    bb.on("field", (name, value) => {
      if (seenFile) late ??= name;
      else if (Object.hasOwn(fields, name)) repeated ??= name;
      else fields[name] = value;
    });
    bb.on("file", (_name, stream) => {
      seenFile = true;
      resolve(stream);
    });
    bb.on("close", () => resolve(null));
    bb.on("error", (err) => reject(new HttpError(400, `multipart upload is malformed: ${(err as Error).message}`)));
    // pipe() neither ends nor destroys busboy when the client goes away mid-upload, and busboy
    // settles only when it ends or is destroyed: without this the file stream never ends, the
    // upload never fails, and its stored items stay behind under an unsealed job.
    req.once("close", () => {
      if (!req.complete) bb.destroy(new Error("the client closed the connection before the upload ended"));
    });
    req.pipe(bb);
  });
  if (!file) throw new HttpError(400, "multipart upload has no file; send the JSONL dataset as a file field", "file");
  // As the query string refuses a repeated option, a repeated field is refused, not last-wins.
  if (repeated !== undefined) {
    file.resume();
    throw new HttpError(400, `multipart field ${JSON.stringify(repeated)} is given more than once; give each option once`, repeated);
  }
  const options = optionsOf({ ...query, ...fields }, "option");
  const stream = file;
  // Options shape how items are stored (the group field), so a field after the file is refused, not ignored.
  async function* checked() {
    yield* lines(stream, maxBytes);
    await closed;
    if (late) throw new JobRequestError(400, `multipart field ${JSON.stringify(late)} comes after the file; put option fields before it`, late);
    // A second file was dropped unread: refused, not scored as a dataset that lacks it.
    if (moreFiles) throw new JobRequestError(400, "multipart upload has more than one file; send the dataset as one JSONL file (concatenate them)", "file");
  }
  return { options, lines: checked() };
}

function jobId(req: Request): string {
  return String(req.params.id);
}

export function jobRoutes({ runtime, body }: RouteDeps): Router {
  const r = Router();
  const { config } = runtime;
  const jobs = async (): Promise<JobService> => {
    const j = await runtime.services.jobs();
    j.start(runtime.scorer);
    return j;
  };
  // Unfinished jobs resume when the server starts, not at the first request. A store that does
  // not answer yet (a PostgreSQL still starting, a network blip) is tried again, backing off to
  // 30 s, until it does: one try left a replica that never resumed or took over a job until
  // some /jobs request reached it.
  const startJobs = (retryMs: number): void => {
    if (runtime.closed) return;
    jobs().catch((err) => {
      if (runtime.closed) return;
      runtime.log.error({ err, retry_in_ms: retryMs }, "jobs: cannot start; trying again");
      setTimeout(() => startJobs(Math.min(30_000, retryMs * 2)), retryMs).unref();
    });
  };
  startJobs(500);

  const jsonBody = body("JobRequest");
  const onlyJson: RequestHandler = (req, res, next) => (req.is("application/json") ? jsonBody(req, res, next) : next());

  // A default verifier that does not exist would make every line that relies on it invalid.
  const checkVerifier = (o: JobOptions): JobOptions => {
    const unknown = o.verifier === undefined ? undefined : runtime.registry.unknownVerifier(o.verifier);
    if (unknown) throw new HttpError(400, `verifier: ${unknown}`, "verifier");
    return o;
  };

  r.post("/jobs", onlyJson, async (req, res) => {
    const service = await jobs();
    let created: { id: string; total: number };
    try {
      if (req.is("application/json")) {
        const { items, ...options } = req.body as JobOptions & { items: unknown[] };
        if (Object.keys(req.query).length) throw new HttpError(400, "a JSON body carries its options itself; drop the query string", "query");
        created = await service.submit(
          (async function* () {
            yield* items;
          })(),
          checkVerifier(options),
        );
      } else if (req.is("multipart/form-data")) {
        const { options, lines: source } = await multipart(req, req.query, config.jobs.maxBytes);
        created = await service.submit(source, checkVerifier(options));
      } else {
        created = await service.submit(lines(req, config.jobs.maxBytes), checkVerifier(optionsOf(req.query, "query parameter")));
      }
    } catch (err) {
      throw asHttp(err);
    }
    res.status(201).setHeader("Location", `/jobs/${created.id}`).json({ id: created.id, total: created.total, status: "queued" });
  });

  r.get("/jobs", async (req, res) => {
    const raw = req.query.limit;
    const limit = raw === undefined ? 100 : decimal(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new HttpError(400, "query parameter limit must be an integer from 1 to 10000", "limit");
    res.json({ jobs: await (await jobs()).list(limit) });
  });

  r.get("/jobs/:id", async (req, res) => {
    const service = await jobs();
    const s = req.query.summary;
    if (s !== undefined && s !== "true" && s !== "false") throw new HttpError(400, "query parameter summary must be true or false", "summary");
    try {
      res.json(await service.get(jobId(req), s === undefined ? "finished" : s === "true"));
    } catch (err) {
      throw asHttp(err);
    }
  });

  r.delete("/jobs/:id", async (req, res) => {
    const service = await jobs();
    try {
      await service.delete(jobId(req));
    } catch (err) {
      throw asHttp(err);
    }
    res.status(204).end();
  });

  r.post("/jobs/:id/cancel", async (req, res) => {
    const service = await jobs();
    try {
      res.json(await service.cancel(jobId(req)));
    } catch (err) {
      throw asHttp(err);
    }
  });

  r.get("/jobs/:id/results", async (req, res) => {
    const service = await jobs();
    const from = req.query.from === undefined ? 0 : decimal(req.query.from);
    if (!Number.isSafeInteger(from) || from < 0) throw new HttpError(400, "query parameter from must be an integer >= 0 (the first item's index)", "from");
    const f = req.query.follow;
    if (f !== undefined && f !== "true" && f !== "false" && f !== "1" && f !== "0") throw new HttpError(400, "query parameter follow must be true or false", "follow");
    const follow = f === undefined || f === "true" || f === "1";
    const id = jobId(req);
    try {
      await service.get(id, false);
    } catch (err) {
      throw asHttp(err);
    }
    const gone = clientGone(req, res);
    res.status(200).type("application/x-ndjson");
    res.flushHeaders();
    for await (const text of service.results(id, from, follow, gone)) {
      if (!res.write(text)) await Promise.race([once(res, "drain"), once(res, "close")]);
      if (gone.aborted) return;
    }
    res.end();
  });

  return r;
}

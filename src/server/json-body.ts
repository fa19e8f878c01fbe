/**
 * The JSON body parser of every route (issue 38): express.json's result and errors, with the
 * common request read without it. express.json (body-parser) runs type-is, content-type and
 * charset parsing, raw-body's stream machinery, http-errors and iconv on every request: ~7% of a
 * `/reward` request's CPU and ~3% of a 256-item batch's, beyond JSON.parse itself.
 *
 * The common request is a bare `Content-Type: application/json`, no Content-Encoding, a
 * Content-Length within the limit and a body that opens with `{`: read here (the chunks, one
 * concat), the depth guard, UTF-8 decode, JSON.parse. Everything else (gzip, another charset,
 * chunked, over the limit, a body that opens with anything but `{`) goes to express.json itself,
 * from the start or, once read, replayed to it from the bytes; so every refusal reads as it did.
 */
import express, { type Request, type RequestHandler } from "express";
import { Readable } from "node:stream";
import { depthGuard } from "./depth.js";
import { HttpError } from "./errors.js";

const OPEN_OBJ = 0x7b;
/** A declared Content-Length this many times the limit is answered 413 before its body is read. */
const FAR_OVER = 4;
/** Whether a Content-Length header is so far over `limit` that its body is refused unread. */
export const farOverLimit = (header: string | undefined, limit: number): boolean => header !== undefined && Number(header) > FAR_OVER * limit;
const ignore = () => {};
/** body-parser's own 413, as it builds it. */
const tooLarge = (length: number, limit: number) =>
  Object.assign(new Error("request entity too large"), { type: "entity.too.large", status: 413, statusCode: 413, expose: true, expected: length, length, limit });

/**
 * A body this large (bytes) is decoded, parsed and handed on in a turn of the event loop of its
 * own: ~12 ms of CPU for a 1 MiB completion (decode, JSON.parse, the schema's length checks, the
 * verifier's first slice), so seven that arrive together no longer hold /healthz for the sum of
 * them in one turn. Smaller bodies, batches of short items included, go on at once.
 */
export const OWN_TURN_BYTES = 256 * 1024;
const waitingTurn: (() => void)[] = [];
function inOwnTurn(f: () => void): void {
  if (waitingTurn.push(f) === 1) setImmediate(takeTurn);
}
/** One body a turn: an immediate queued from inside an immediate runs on the loop's next turn. */
function takeTurn(): void {
  try {
    waitingTurn.shift()!();
  } finally {
    if (waitingTurn.length) setImmediate(takeTurn);
  }
}

export function jsonBody(limit: number, maxDepth: number): RequestHandler {
  const guard = depthGuard(maxDepth);
  const full = express.json({ limit, strict: true, type: "application/json", verify: guard });
  return (req, res, next) => {
    const h = req.headers;
    const length = h["content-length"] === undefined ? NaN : Number(h["content-length"]);
    if (farOverLimit(h["content-length"], limit)) {
      // body-parser's own 413, but now: it reads the whole body off the socket first, so a
      // declared 10 GB held the connection until it came or the request timed out. The body is
      // left unread, so the connection closes after the answer. Only far over the limit: a
      // client a little over it is sending its body, and one whose connection is closed under
      // its writes may see a reset instead of the 413 that says what to change.
      res.setHeader("Connection", "close");
      return next(tooLarge(length, limit));
    }
    if (h["content-length"] === undefined && h["transfer-encoding"] !== undefined) {
      // A body of unknown length: body-parser answers one over the limit only once the request
      // ends (it reads off the rest first), so an endless chunked body held a core reading it,
      // 600 MB a second, until the request timed out.
      const answer = onceOnly(next);
      full(req, res, answer);
      cutOffFarOver(req, res, limit, answer);
      return;
    }
    if (h["content-type"] !== "application/json" || h["content-encoding"] !== undefined || h["transfer-encoding"] !== undefined || !(length > 0 && length <= limit) || req.readableEnded) {
      return full(req, res, next);
    }
    const chunks: Buffer[] = [];
    let got = 0;
    const onData = (c: Buffer) => {
      chunks.push(c);
      got += c.length;
    };
    const detach = (err?: unknown) => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("close", onClose);
      req.off("error", onError);
      if (err) req.on("error", ignore); // a client gone: a later 'error' of the same end must not go unheard
    };
    const done = (err?: unknown) => {
      detach(err);
      next(err);
    };
    // The body is whole: a 'close' after it (the stream's own, or a client gone while the body
    // waits for its turn) is no longer an abort.
    const onEnd = () => (detach(), got > OWN_TURN_BYTES ? inOwnTurn(parse) : parse());
    const parse = () => {
      const buf = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, got);
      if (got !== length || buf[0] !== OPEN_OBJ) return replay(req, buf, full, res, done);
      try {
        guard(req, res, buf);
      } catch (e) {
        return done(Object.assign(e as Error, { type: (e as { type?: string }).type ?? "entity.verify.failed" })); // as body-parser marks it
      }
      let body: unknown;
      try {
        body = JSON.parse(buf.toString("utf8"));
      } catch (e) {
        // body-parser's type for a parse failure; its message is JSON.parse's own, as here.
        return done(Object.assign(e as Error, { type: "entity.parse.failed", status: 400 }));
      }
      req.body = body;
      done();
    };
    // 'close' before 'end': the client went away mid-body (raw-body's "request aborted").
    const aborted = () => done(Object.assign(new Error("request aborted"), { type: "request.aborted", status: 400 }));
    const onClose = aborted;
    // Node reports a client gone mid-body as an 'error' ("aborted", ECONNRESET) before 'close'.
    const onError = (e: Error & { code?: string }) => (e.code === "ECONNRESET" ? aborted() : done(new HttpError(400, e.message)));
    req.on("data", onData);
    req.once("end", onEnd);
    req.once("close", onClose);
    req.once("error", onError);
  };
}

/** `next` for the first call only: body-parser calls it again once a request cut off ends. */
function onceOnly(next: (err?: unknown) => void): (err?: unknown) => void {
  let called = false;
  return (err?: unknown) => {
    if (called) return;
    called = true;
    next(err);
  };
}

/**
 * Counts a body of unknown length beside body-parser; once FAR_OVER times the limit has come,
 * answers 413 and closes the connection after the answer, as for a declared length far over it.
 */
function cutOffFarOver(req: Request, res: Parameters<RequestHandler>[1], limit: number, answer: (err?: unknown) => void): void {
  let got = 0;
  const count = (c: Buffer) => {
    got += c.length;
    if (got <= FAR_OVER * limit) return;
    req.off("data", count);
    res.setHeader("Connection", "close");
    res.once("finish", () => req.socket.destroy());
    answer(tooLarge(got, limit));
  };
  req.on("data", count);
  req.once("end", () => req.off("data", count));
}

/**
 * A body already read, handed to express.json as if it came off the socket: the rare body the
 * common path does not decide (one that opens with whitespace, a byte-order mark, `[` or a
 * scalar) gets body-parser's own result or error.
 */
function replay(req: Request, buf: Buffer, full: RequestHandler, res: Parameters<RequestHandler>[1], done: (err?: unknown) => void): void {
  const stream = Object.assign(Readable.from([buf], { objectMode: false }), { headers: req.headers });
  full(stream as unknown as Request, res, (err?: unknown) => {
    if (!err) req.body = (stream as unknown as Request).body;
    done(err);
  });
}

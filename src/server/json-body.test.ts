/**
 * jsonBody (issue 38) reads the common JSON request without body-parser; every request, common or
 * not, must come out as express.json's would: the same body, or the same error (status, type,
 * message). Each case is sent as raw bytes to two apps, one behind express.json and one behind
 * jsonBody, and the answers compared.
 */
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import { createServer, type Server } from "node:http";
import { gzipSync } from "node:zlib";
import express, { type NextFunction, type Request, type Response, type RequestHandler } from "express";
import { EventEmitter } from "node:events";
import { jsonBody, OWN_TURN_BYTES } from "./json-body.js";
import { depthGuard } from "./depth.js";

const LIMIT = 300;
const DEPTH = 4;

const seen: Record<string, unknown[]> = { theirs: [], ours: [] };
function appWith(name: string, parser: RequestHandler): Server {
  const app = express();
  app.post("/", parser, (req, res) => {
    res.json({ body: req.body === undefined ? "(undefined)" : req.body });
  });
  app.use((err: any, _req: Request, res: Response, _next: NextFunction) => {
    const e = { status: err.status, type: err.type, message: err.message };
    seen[name]!.push(e);
    if (!res.headersSent) res.status(500).json({ error: e });
  });
  return createServer(app);
}
const theirs = appWith("theirs", express.json({ limit: LIMIT, strict: true, type: "application/json", verify: depthGuard(DEPTH) }));
const ours = appWith("ours", jsonBody(LIMIT, DEPTH));
await Promise.all([theirs, ours].map((s) => new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve))));
after(() => {
  theirs.close();
  ours.close();
});

/** Sends `head` and the body parts (a pause between them), returns the whole response body. */
function raw(server: Server, head: string, parts: Buffer[]): Promise<string> {
  const port = (server.address() as { port: number }).port;
  return new Promise((resolve, reject) => {
    const s = connect(port, "127.0.0.1");
    const out: Buffer[] = [];
    s.on("data", (d) => out.push(d));
    s.on("error", reject);
    s.on("end", () => {
      const text = Buffer.concat(out).toString("utf8");
      resolve(text.slice(text.indexOf("\r\n\r\n") + 4));
    });
    s.write(`POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${head}\r\n`);
    let i = 0;
    const next = () => {
      if (i < parts.length) {
        s.write(parts[i++]!);
        setTimeout(next, 5);
      }
    };
    next();
  });
}

const json = "Content-Type: application/json\r\n";
const sized = (b: Buffer, type = json) => `${type}Content-Length: ${b.length}\r\n`;
const B = (s: string) => Buffer.from(s, "utf8");
const deep = B('{"a":{"b":{"c":{"d":{"e":1}}}}}');
const cases: [string, string, Buffer[]][] = [
  ["a plain object", sized(B('{"a":1,"s":"x\\"y"}')), [B('{"a":1,"s":"x\\"y"}')]],
  ["in several chunks", sized(B('{"items":[1,2,3],"t":"ü"}')), [B('{"items":[1,'), B("2,3],"), Buffer.from('"t":"ü"}', "utf8").subarray(0, 5), Buffer.from('"t":"ü"}', "utf8").subarray(5)]],
  ["not JSON", sized(B('{"a":')), [B('{"a":')]],
  ["a trailing comma", sized(B('{"a":1,}')), [B('{"a":1,}')]],
  ["leading whitespace", sized(B('  \n{"a":1}')), [B('  \n{"a":1}')]],
  ["a byte-order mark", sized(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), B('{"a":1}')])), [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), B('{"a":1}')])]],
  ["an array", sized(B("[1,2]")), [B("[1,2]")]],
  ["a string (strict)", sized(B('"x"')), [B('"x"')]],
  ["a number (strict)", sized(B("12")), [B("12")]],
  ["nested past the depth", sized(deep), [deep]],
  ["over the limit", sized(B(`{"a":"${"x".repeat(LIMIT)}"}`)), [B(`{"a":"${"x".repeat(LIMIT)}"}`)]],
  ["charset=utf-8", sized(B('{"a":1}'), "Content-Type: application/json; charset=utf-8\r\n"), [B('{"a":1}')]],
  ["charset=latin1", sized(B('{"a":1}'), "Content-Type: application/json; charset=latin1\r\n"), [B('{"a":1}')]],
  ["another type", sized(B('{"a":1}'), "Content-Type: text/plain\r\n"), [B('{"a":1}')]],
  ["gzip", sized(gzipSync(B('{"a":1}')), `${json}Content-Encoding: gzip\r\n`), [gzipSync(B('{"a":1}'))]],
  ["chunked", `${json}Transfer-Encoding: chunked\r\n`, [B('7\r\n{"a":1}\r\n0\r\n\r\n')]],
  ["empty", `${json}Content-Length: 0\r\n`, []],
  ["invalid UTF-8 in a string", sized(Buffer.concat([B('{"a":"'), Buffer.from([0xff, 0xfe]), B('"}')])), [Buffer.concat([B('{"a":"'), Buffer.from([0xff, 0xfe]), B('"}')])]],
];

for (const [name, head, parts] of cases) {
  test(`jsonBody answers as express.json does: ${name}`, async () => {
    const [a, b] = [await raw(theirs, head, parts), await raw(ours, head, parts)];
    assert.equal(b, a);
  });
}

test("a declared length over the limit is answered 413 at once, the body unread (body-parser read it all first)", async () => {
  const port = (ours.address() as { port: number }).port;
  const t0 = performance.now();
  const answer = await new Promise<string>((resolve, reject) => {
    const s = connect(port, "127.0.0.1", () => s.write(`POST / HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 10000000000\r\n\r\n{"a":"${"x".repeat(100)}`));
    const out: Buffer[] = [];
    s.on("data", (d) => out.push(d));
    s.on("error", reject);
    s.on("close", () => resolve(Buffer.concat(out).toString("utf8")));
    setTimeout(() => s.destroy(), 5000);
  });
  assert.ok(performance.now() - t0 < 2000, `answered after ${performance.now() - t0} ms`);
  assert.match(answer, /entity\.too\.large/);
  assert.match(answer, /Connection: close/i);
});

test("a chunked body that never ends is answered 413 once it is far over the limit, and the connection closed (body-parser read it to its end first)", async () => {
  const port = (ours.address() as { port: number }).port;
  const frame = Buffer.from(`400\r\n${"x".repeat(0x400)}\r\n`);
  let sent = 0;
  const answer = await new Promise<string>((resolve) => {
    const s = connect(port, "127.0.0.1");
    const out: Buffer[] = [];
    let open = true;
    s.on("data", (d) => out.push(d));
    s.on("error", () => {}); // a reset once the answer is out: the writes below run into it
    const give = setTimeout(() => s.destroy(), 10_000);
    s.on("close", () => {
      open = false;
      clearTimeout(give);
      resolve(Buffer.concat(out).toString("utf8"));
    });
    s.write(`POST / HTTP/1.1\r\nHost: x\r\n${json}Transfer-Encoding: chunked\r\n\r\n`);
    // Endless, as far as the server can tell: 1 KiB frames until it answers or closes (at most 256 MiB).
    const pump = () => {
      while (open && sent < 256 << 20) {
        sent += frame.length;
        if (!s.write(frame)) return void s.once("drain", pump);
      }
    };
    s.on("connect", pump);
  });
  assert.match(answer, /entity\.too\.large/, `no 413 after ${sent} bytes sent: ${answer.slice(0, 200)}`);
  assert.match(answer, /Connection: close/i);
  assert.ok(sent < 64 << 20, `the server read ${sent} bytes of a body over a ${LIMIT}-byte limit before it answered`);
});

test("a client that leaves mid-body: the same error as body-parser's (request.aborted), and the parser lets go", async () => {
  const before = { theirs: seen.theirs!.length, ours: seen.ours!.length };
  for (const server of [theirs, ours]) {
    const port = (server.address() as { port: number }).port;
    await new Promise<void>((resolve) => {
      const s = connect(port, "127.0.0.1", () => {
        s.write(`POST / HTTP/1.1\r\nHost: x\r\n${json}Content-Length: 100\r\n\r\n{"a":`);
        setTimeout(() => {
          s.destroy();
          resolve();
        }, 30);
      });
    });
  }
  const deadline = Date.now() + 5000;
  while ((seen.theirs!.length === before.theirs || seen.ours!.length === before.ours) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(seen.ours!.at(-1), seen.theirs!.at(-1));
  assert.equal((seen.ours!.at(-1) as { type: string }).type, "request.aborted");
});

test("large bodies that end in the same turn are parsed one a turn; a small one at once; each body whole", async () => {
  const parse = jsonBody(4 * OWN_TURN_BYTES, 8);
  let turn = 0;
  const ticking = setInterval(() => turn++, 0); // one a turn of the loop (timers phase)
  // Stand-ins for requests whose bodies have arrived (what the parser reads of a request).
  const request = (body: Buffer) => Object.assign(new EventEmitter(), { headers: { "content-type": "application/json", "content-length": String(body.length) }, readableEnded: false, body: undefined as unknown });
  const bodies = [2, 2, 2, 0].map((big, i) => Buffer.from(JSON.stringify({ i, pad: "x".repeat(big * OWN_TURN_BYTES) })));
  const parsedIn: (number | undefined)[] = bodies.map(() => undefined);
  const reqs = bodies.map((b, i) => {
    const req = request(b);
    parse(req as never, {} as never, (err?: unknown) => {
      assert.equal(err, undefined);
      assert.equal((req.body as { i: number }).i, i);
      parsedIn[i] = turn;
    });
    return req;
  });
  const at = turn;
  try {
    reqs.forEach((req, i) => (req.emit("data", bodies[i]), req.emit("end"), req.emit("close"))); // Node's own 'close' follows 'end'
    assert.deepEqual(parsedIn, [undefined, undefined, undefined, at], "the small body goes on at once, the large ones wait for a turn");
    for (let k = 0; k < 100 && parsedIn.includes(undefined); k++) await new Promise((r) => setTimeout(r, 1));
  } finally {
    clearInterval(ticking);
  }
  assert.equal(new Set(parsedIn.slice(0, 3)).size, 3, `large bodies parsed in turns ${parsedIn.slice(0, 3)}: one a turn`);
  assert.deepEqual(parsedIn.slice(0, 3), [...parsedIn.slice(0, 3)].sort((a, b) => a! - b!), "in the order they ended");
});

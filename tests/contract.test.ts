/** The HTTP contract, field by field, through supertest. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { parse } from "yaml";
import { testApp } from "./helpers.js";
import { check } from "../src/core/contract.js";
import { promptEnd, stripEndTokens } from "../src/server/routes/openrlhf.js";

const RESULT_KEYS = ["details", "elapsed_ms", "reason", "reward", "status", "verifier"];

describe("POST /reward", () => {
  test("scores one item with every result field", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/reward").send({ id: "q1", verifier: "exact", response: " Paris ", reference: "paris" }).expect(200);
    assert.deepEqual(Object.keys(res.body).sort(), ["id", ...RESULT_KEYS].sort());
    assert.equal(res.body.id, "q1");
    assert.equal(res.body.verifier, "exact");
    assert.equal(res.body.reward, 1);
    assert.equal(res.body.status, "ok");
    assert.equal(typeof res.body.reason, "string");
    assert.equal(typeof res.body.elapsed_ms, "number");
    assert.equal(check("RewardResult", res.body), null);
    assert.ok(res.headers["x-request-id"]);
  });

  test("the scoring routes' 200s carry express's JSON headers: the type with its charset, the length in UTF-8 bytes", async () => {
    const { app } = await testApp();
    for (const [path, body] of [
      ["/reward", { verifier: "exact", response: "Café ＡＢ ✓", reference: "café ab ✓" }],
      ["/reward/batch", { items: [{ verifier: "exact", response: "naïve", reference: "naive" }, { verifier: "exact", response: "東京", reference: "東京" }] }],
      // Past sendJson's 4096 units: encoded once into a Buffer, the length its byte count.
      ["/reward/batch", { items: [{ verifier: "exact", response: "naïve", reference: "naive" }, { verifier: "exact", response: "東京", reference: "東京" }, ...Array.from({ length: 60 }, (_, i) => ({ verifier: "exact", response: `Ünïcödé ✓ ${i}`, reference: "x" }))] }],
    ] as const) {
      const res = await request(app).post(path).send(body).buffer(true).parse((r, cb) => {
        const chunks: Buffer[] = [];
        r.on("data", (c: Buffer) => chunks.push(c));
        r.on("end", () => cb(null, Buffer.concat(chunks)));
      }).expect(200);
      assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
      const raw = res.body as Buffer;
      assert.equal(Number(res.headers["content-length"]), raw.length);
      const json = JSON.parse(raw.toString("utf8"));
      const results = path === "/reward" ? [json] : json.results;
      assert.equal(results[0].reward, path === "/reward" ? 1 : 0);
      if (path === "/reward/batch") assert.equal(results[1].details.extracted, "東京");
    }
  });

  test("a wrong answer is ok with reward 0, and id is absent when not sent", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/reward").send({ verifier: "exact", response: "Lyon", reference: "Paris" }).expect(200);
    assert.equal(res.body.status, "ok");
    assert.equal(res.body.reward, 0);
    assert.equal("id" in res.body, false);
  });

  test("malformed request: 400 with a JSON error naming the field", async () => {
    const { app } = await testApp();
    let res = await request(app).post("/reward").send({ verifier: "exact" }).expect(400);
    assert.equal(res.body.field, "response");
    assert.match(res.body.error, /response/);
    res = await request(app).post("/reward").send({ verifier: "exact", response: 5 }).expect(400);
    assert.equal(res.body.field, "response");
    res = await request(app).post("/reward").send({ verifier: "exact", response: "x", extra: 1 }).expect(400);
    assert.match(res.body.error, /unknown field "extra"/);
    res = await request(app).post("/reward").set("content-type", "application/json").send("{not json").expect(400);
    assert.match(res.body.error, /not valid JSON/);
    res = await request(app).post("/reward").set("content-type", "application/json").send("[1,2]").expect(400);
    assert.match(res.body.error, /JSON object/);
  });

  test("unknown verifier, bad reference, bad options: 400 naming the field (invalid results inside a batch)", async () => {
    const { app } = await testApp();
    let res = await request(app).post("/reward").send({ verifier: "nope", response: "x" }).expect(400);
    assert.equal(res.body.field, "verifier");
    assert.match(res.body.error, /unknown verifier "nope"; known: .*exact/);
    res = await request(app).post("/reward").send({ verifier: "choice", response: "B", reference: "not a letter" }).expect(400);
    assert.equal(res.body.field, "reference");
    res = await request(app).post("/reward").send({ verifier: "exact", response: "B", reference: "B", options: { bogus: true } }).expect(400);
    assert.equal(res.body.field, "options");
    assert.match(res.body.error, /bogus/);
    res = await request(app).post("/reward").send({ verifier: "regex", response: "B", reference: "(unclosed" }).expect(400);
    assert.equal(res.body.field, "reference");
    assert.match(res.body.error, /not valid RE2/);
    const batch = await request(app).post("/reward/batch").send({ items: [{ verifier: "nope", response: "x" }, { verifier: "regex", response: "B", reference: "(" }] }).expect(200);
    assert.deepEqual(batch.body.results.map((r: any) => [r.status, r.reward, r.details.field]), [["invalid", null, "verifier"], ["invalid", null, "reference"]]);
  });

  test("a deadline becomes status error with reward null, not a hung request", async () => {
    const { app } = await testApp({ ASSAY_DEADLINE_MS: "50" });
    const t0 = Date.now();
    let res = await request(app).post("/reward").send({ verifier: "test-sleep", response: "", options: { ms: 5000 } }).expect(200);
    assert.ok(Date.now() - t0 < 2000);
    assert.equal(res.body.status, "error");
    assert.equal(res.body.reward, null);
    assert.match(res.body.reason, /deadline of 50 ms/);
    // a per-item deadline overrides the default
    res = await request(app).post("/reward").send({ verifier: "test-sleep", response: "", options: { ms: 100 }, deadline_ms: 2000 }).expect(200);
    assert.equal(res.body.status, "ok");
  });

  test("verifier bugs become error/null, never a 5xx", async () => {
    const { app } = await testApp();
    for (const mode of ["throw", "nan", "null"]) {
      const res = await request(app).post("/reward").send({ verifier: "test-broken", response: "", options: { mode } }).expect(200);
      assert.equal(res.body.status, "error", mode);
      assert.equal(res.body.reward, null, mode);
    }
  });
});

describe("POST /reward/batch", () => {
  test("results in input order; one malformed item does not spoil the rest", async () => {
    const { app } = await testApp();
    const items = [
      { id: 0, verifier: "exact", response: "4", reference: "4" },
      { id: 1, verifier: "exact", response: 4 },
      "not an object",
      { id: 3, verifier: "choice", response: "The answer is (C).", reference: "C" },
      { id: 4, verifier: "test-sleep", response: "", options: { ms: 30 } },
      { id: 5, verifier: "exact", response: "5", reference: "4" },
    ];
    const res = await request(app).post("/reward/batch").send({ items }).expect(200);
    const r = res.body.results;
    assert.equal(r.length, items.length);
    assert.equal(check("BatchResponse", res.body), null);
    assert.deepEqual(r.map((x: any) => x.status), ["ok", "invalid", "invalid", "ok", "ok", "ok"]);
    assert.deepEqual(r.map((x: any) => x.reward), [1, null, null, 1, 1, 0]);
    assert.deepEqual(r.map((x: any) => x.id), [0, 1, undefined, 3, 4, 5]);
    assert.match(r[1].reason, /response/);
  });

  test("an integer id beyond 2^53 - 1 is invalid, naming id, not echoed back as another number", async () => {
    // Before: 2^60 + 1 came back as 1152921504606847000, so a client matching results by id
    // (or a trainer joining on it) saw another rollout's number.
    const { app } = await testApp();
    const body = `{"items":[{"id":1152921504606846977,"verifier":"exact","response":"a","reference":"a"},{"id":9007199254740991,"verifier":"exact","response":"a","reference":"a"},{"id":"1152921504606846977","verifier":"exact","response":"a","reference":"a"}]}`;
    const res = await request(app).post("/reward/batch").set("content-type", "application/json").send(body).expect(200);
    const r = res.body.results;
    assert.deepEqual([r[0].status, r[0].details.field, r[0].id], ["invalid", "id", undefined]);
    assert.deepEqual([r[1].status, r[1].id], ["ok", 9007199254740991]);
    assert.deepEqual([r[2].status, r[2].id], ["ok", "1152921504606846977"], "as a string it is echoed exactly");
  });

  test("items are scored concurrently, up to the configured limit", async () => {
    const { app } = await testApp({ ASSAY_BATCH_CONCURRENCY: "8" });
    const items = Array.from({ length: 8 }, () => ({ verifier: "test-sleep", response: "", options: { ms: 200 } }));
    const t0 = Date.now();
    await request(app).post("/reward/batch").send({ items }).expect(200);
    assert.ok(Date.now() - t0 < 1200, `8 x 200ms items took ${Date.now() - t0}ms`);
    const { app: serial } = await testApp({ ASSAY_BATCH_CONCURRENCY: "1" });
    const t1 = Date.now();
    await request(serial).post("/reward/batch").send({ items: items.slice(0, 4) }).expect(200);
    assert.ok(Date.now() - t1 >= 780, "concurrency 1 runs one at a time");
  });

  test("batch-level deadline applies to items without their own", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/reward/batch")
      .send({ deadline_ms: 40, items: [{ verifier: "test-sleep", response: "", options: { ms: 1000 } }, { verifier: "test-sleep", response: "", options: { ms: 100 }, deadline_ms: 3000 }] })
      .expect(200);
    assert.deepEqual(res.body.results.map((x: any) => x.status), ["error", "ok"]);
  });

  test("400 names the field; batch cap gives 413", async () => {
    const { app } = await testApp({ ASSAY_MAX_BATCH: "10" });
    let res = await request(app).post("/reward/batch").send({ item: [] }).expect(400);
    assert.match(res.body.error, /items|item/);
    res = await request(app).post("/reward/batch").send({ items: "x" }).expect(400);
    assert.equal(res.body.field, "items");
    res = await request(app).post("/reward/batch").send({ items: Array.from({ length: 11 }, () => ({ verifier: "exact", response: "" })) }).expect(413);
    assert.match(res.body.error, /ASSAY_MAX_BATCH/);
  });
});

describe("limits and auth", () => {
  test("over the in-flight cap: 429 with Retry-After, then serves again", async () => {
    const { app, limiter } = await testApp({ ASSAY_MAX_INFLIGHT: "4", ASSAY_RETRY_AFTER_S: "2" });
    const slow = request(app).post("/reward/batch").send({ items: Array.from({ length: 4 }, () => ({ verifier: "test-sleep", response: "", options: { ms: 300 } })) });
    const slowP = slow.then((r) => r);
    while (limiter.inflight < 4) await new Promise((r) => setTimeout(r, 5));
    const busy = await request(app).post("/reward").send({ verifier: "exact", response: "a", reference: "a" }).expect(429);
    assert.equal(busy.headers["retry-after"], "2");
    assert.match(busy.body.error, /busy/);
    await slowP;
    await request(app).post("/reward").send({ verifier: "exact", response: "a", reference: "a" }).expect(200);
    assert.equal(limiter.inflight, 0);
  });

  test("body over the cap: 413 with a JSON error", async () => {
    const { app } = await testApp({ ASSAY_MAX_BODY: "1kb" });
    const res = await request(app).post("/reward").send({ verifier: "exact", response: "x".repeat(4000) }).expect(413);
    assert.match(res.body.error, /ASSAY_MAX_BODY/);
  });

  test("with ASSAY_API_KEYS every route but /healthz and the pages (/docs, /openapi.yaml, /ui) needs the bearer key", async () => {
    const { app } = await testApp({ ASSAY_API_KEYS: "k1,k2" });
    await request(app).get("/healthz").expect(200);
    await request(app).get("/openapi.yaml").expect(200); // a browser opens it without a header (issue 26)
    for (const path of ["/verifiers", "/metrics", "/rubrics", "/jobs"]) {
      const res = await request(app).get(path).expect(401);
      assert.match(res.body.error, /Authorization: Bearer/);
    }
    await request(app).post("/reward").send({ verifier: "exact", response: "a" }).expect(401);
    await request(app).post("/reward").set("Authorization", "Bearer wrong").send({ verifier: "exact", response: "a" }).expect(401);
    await request(app).post("/reward").set("Authorization", "Bearer k2").send({ verifier: "exact", response: "a", reference: "a" }).expect(200);
    await request(app).get("/verifiers").set("Authorization", "Bearer k1").expect(200);
  });
});

describe("discovery surfaces", () => {
  test("GET /verifiers lists each verifier with its schemas", async () => {
    const { app } = await testApp();
    const res = await request(app).get("/verifiers").expect(200);
    const names = res.body.verifiers.map((v: any) => v.name);
    for (const n of ["exact", "choice", "regex", "format"]) assert.ok(names.includes(n), n);
    for (const v of res.body.verifiers) {
      assert.equal(typeof v.description, "string");
      assert.equal(typeof v.reference_schema, "object");
      assert.equal(v.options_schema.type, "object");
    }
    assert.equal(check("VerifierList", res.body), null);
  });

  test("healthz, openapi.yaml, docs, 404", async () => {
    const { app } = await testApp();
    const h = await request(app).get("/healthz").expect(200);
    assert.equal(h.body.status, "ok");
    const spec = await request(app).get("/openapi.yaml").expect(200);
    assert.equal(parse(spec.text).openapi, "3.1.0");
    const docs = await request(app).get("/docs").expect(200);
    assert.match(docs.text, /swagger-ui-bundle\.js/);
    await request(app).get("/docs/swagger-ui-bundle.js").expect(200);
    const nf = await request(app).get("/nope").expect(404);
    assert.match(nf.body.error, /no route GET \/nope/);
  });

  test("metrics count requests, items by verifier and status, and latency", async () => {
    const { app } = await testApp();
    await request(app).post("/reward/batch").send({ items: [
      { verifier: "exact", response: "a", reference: "a" },
      { verifier: "exact", response: "a", reference: "b" },
      { verifier: "made-up-name", response: "a" },
    ] });
    const m = (await request(app).get("/metrics").expect(200)).text;
    assert.match(m, /assay_items_total\{verifier="exact",status="ok"\} 2/);
    assert.match(m, /assay_items_total\{verifier="unknown",status="invalid"\} 1/);
    assert.doesNotMatch(m, /made-up-name/);
    assert.match(m, /assay_http_requests_total\{method="POST",route="\/reward\/batch",status="200"\} 1/);
    assert.match(m, /assay_item_duration_seconds_bucket\{le="0.001",verifier="exact"\}/);
    assert.match(m, /assay_http_request_duration_seconds_count\{route="\/reward\/batch"\} 1/);
  });
});

describe("POST /get_reward (OpenRLHF)", () => {
  test("JSON labels, plain labels with ?verifier, prompt prefix stripped, nulls mapped", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/get_reward?verifier=exact&null_reward=-1").send({
      query: ["<u>Capital?</u>Paris", "<u>2+2?</u>The answer is (B)", "<u>x</u>y", "<u>z</u>w"],
      prompts: ["<u>Capital?</u>", "<u>2+2?</u>", "<u>x</u>", "<u>z</u>"],
      labels: ["paris", JSON.stringify({ verifier: "choice", reference: "B" }), { verifier: "test-broken", reference: null, options: { mode: "null" } }, "nope"],
    }).expect(200);
    assert.deepEqual(res.body.rewards, [1, 1, -1, 0]);
    assert.deepEqual(res.body.scores, res.body.rewards);
    assert.deepEqual(res.body.extra_logs.assay_unscored, [0, 0, 1, 0]);
    assert.equal(check("GetRewardResponse", res.body), null);
  });

  test("every extra_logs entry is a per-query list of numbers, as OpenRLHF's torch.cat(...).split needs", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/get_reward?verifier=exact").send({
      query: ["Q1 a", "Q2 b", "Q3 c"], prompts: ["Q1 ", "Q2 ", "Q3 "],
      labels: ["a", "x", JSON.stringify({ verifier: "exact", reference: true })], // (a number is now read as its string)
    }).expect(200);
    assert.deepEqual(res.body.rewards, [1, 0, 0]);
    assert.deepEqual(res.body.extra_logs.assay_invalid, [0, 0, 1]);
    for (const [key, value] of Object.entries(res.body.extra_logs)) {
      assert.ok(Array.isArray(value) && value.length === 3 && value.every((v) => typeof v === "number"), key);
    }
  });

  test("end-of-sequence tokens OpenRLHF leaves in decoded queries are not part of the answer", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/get_reward?verifier=exact").send({
      query: [
        "<|im_start|>user\nCapital?<|im_end|>\n<|im_start|>assistant\nParis<|im_end|>",
        "<pad><pad><s>[INST] Capital? [/INST] Paris</s><pad>",
        "<|user|>Capital?<|assistant|>Paris <|eot_id|>\n",
        "<|user|>Capital?<|assistant|>Lyon<|endoftext|>",
      ],
      prompts: [
        "<|im_start|>user\nCapital?<|im_end|>\n<|im_start|>assistant\n",
        "<s>[INST] Capital? [/INST]",
        "<|user|>Capital?<|assistant|>",
        "<|user|>Capital?<|assistant|>",
      ],
      labels: ["paris", "paris", "paris", "paris"],
    }).expect(200);
    assert.deepEqual(res.body.rewards, [1, 1, 1, 0]);
    assert.equal(res.body.results[0].details.extracted, "paris");
  });

  test("the prompt is matched from the query's start, spacing and left padding aside; a query that does not begin with it is invalid, never graded whole", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/get_reward?verifier=exact&null_reward=-1").send({
      query: [
        // SentencePiece decodes `<s>[INST]` as `<s> [INST]`: the response is what follows the prompt
        "<s> [INST] Example: 7. What is 6*7? [/INST] 41",
        "<s> [INST] Example: 7. What is 6*7? [/INST] 42",
        "Q:  what is 6*7?\n42", // the prompt's doubled space decoded as one
        "Example: 7. Now something else entirely", // not this prompt's query: never graded whole
      ],
      prompts: ["<s>[INST] Example: 7. What is 6*7? [/INST]", "<s>[INST] Example: 7. What is 6*7? [/INST]", "Q: what is 6*7?", "Example: 7. What is 6*7?"],
      labels: ["42", "42", "42", "Example: 7. Now something else entirely"],
    }).expect(200);
    assert.deepEqual(res.body.rewards, [0, 1, 1, -1]);
    assert.deepEqual(res.body.extra_logs.assay_invalid, [0, 0, 0, 1]);
    assert.match(res.body.results[3].reason, /does not begin with its prompt/);
    assert.equal(res.body.results[3].id, 3);
    assert.equal(res.body.results[2].id, 2);
    // left padding, then a response that repeats the prompt: the whole response is graded
    const again = await request(app).post("/get_reward?verifier=exact").send({
      query: ["<pad><pad>P:foo P:bar<|im_end|><pad>"], prompts: ["P:"], labels: ["foo P:bar"],
    }).expect(200);
    assert.deepEqual(again.body.rewards, [1]);
    // no search for the prompt further in: bounded time on a query that repeats its start
    const t0 = performance.now();
    const slow = await request(app).post("/get_reward?verifier=exact").send({ query: ["a".repeat(600_000)], prompts: ["a".repeat(300_000) + "b"], labels: ["x"] }).expect(200);
    assert.ok(performance.now() - t0 < 3000, `took ${(performance.now() - t0).toFixed(0)} ms`);
    assert.deepEqual(slow.body.extra_logs.assay_invalid, [1]);
    assert.equal(promptEnd("<｜begin▁of▁sentence｜>User: hi", "User: hi"), "<｜begin▁of▁sentence｜>User: hi".length);
    assert.equal(promptEnd("<s>hi there", "<s>hi"), 5);
    assert.equal(promptEnd("hi", "hi there"), -1);
  });

  test("a label {reference, options} with ?verifier= is read alike as an object and as its JSON text", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/get_reward?verifier=exact").send({
      query: ["Q 42", "Q 42", "Q 41"], prompts: ["Q", "Q", "Q"],
      labels: [JSON.stringify({ reference: "42" }), { reference: "42" }, JSON.stringify({ reference: "42" })],
    }).expect(200);
    assert.deepEqual(res.body.rewards, [1, 1, 0]);
    assert.deepEqual(res.body.extra_logs.assay_invalid, [0, 0, 0]);
  });

  test("stripping end tokens stays linear on hostile tails and leaves plain text alone", () => {
    assert.equal(stripEndTokens("x = 4"), "x = 4");
    assert.equal(stripEndTokens("a <b> c  "), "a <b> c  ");
    assert.equal(stripEndTokens("4<|im_end|>"), "4");
    const t0 = performance.now();
    assert.equal(stripEndTokens("ok" + "<pad> ".repeat(200_000)), "ok");
    assert.equal(stripEndTokens(" ".repeat(1_000_000) + "y").length, 1_000_001);
    assert.equal(stripEndTokens("<|" + "a".repeat(1_000_000) + "|>"), "<|" + "a".repeat(1_000_000) + "|>");
    assert.ok(performance.now() - t0 < 2000, "stripEndTokens took too long");
  });

  test("mismatched lengths and a missing verifier are 400s that say what to change", async () => {
    const { app } = await testApp();
    for (const url of ["/get_reward?verifier=exact&null_reward=0x10", "/get_reward?verifier=exact&null_reward=", "/get_reward?verifier=exact&null_reward=-1&null_reward=5", "/get_reward?verifier=exact&verifier=math"]) {
      const bad = await request(app).post(url).send({ query: ["a"], labels: ["a"] }).expect(400);
      assert.match(bad.body.field, /^(null_reward|verifier)$/, url);
    }
    await request(app).post("/get_reward?verifier=exact&null_reward=-1.5e0").send({ query: ["a"], labels: ["a"] }).expect(200);
    let res = await request(app).post("/get_reward").send({ query: ["a", "b"], labels: ["x"] }).expect(400);
    assert.equal(res.body.field, "labels");
    res = await request(app).post("/get_reward").send({ query: ["a"], labels: ["x"] }).expect(400);
    assert.match(res.body.error, /\?verifier=/);
  });
});

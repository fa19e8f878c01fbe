/** The iou verifier: geometry, reading coordinates, matching, hostile input, HTTP. */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import request from "supertest";
import { iouVerifier, IOU_MAX_CHARS } from "./index.js";
import { bestPairs, iou, tuplesFromText } from "./geometry.js";
import { testApp, verifyDirect, fastestCpu as fastest } from "../../tests/helpers.js";
import { longestGap } from "../../tests/loop-watch.js";
import { InvalidItemError } from "../../src/core/types.js";

const run = (response: string, reference: unknown, options: Record<string, unknown> = {}) => verifyDirect(iouVerifier, { response, reference, options });
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-12, `${a} vs ${b}`);

describe("geometry", () => {
  test("IoU by hand", () => {
    close(iou([0, 0, 10, 10], [0, 0, 10, 10]), 1);
    close(iou([0, 0, 10, 10], [5, 0, 15, 10]), 50 / 150);
    close(iou([0, 0, 10, 10], [10, 0, 20, 10]), 0); // touching edges
    close(iou([0, 0, 10, 10], [2, 2, 4, 4]), 4 / 100);
    close(iou([10, 10, 0, 0], [0, 0, 10, 10]), 0); // inverted box is malformed
  });
  test("optimal pairing beats greedy", () => {
    // Greedy would give row 0 its best column (0, 0.9) and leave row 1 with 0; optimal pairs 0-1, 1-0.
    const pairs = bestPairs([[0.9, 0.8], [0.7, 0]]);
    close(pairs.reduce((s, p) => s + p[2], 0), 1.5);
  });
  test("numbers in text: bracketed groups first, else a bare run", () => {
    assert.deepEqual(tuplesFromText("box: [12, 30.5, 200, 310] and (1,2,3,4)", 4, 10), [[12, 30.5, 200, 310], [1, 2, 3, 4]]);
    assert.deepEqual(tuplesFromText("top-left 1, 2; bottom-right 3, 4", 4, 10), [[1, 2, 3, 4]]);
    assert.deepEqual(tuplesFromText("[1, 2, 3]", 4, 10), []);
    assert.deepEqual(tuplesFromText("(-1.5e2, 2)", 2, 10), [[-150, 2]]);
  });
  test("digits inside names are not coordinates; a dash between numbers is not a minus", () => {
    // Before: "x1=100" gave 1 and 100, "bbox_2d" gave 2, "100-200" gave 100 and -200.
    assert.deepEqual(tuplesFromText("x1=100, y1=100, x2=200, y2=200", 4, 10), [[100, 100, 200, 200]]);
    assert.deepEqual(tuplesFromText('{"bbox_2d":[NaN,1,2,3]}', 4, 10), []);
    assert.deepEqual(tuplesFromText("bbox: [x1, y1, x2, y2] = [10, 20, 30, 40]", 4, 10), [[10, 20, 30, 40]]);
    assert.deepEqual(tuplesFromText("Qwen2.5-VL, the 3rd box in 2D: 10 20 30 40", 4, 10), [[10, 20, 30, 40]]);
    assert.deepEqual(tuplesFromText("x: 100-200", 2, 10), [[100, 200]]);
    // Signs still read at the start and after whitespace, a bracket, ",", ":", "=".
    assert.deepEqual(tuplesFromText("[-5, 10,-20, 30]", 4, 10), [[-5, 10, -20, 30]]);
    assert.deepEqual(tuplesFromText("-1 2 x=-3 y:-4", 4, 10), [[-1, 2, -3, -4]]);
    // Units in px, and other scripts running into numbers, are read.
    assert.deepEqual(tuplesFromText("[12px, 30px, 200px, 310px]", 4, 10), [[12, 30, 200, 310]]);
    assert.deepEqual(tuplesFromText("坐标为100,100,200,200", 4, 10), [[100, 100, 200, 200]]);
    // Commas always separate: "1,000" is 1 and 0 (a thousands separator looks like a list).
    assert.deepEqual(tuplesFromText("1,000", 2, 10), [[1, 0]]);
  });
});

describe("iou verifier", () => {
  test("coordinates written as x1=..., y1=... score as the box they name", async () => {
    assert.equal((await run("x1=100, y1=100, x2=200, y2=200", [100, 100, 200, 200])).reward, 1);
    assert.equal((await run("<answer>x1: 100, y1: 100, x2: 200, y2: 200</answer>", [100, 100, 200, 200])).reward, 1);
    assert.equal((await run('{"x1": 100, "y1": 100, "x2": 200, "y2": 200}', [100, 100, 200, 200])).reward, 1);
  });

  test("one box: continuous IoU by default, 1/0 by threshold", async () => {
    close((await run("[0, 0, 10, 10]", [5, 0, 15, 10])).reward!, 1 / 3);
    assert.equal((await run("[0, 0, 10, 10]", [5, 0, 15, 10], { reward: "threshold" })).reward, 0);
    assert.equal((await run("[0, 0, 10, 10]", [1, 0, 10, 10], { reward: "threshold" })).reward, 1);
    assert.equal((await run("[0, 0, 10, 10]", [1, 0, 10, 10], { reward: "threshold", iou_threshold: 0.95 })).reward, 0);
  });
  test("Qwen2.5-VL JSON, answer tags, thinking, and plain text all read", async () => {
    const ref = [100, 100, 200, 200];
    for (const response of [
      '```json\n[{"bbox_2d": [100, 100, 200, 200], "label": "cat"}]\n```',
      "<think>the cat is at [0, 0, 5, 5]?</think><answer>[100,100,200,200]</answer>",
      "The cat is at (100, 100, 200, 200).",
      '{"bbox": [100, 100, 200, 200]}',
    ]) assert.equal((await run(response, ref)).reward, 1, response);
  });
  test("several boxes: order does not matter; missing and extra boxes cost", async () => {
    const refs = [[0, 0, 10, 10], [20, 20, 30, 30]];
    assert.equal((await run("[20,20,30,30] [0,0,10,10]", refs)).reward, 1);
    assert.equal((await run("[0,0,10,10]", refs)).reward, 0.5);
    assert.equal((await run("[0,0,10,10] [20,20,30,30] [50,50,60,60] [70,70,80,80]", refs)).reward, 0.5);
  });
  test("points inside boxes", async () => {
    const refs = [[0, 0, 10, 10], [20, 20, 30, 30]];
    assert.equal((await run("(5, 5) (25, 25)", refs, { mode: "point" })).reward, 1);
    assert.equal((await run("(5, 5) (6, 6)", refs, { mode: "point" })).reward, 0.5); // one box, two points
    assert.equal((await run('{"point_2d": [10, 10]}', [0, 0, 10, 10], { mode: "point" })).reward, 1); // edge counts
    assert.equal((await run("(11, 5)", [0, 0, 10, 10], { mode: "point" })).reward, 0);
  });
  test("no box is 0 with a reason; a malformed reference is invalid", async () => {
    const out = await run("I cannot see a cat.", [0, 0, 1, 1]);
    assert.equal(out.reward, 0);
    assert.match(out.reason, /no box/);
    await assert.rejects(run("[0,0,1,1]", [0, 0, 1]), InvalidItemError);
    await assert.rejects(run("[0,0,1,1]", []), InvalidItemError);
  });
});

describe("hostile completions, each < 50 ms, scored and never an error", () => {
  const cases: [string, string][] = [
    ["1 MB of digits", "1".repeat(1_048_576)],
    ["200 KB of brackets", "[".repeat(200_000)],
    ["200 KB of numbers", "1, ".repeat(70_000)],
    ["100k boxes", "[1,2,3,4]".repeat(25_000)],
    ["deep JSON", "[".repeat(100_000) + "]".repeat(100_000)],
    ["exponent soup", "1e".repeat(100_000)],
  ];
  for (const [name, response] of cases) {
    test(name, async () => {
      const { out, ms } = await fastest(() => run(response, [[0, 0, 10, 10], [1, 2, 3, 4]]));
      assert.equal(typeof out.reward, "number", out.reason);
      assert.ok(out.reward! >= 0 && out.reward! <= 1);
      assert.ok(ms < 50, `${ms.toFixed(1)} ms of CPU`);
    });
  }
  test("100 predicted boxes against 100 references (the largest matching allowed) is fast", async () => {
    const boxes = Array.from({ length: 100 }, (_, i) => [i, i, i + 10, i + 10]);
    const response = JSON.stringify(boxes.slice().reverse());
    const { out, ms } = await fastest(() => run(response, boxes));
    assert.equal(out.reward, 1);
    assert.ok(ms < 50, `${ms.toFixed(1)} ms of CPU`);
  });
});

describe("over HTTP", () => {
  test("/reward/batch", async () => {
    const { app } = await testApp();
    const res = await request(app).post("/reward/batch").send({
      items: [
        { verifier: "iou", response: "[0,0,10,10]", reference: [0, 0, 10, 10] },
        { verifier: "iou", response: "(5,5)", reference: [[0, 0, 10, 10]], options: { mode: "point" } },
        { verifier: "iou", response: "[0,0,10,10]", reference: "0,0,10,10" },
      ],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.results.map((r: { status: string }) => r.status), ["ok", "ok", "invalid"]);
    assert.deepEqual(res.body.results.slice(0, 2).map((r: { reward: number }) => r.reward), [1, 1]);
  });
});


describe("max_response_chars is at most 262,144", () => {
  test("a 1 MiB completion cannot be asked for; one at the cap holds the event loop briefly", async () => {
    await assert.rejects(run("[0,0,1,1]", [0, 0, 1, 1], { max_response_chars: 1_048_576 }), InvalidItemError);
    const unit = "```json\n[1\n```\n";
    const response = unit.repeat(Math.floor(IOU_MAX_CHARS / unit.length));
    await run(response.slice(0, 20_000), [0, 0, 10, 10]);
    const { out, gap } = await longestGap(() => run(response, [0, 0, 10, 10], { max_response_chars: IOU_MAX_CHARS }));
    assert.equal(out.reward, 0);
    assert.ok(gap < 100, `the event loop waited ${gap.toFixed(0)} ms`); // 1 MiB of these held /healthz 446 ms
  });
});

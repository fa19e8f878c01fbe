/**
 * Where the model's SQL is read from (extract.ts): the answer part (reasoning dropped, a
 * truncated reasoning block leaving no answer), `<answer>` tags, and fenced blocks read by line as
 * CommonMark reads them. Each case below was scored wrongly by an earlier reading (a probe of the
 * verifier against the reference scorers).
 */
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { extractSql } from "./extract.js";

const Q = "SELECT count(*) FROM singer";

describe("reasoning: a <think> or <reasoning> never closed (a truncated completion) has no answer", () => {
  test("a draft inside an unclosed block is not the answer", () => {
    for (const r of [
      "<think>Let me try:\n```sql\n" + Q + "\n```\nHmm, wait, maybe I should",
      "<reasoning>draft:\n```sql\n" + Q + "\n```\nbut",
      "<think>first</think>```sql\nSELECT 1\n```<think>on second thought:\n```sql\n" + Q + "\n```",
      "<think>a</think><reasoning>```sql\n" + Q + "\n```",
    ]) {
      assert.deepEqual(extractSql(r), { sql: "", source: "text" }, r);
    }
  });
  test("closed blocks are dropped as before", () => {
    assert.deepEqual(extractSql("<think>```sql\nSELECT 1\n```</think>Final:\n```sql\n" + Q + "\n```"), { sql: Q, source: "sql_block" });
    assert.deepEqual(extractSql("<reasoning>```sql\nSELECT 2\n```</reasoning>```sql\n" + Q + "\n```"), { sql: Q, source: "sql_block" });
    assert.deepEqual(extractSql(Q), { sql: Q, source: "text" });
  });
});

describe("fenced blocks are read by line, as CommonMark reads them", () => {
  const cases: [string, string, { sql: string; source: string }][] = [
    ["a stray ``` in prose", "I'll use a ``` block.\n```sql\n" + Q + "\n```", { sql: Q, source: "sql_block" }],
    ["``` inside the SQL", "```sql\nSELECT name FROM singer WHERE name <> '```'\n```", { sql: "SELECT name FROM singer WHERE name <> '```'", source: "sql_block" }],
    ["four backticks", "````sql\n" + Q + "\n````", { sql: Q, source: "sql_block" }],
    ["four backticks hold a ``` line", "````sql\n" + Q + "\n```\n````", { sql: Q + "\n```", source: "sql_block" }],
    ["another tag is a code block", "```mysql\n" + Q + "\n```", { sql: Q, source: "code_block" }],
    ["an info string after the tag", "```sql title=x\n" + Q + "\n```", { sql: Q, source: "sql_block" }],
    ["```sql wins over a later untagged block", "```sql\n" + Q + "\n```\n```\nSELECT 2\n```", { sql: Q, source: "sql_block" }],
    ["the last of other blocks", "```python\nprint(1)\n```\n```\n" + Q + "\n```", { sql: Q, source: "code_block" }],
    ["tildes", "~~~sql\n" + Q + "\n~~~", { sql: Q, source: "sql_block" }],
    ["indented in a list", "1. The query:\n    ```sql\n    " + Q + "\n    ```\n2. Done.", { sql: Q, source: "sql_block" }],
    ["CRLF", "```sql\r\n" + Q + "\r\n```\r\n", { sql: Q, source: "sql_block" }],
    ["a close at the end of the query's line", "```sql\n" + Q + "```\nThat is all.", { sql: Q, source: "sql_block" }],
    ["an unclosed last block runs to the end", "```sql\nSELECT 1\n```\n```sql\n" + Q, { sql: Q, source: "sql_block" }],
    ["a backtick line with a tag is not a fence", "```sql SELECT 1```", { sql: "```sql SELECT 1```", source: "text" }],
  ];
  for (const [name, response, want] of cases) test(name, () => assert.deepEqual(extractSql(response), want));
});

describe("<answer> tags", () => {
  test("an unclosed <answer> after a fenced block is prose, not the answer", () => {
    assert.deepEqual(extractSql("```sql\n" + Q + "\n```\nNo <answer> tag needed."), { sql: Q, source: "sql_block" });
  });
  test("the last closed <answer> wins; an unclosed one with no block before it runs to the end", () => {
    assert.deepEqual(extractSql("<answer>" + Q + "</answer> then ```sql\nSELECT 2\n```"), { sql: Q, source: "answer" });
    assert.deepEqual(extractSql("<answer>\n" + Q + "\n"), { sql: Q, source: "answer" });
    assert.deepEqual(extractSql("<answer>\n```sql\n" + Q + "\n```"), { sql: Q, source: "answer_sql_block" });
    assert.deepEqual(extractSql("<answer>SELECT 1</answer>\n<answer>" + Q), { sql: Q, source: "answer" });
  });
});

test("linear: 1 MB of hostile fences, tags and lines is read in milliseconds", () => {
  const M = 1_000_000;
  for (const s of [
    "`".repeat(M),
    "```sql\n".repeat(M / 7),
    "\n```x` ".repeat(M / 7),
    "```\n" + "``\n".repeat(M / 3),
    (" ".repeat(100) + "```\n").repeat(M / 104),
    "\n".repeat(M),
    "</answer><answer>".repeat(M / 17),
  ]) {
    extractSql(s.slice(0, 10_000)); // warm
    let best = Infinity;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      extractSql(s);
      best = Math.min(best, performance.now() - t0);
    }
    assert.ok(best < 150, `${JSON.stringify(s.slice(0, 12))}…: ${best.toFixed(1)} ms`);
  }
});

/** One realistic item per reward verifier (the i-th of a batch varies a little): bench/rewards.ts and bench/dispatch.ts. */
const words = "the model should answer the question with a short helpful and correct explanation of the result".split(" ");
const sentence = (seed: number, n: number) => Array.from({ length: n }, (_, i) => words[(i * 7 + seed) % words.length]).join(" ");
const REF_TEXT = sentence(1, 120) + ".";
const diff = (k: number) => [
  "diff --git a/src/app/handlers.py b/src/app/handlers.py",
  "--- a/src/app/handlers.py",
  "+++ b/src/app/handlers.py",
  "@@ -40,8 +40,9 @@",
  ...Array.from({ length: 3 }, (_, i) => `     context_line_${i} = compute(${i})`),
  "-    if request.user is None:",
  "-        return None",
  `+    if request.user is None or request.user.disabled${k % 2 ? "" : "()"}:`,
  "+        raise PermissionDenied('user required')",
  "+    audit(request)",
  ...Array.from({ length: 3 }, (_, i) => `     trailing_line_${i} = finish(${i})`),
  "",
].join("\n");
const context = Array.from({ length: 40 }, (_, i) => `def f${i}(x):\n    return x + ${i}`).join("\n");

/** One realistic item per verifier (the i-th of a batch varies a little). */
export const items: Record<string, (i: number) => Record<string, unknown>> = {
  exact: (i) => ({ verifier: "exact", response: `The answer is ${i % 7}`, reference: `the answer is ${i % 5}` }),
  bleu: (i) => ({ verifier: "bleu", response: sentence(i, 110), reference: [REF_TEXT, sentence(3, 100)] }),
  chrf: (i) => ({ verifier: "chrf", response: sentence(i, 110), reference: [REF_TEXT, sentence(3, 100)] }),
  rouge: (i) => ({ verifier: "rouge", response: sentence(i, 110), reference: [REF_TEXT, sentence(3, 100)], options: { use_stemmer: true } }),
  tool_call: (i) => ({
    verifier: "tool_call",
    response: `<think>Need weather and time.</think>\n<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris", "unit": "${i % 2 ? "c" : "f"}"}}\n{"name": "get_time", "parameters": {"tz": "CET"}}\n</tool_call>`,
    reference: '<think>...</think>\n<tool_call>\n{"name": "get_time", "parameters": {"tz": "CET"}}\n{"name": "get_weather", "parameters": {"city": "Paris", "unit": "c"}}\n</tool_call>',
  }),
  "patch (unified diff)": (i) => ({ verifier: "patch", response: "<think>fix</think>\n```diff\n" + diff(i) + "```", reference: diff(0) }),
  "patch (search/replace)": (i) => ({
    verifier: "patch",
    response: `<think>fix f7</think>\n<solution>\n\`\`\`python\n### m.py\n<<<<<<< SEARCH\n    return x + 7\n=======\n    return x * ${7 + (i % 2)}\n>>>>>>> REPLACE\n\`\`\`\n</solution>`,
    reference: { code_context: { "m.py": context }, oracle_new_content: { "m.py": context.replace("return x + 7\n", "return x * 7\n") } },
  }),
  iou: (i) => ({
    verifier: "iou",
    response: `<think>two cats</think><answer>[{"bbox_2d": [${10 + (i % 5)}, 12, 120, 140], "label": "cat"}, {"bbox_2d": [200, 40, 310, 160], "label": "cat"}]</answer>`,
    reference: [[200, 42, 305, 160], [12, 10, 118, 139]],
  }),
  json: (i) => ({
    verifier: "json",
    response: "```json\n" + JSON.stringify({ name: "Ada Lovelace", born: 1815, langs: ["en", "fr"], address: { city: "London", zip: `N${i % 3}` }, tags: ["math", "poetry", "engines"] }) + "\n```",
    reference: {
      expected: { name: "Ada Lovelace", born: 1815, langs: ["fr", "en"], address: { city: "London", zip: "N1" }, tags: ["engines", "math", "poetry"] },
      schema: { type: "object", required: ["name", "born"], properties: { born: { type: "integer" }, name: { type: "string", pattern: "^[A-Z]" } } },
    },
    options: { unordered_arrays: true },
  }),
};


/**
 * Parses a code item's reference into a test suite.
 * The test formats people's datasets use, read into one of three suites:
 * - stdio:  stdin/stdout pairs (APPS, CodeContests, TACO, LiveCodeBench "stdin");
 * - call:   a function (or a `class Solution` method) called with JSON arguments (LeetCode,
 *           LiveCodeBench "functional", APPS/TACO/verl rows with `fn_name`);
 * - assert: assert scripts (HumanEval `test` + `entry_point`, MBPP `test_list`);
 * - program: a whole-program test (HumanEval-X, MultiPL-E): the solution and the benchmark's
 *           test code compiled and run as one program, verdict by its exit status. Given as
 *           `test_program` (with an optional `prelude` or `test_setup` put before the solution),
 *           MultiPL-E's `tests` string, or HumanEval's `test` for a language other than Python
 *           (the verifier turns that assert suite into a program suite).
 * verl's `{inputs, outputs, fn_name}` shape is accepted as it is, also as a JSON string.
 */
import { exactJson } from "./compare.js";
import { InvalidItemError } from "../../src/core/types.js";

export type Suite =
  | { kind: "stdio"; cases: { input: string; output: string }[] }
  /**
   * `wrapped`: APPS's/TACO's parallel lists (and verl's copy), whose call-based outputs come each
   * wrapped in a one-element list; their checker also passes `result == outputs[i][0]`.
   * LiveCodeBench's tests list compares `result == expected` alone: there `[3]` is not 3.
   */
  | { kind: "call"; fn: string; cases: { args: unknown[]; output: unknown }[]; wrapped: boolean }
  | { kind: "assert"; tests: string[]; setup: string; entryPoint: string | null }
  | { kind: "program"; test: string; prelude: string };

const MAX_TESTS = 1000;

function bad(msg: string): never {
  throw new InvalidItemError(msg);
}

/** LiveCodeBench functional inputs are one JSON value per line; a JSON array is the argument list. */
function argsOf(input: unknown, i: number): unknown[] {
  if (Array.isArray(input)) return input;
  if (typeof input === "string") {
    const lines = input.split("\n").filter((l) => l.trim() !== "");
    try {
      return lines.map((l) => JSON.parse(l));
    } catch {
      bad(`test ${i}: a function-call input must be a JSON list of arguments or one JSON value per line; got ${JSON.stringify(input.slice(0, 80))}`);
    }
  }
  return [input];
}

function outputOf(output: unknown): unknown {
  if (typeof output === "string") {
    try {
      // Exact integers: a 20-digit expected value must not round to a double a wrong answer shares.
      return exactJson(output);
    } catch {
      return output;
    }
  }
  return output;
}

function asText(v: unknown, what: string): string {
  if (typeof v === "string") return v;
  if (Array.isArray(v) && v.every((x) => typeof x === "string")) return v.join("\n");
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  return bad(`${what} must be a string (or a list of lines)`);
}

function limit<T>(list: T[], max: number): T[] {
  if (list.length === 0) bad("the reference holds no tests");
  if (list.length > max) bad(`the reference holds ${list.length} tests; at most ${max} are run per item (options.max_tests)`);
  return list;
}

export function parseReference(ref: unknown, maxTests = MAX_TESTS): Suite {
  if (typeof ref === "string") {
    const t = ref.trim();
    if (t.startsWith("{")) {
      let parsed: unknown;
      try {
        parsed = exactJson(t); // APPS's input_output: an expected 10**18 + 1 stays exact
      } catch {
        return bad("the reference looks like JSON but does not parse");
      }
      return parseReference(parsed, maxTests);
    }
    if (!t) bad("the reference is empty");
    return { kind: "assert", tests: [ref], setup: "", entryPoint: null };
  }
  if (!ref || typeof ref !== "object" || Array.isArray(ref)) return bad("the reference must be an object (or a JSON string of one)");
  const r = ref as Record<string, any>;
  if (typeof r.input_output === "string" || (r.input_output && typeof r.input_output === "object")) {
    // APPS's raw column: a JSON string of {inputs, outputs, fn_name?}.
    return parseReference(r.input_output, maxTests);
  }
  const fn: string | undefined = r.fn_name ?? r.func_name ?? r.metadata?.func_name ?? undefined;
  if (fn !== undefined && (typeof fn !== "string" || !/^[A-Za-z_]\w*$/.test(fn))) bad("fn_name must be an identifier");

  // A whole-program test: HumanEval-X's `test` (with its `test_setup`), MultiPL-E's `tests`.
  if (typeof r.test_program === "string" || typeof r.tests === "string") {
    const test: string = typeof r.test_program === "string" ? r.test_program : r.tests;
    if (!test.trim()) bad("the reference's test program is empty");
    const prelude = r.prelude ?? r.test_setup ?? "";
    if (typeof prelude !== "string") bad("prelude (or test_setup) must be a string: the code put before the solution");
    return { kind: "program", test, prelude };
  }

  // HumanEval and MBPP.
  if (typeof r.test === "string" || Array.isArray(r.test_list)) {
    const tests: string[] = Array.isArray(r.test_list) ? r.test_list : [r.test];
    if (!tests.every((t) => typeof t === "string")) bad("test_list must be a list of strings");
    const setup = [r.test_imports, r.test_setup_code, r.test_setup].flat().filter((x) => typeof x === "string").join("\n");
    const entry = r.entry_point ?? null;
    if (entry !== null && (typeof entry !== "string" || !/^[A-Za-z_]\w*$/.test(entry))) bad("entry_point must be an identifier");
    return { kind: "assert", tests: limit(tests, maxTests), setup, entryPoint: entry };
  }

  // verl / APPS / TACO / CodeContests: parallel lists.
  const inputs = r.inputs ?? r.input;
  const outputs = r.outputs ?? r.output;
  if (Array.isArray(inputs) || Array.isArray(outputs)) {
    if (!Array.isArray(inputs) || !Array.isArray(outputs)) bad("inputs and outputs must both be lists");
    if (inputs.length !== outputs.length) bad(`inputs has ${inputs.length} entries but outputs has ${outputs.length}`);
    limit(inputs, maxTests);
    if (fn) return { kind: "call", fn, cases: inputs.map((x: unknown, i: number) => ({ args: argsOf(x, i), output: outputOf(outputs[i]) })), wrapped: true };
    return { kind: "stdio", cases: inputs.map((x: unknown, i: number) => ({ input: asText(x, `inputs[${i}]`), output: asText(outputs[i], `outputs[${i}]`) })) };
  }

  // A list of test objects (LiveCodeBench public/private tests, hand-written suites).
  const list = r.tests ?? r.test_cases;
  if (Array.isArray(list)) {
    limit(list, maxTests);
    const functional = list.some((t: any) => t?.testtype === "functional") || (fn !== undefined && list.every((t: any) => t?.testtype !== "stdin"));
    if (functional) {
      if (!fn) bad("functional tests need fn_name (the function or Solution method to call)");
      return {
        kind: "call",
        fn,
        cases: list.map((t: any, i: number) => {
          if (!t || typeof t !== "object") bad(`tests[${i}] must be an object`);
          return { args: argsOf(t.args ?? t.input, i), output: outputOf(t.output ?? t.expected) };
        }),
        wrapped: false,
      };
    }
    return {
      kind: "stdio",
      cases: list.map((t: any, i: number) => {
        if (!t || typeof t !== "object") bad(`tests[${i}] must be an object`);
        return { input: asText(t.input ?? t.stdin ?? "", `tests[${i}].input`), output: asText(t.output ?? t.stdout ?? t.expected, `tests[${i}].output`) };
      }),
    };
  }
  return bad("no tests found: give {inputs, outputs[, fn_name]}, {tests: [{input, output}]}, {test, entry_point}, {test_list} or {test_program}");
}

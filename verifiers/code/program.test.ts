/**
 * Whole-program tests (HumanEval-X, MultiPL-E): the solution and the benchmark's own test code
 * compiled and run as one program, verdict by exit status, stdout free. One problem (HumanEval/60,
 * sum_to_n) in each language's benchmark shape, on each backend the machine has: a correct
 * solution scores 1, a wrong one 0, one printing debug output 1, and hostile ones (an early exit
 * with status 0, an endless loop) 0.
 */
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { code } from "./index.js";
import { debugAssertFrame, messageOf, programLanguage } from "./index.js";
import { parseReference } from "./suite.js";
import type { Sandbox } from "../../sandbox/types.js";
import { notBuiltReason, GO_CACHE } from "../../sandbox/languages.js";
import { verifyDirect, testServices, fakeSandbox } from "../../tests/helpers.js";
import { IN_CI, openBwrapForTests, openDockerForTests } from "../../tests/sandboxes.js";

interface Shape {
  /** The item's language, where the entry's name is not one. */
  language?: string;
  /** The reference: the benchmark's fields. */
  reference: Record<string, unknown>;
  ok: string;
  wrong: string;
  /** Correct, printing to stdout and stderr on the way. */
  chatty: string;
  /** Hostile programs that must score 0. */
  hostile: string[];
  /** The reason a wrong solution gets names this. */
  wrongSays: RegExp;
}

// HumanEval-X's C++ test (CPP/60): C's assert, main without a return.
const cppTest = "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (sum_to_n(1) == 1);\n    assert (sum_to_n(6) == 21);\n    assert (sum_to_n(11) == 66);\n    assert (sum_to_n(30) == 465);\n    assert (sum_to_n(100) == 5050);\n}\n";
const cpp = (body: string) => `#include<stdio.h>\nusing namespace std;\nint sum_to_n(int n){\n${body}\n}\n`;
// HumanEval-X's Java test (Java/60): a public Main that throws AssertionError.
const javaTest = "public class Main {\n    public static void main(String[] args) {\n        Solution s = new Solution();\n        List<Boolean> correct = Arrays.asList(\n                s.sumToN(1) == 1,\n                s.sumToN(6) == 21,\n                s.sumToN(11) == 66,\n                s.sumToN(30) == 465,\n                s.sumToN(100) == 5050\n        );\n        if (correct.contains(false)) {\n            throw new AssertionError();\n        }\n    }\n}";
const java = (body: string) => `import java.util.*;\nimport java.lang.*;\n\nclass Solution {\n    public int sumToN(int n) {\n${body}\n    }\n}`;
// HumanEval-X's Go test (Go/60): `go test` with testify; test_setup is the package clause and imports.
const goSetup = 'package main\n\nimport (\n    "testing"\n    "github.com/stretchr/testify/assert"\n)\n';
const goTest = "func TestSumToN(t *testing.T) {\n    assert := assert.New(t)\n    assert.Equal(1, SumToN(1))\n    assert.Equal(21, SumToN(6))\n    assert.Equal(66, SumToN(11))\n    assert.Equal(465, SumToN(30))\n    assert.Equal(5050, SumToN(100))\n}\n";
const go = (body: string, imports = "") => `${imports}\nfunc SumToN(n int) int {\n${body}\n}\n`;
// HumanEval-X's Rust test (Rust/60): a #[cfg(test)] module; the declaration has an empty main.
const rustTest = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_sum_to_n() {\n        assert!(sum_to_n(1) == 1);\n        assert!(sum_to_n(6) == 21);\n        assert!(sum_to_n(11) == 66);\n        assert!(sum_to_n(30) == 465);\n        assert!(sum_to_n(100) == 5050);\n    }\n\n}\n";
const rust = (body: string) => `fn main(){}\n\nuse std::{slice::Iter, cmp::{max, self}, mem::replace, collections::{HashSet, HashMap}, ops::Index, ascii::AsciiExt};\n\nfn sum_to_n(n: i32) -> i32 {\n${body}\n}\n`;
// MultiPL-E's TypeScript test (HumanEval_60_sum_to_n): node's assert.
const tsTest = "declare var require: any;\nconst assert = require('node:assert');\n\n\nfunction test() {\n  let candidate = sum_to_n;\n  assert.deepEqual(candidate(1),1);\n  assert.deepEqual(candidate(6),21);\n  assert.deepEqual(candidate(11),66);\n  assert.deepEqual(candidate(30),465);\n  assert.deepEqual(candidate(100),5050);\n}\n\ntest();";
const ts = (body: string) => `function sum_to_n(n: number): number {\n${body}\n}\n`;
// MultiPL-E's C# test (HumanEval_60_sum_to_n): the prompt opens class Problem and the method;
// the tests string closes the method and holds Main's Debug.Asserts.
const csTest = "    }\n    public static void Main(string[] args) {\n    Debug.Assert(SumToN((1L)) == (1L));\n    Debug.Assert(SumToN((6L)) == (21L));\n    Debug.Assert(SumToN((11L)) == (66L));\n    Debug.Assert(SumToN((30L)) == (465L));\n    Debug.Assert(SumToN((100L)) == (5050L));\n    }\n\n}\n";
const cs = (body: string) => `using System;\nusing System.Numerics;\nusing System.Diagnostics;\nusing System.Collections.Generic;\nusing System.Linq;\nusing System.Text;\nusing System.Security.Cryptography;\nclass Problem {\n    public static long SumToN(long n) {\n${body}\n`;
// MultiPL-E's Python test (HumanEval_60_sum_to_n): check(candidate) called by test_check().
const pyTest = "def check(candidate):\n    assert candidate(1) == 1\n    assert candidate(6) == 21\n    assert candidate(11) == 66\n    assert candidate(30) == 465\n    assert candidate(100) == 5050\n\ndef test_check():\n    check(sum_to_n)\n\ntest_check()\n";
const py = (body: string) => `def sum_to_n(n: int) -> int:\n${body}\n`;

const SHAPES: Record<string, Shape> = {
  cpp: {
    reference: { test: cppTest, entry_point: "sum_to_n" },
    ok: cpp("    return n*(n+1)/2;"),
    wrong: cpp("    return n*(n-1)/2;"),
    chatty: cpp('    printf("debug %d\\n", n); fprintf(stderr, "err\\n");\n    return n*(n+1)/2;'),
    hostile: [cpp("    for(;;);"), cpp("    int *p = 0; return *p;")],
    wrongSays: /Assertion `sum_to_n\(1\) == 1' failed/,
  },
  // HumanEval-X's CPP/162 includes OpenSSL's md5.h; others use Boost's headers.
  "cpp (Boost and OpenSSL headers)": {
    language: "cpp",
    reference: { test: "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (sum_to_n(6) == 21);\n    assert (sum_to_n(100) == 5050);\n}\n", entry_point: "sum_to_n" },
    ok: "#include <boost/algorithm/string.hpp>\n#include <openssl/md5.h>\n#include <string>\n" + cpp("    std::string s = \"ab\"; boost::to_upper(s);\n    return s == \"AB\" && MD5_DIGEST_LENGTH == 16 ? n*(n+1)/2 : -1;"),
    wrong: "#include <boost/algorithm/string.hpp>\n" + cpp("    return n;"),
    chatty: "#include <boost/lexical_cast.hpp>\n" + cpp('    puts(boost::lexical_cast<std::string>(n).c_str());\n    return n*(n+1)/2;'),
    hostile: [cpp("    while (1) {}")],
    wrongSays: /Assertion `sum_to_n\(6\) == 21' failed/,
  },
  java: {
    reference: { test: javaTest },
    ok: java("        return n * (n + 1) / 2;"),
    wrong: java("        return n * (n - 1) / 2;"),
    chatty: java('        System.out.println("debug " + n); System.err.println("err");\n        return n * (n + 1) / 2;'),
    hostile: [java("        System.exit(0); return 0;"), java("        Runtime.getRuntime().halt(0); return 0;"), java("        while (true) {}")],
    wrongSays: /java\.lang\.AssertionError/,
  },
  go: {
    reference: { test_setup: goSetup, test: goTest },
    ok: go("    return n * (n + 1) / 2"),
    wrong: go("    return n * (n - 1) / 2"),
    chatty: go('    fmt.Println("debug", n)\n    fmt.Fprintln(os.Stderr, "err")\n    return n * (n + 1) / 2', 'import (\n    "fmt"\n    "os"\n)\n'),
    hostile: [go("    os.Exit(0)\n    return 0", 'import "os"\n'), go("    for {}\n")],
    wrongSays: /FAIL|Not equal/,
  },
  rust: {
    reference: { test: rustTest },
    ok: rust("    n*(n+1)/2"),
    wrong: rust("    n*(n-1)/2"),
    chatty: rust('    println!("debug {}", n); eprintln!("err");\n    n*(n+1)/2'),
    hostile: [rust('    println!("test result: ok. 1 passed; 0 failed; 0 ignored");\n    std::process::exit(0)'), rust("    loop {}")],
    wrongSays: /assertion failed: sum_to_n\(1\) == 1|test result: FAILED/,
  },
  typescript: {
    reference: { tests: tsTest },
    ok: ts("  return n * (n + 1) / 2;"),
    wrong: ts("  return n * (n - 1) / 2;"),
    chatty: ts("  console.log('debug', n); console.error('err');\n  return n * (n + 1) / 2;"),
    hostile: [ts("  process.exit(0);\n  return 0;"), ts("  while (true) {}\n  return 0;")],
    wrongSays: /AssertionError \[ERR_ASSERTION\]: Expected values to be loosely deep-equal: 0 should loosely deep-equal 1/,
  },
  // Debug.Assert is compiled in (csharp_test: mcs -d:DEBUG) and a failed one fails the test,
  // though mono exits 0 after it (as MultiPL-E's own harness reads it).
  csharp: {
    reference: { tests: csTest },
    ok: cs("        return n * (n + 1) / 2;"),
    wrong: cs("        return n * (n - 1) / 2;"),
    chatty: cs('        Console.WriteLine("debug " + n); Console.Error.WriteLine("err");\n        return n * (n + 1) / 2;'),
    hostile: [cs("        while (true) {}"), cs("        throw new Exception(\"no\");")],
    wrongSays: /Debug\.Assert failed at Problem\.Main/,
  },
  python: {
    reference: { test_program: pyTest },
    ok: py("    return n * (n + 1) // 2"),
    wrong: py("    return n * (n - 1) // 2"),
    chatty: py("    import sys\n    print('debug', n); print('err', file=sys.stderr)\n    return n * (n + 1) // 2"),
    hostile: [py("    import sys\n    sys.exit(0)"), py("    import os\n    os._exit(0)"), py("    while True: pass")],
    wrongSays: /AssertionError/,
  },
};

describe("whole-program references", () => {
  test("test_program, MultiPL-E's tests string and HumanEval-X's test_setup parse as a program suite", () => {
    assert.deepEqual(parseReference({ test_program: "int main(){}", prelude: "#include <x>" }), { kind: "program", test: "int main(){}", prelude: "#include <x>" });
    assert.deepEqual(parseReference({ tests: "test();" }), { kind: "program", test: "test();", prelude: "" });
    assert.deepEqual(parseReference({ test: "func TestX(t *testing.T) {}", test_setup: "package main" }), { kind: "assert", tests: ["func TestX(t *testing.T) {}"], setup: "package main", entryPoint: null });
  });
  test("Go's testing tests run through go test, Rust's #[test] through rustc --test, C#'s Debug.Assert with DEBUG defined", () => {
    assert.equal(programLanguage("golang", goTest), "go_test");
    assert.equal(programLanguage("go", "func main() {}"), "go");
    assert.equal(programLanguage("rs", rustTest), "rust_test");
    assert.equal(programLanguage("c++", cppTest), "cpp");
    assert.equal(programLanguage("c#", csTest), "csharp_test");
    assert.equal(programLanguage("csharp", "class P { static void Main() {} }"), "csharp");
  });
  test("a failed Debug.Assert names the test's own frame, and a program's stderr of blank lines costs linear time", () => {
    const trace = "---- DEBUG ASSERTION FAILED ----\n---- Assert Short Message ----\n\n---- Assert Long Message ----\n\n\n" +
      "  at System.Diagnostics.DefaultTraceListener.Fail (System.String detailMessage) [0x00000] in <5e9f0bd1>:0 \n" +
      "  at System.Diagnostics.Debug.Assert (System.Boolean condition) [0x00008] in <5e9f0bd1>:0 \n" +
      "  at Problem.Main (System.String[] args) [0x00001] in /sandbox/run/main.cs:12 \n";
    assert.equal(debugAssertFrame(trace), "Problem.Main (System.String[] args)");
    assert.equal(debugAssertFrame("\tat Problem.Main () in x.cs:3"), "Problem.Main ()");
    assert.equal(debugAssertFrame("no frames here"), null);
    // `^\s*at` under the m flag took ~1.8 s on 32K newlines; a 1 MiB stderr would hold the event loop for minutes
    const hostile = "System.Diagnostics.DefaultTraceListener.Fail\n" + "\n".repeat(1 << 20) + " \n".repeat(1 << 18);
    const c0 = process.cpuUsage();
    assert.equal(debugAssertFrame(hostile), null);
    const c = process.cpuUsage(c0);
    assert.ok((c.user + c.system) / 1000 < 200, `${(c.user + c.system) / 1000} ms`);
  });
  test("the reason is the failing line's message, not a stack frame", () => {
    assert.equal(messageOf("TypeError: x is not a function\n    at f (eval at run (<isolated-vm>:1:1), <anonymous>:3:9)\n    at eval (<anonymous>)\n"), "TypeError: x is not a function (line 3)");
    assert.equal(messageOf('Exception in thread "main" java.lang.AssertionError\n\tat Main.main(Main.java:24)\n'), 'Exception in thread "main" java.lang.AssertionError');
    const node = "node:assert:125\n  throw new AssertionError(obj);\n  ^\n\nAssertionError [ERR_ASSERTION]: Expected values to be loosely deep-equal:\n\n21\n\nshould loosely deep-equal\n\n22\n    at test (/sandbox/run/main.js:8:12)\n    at Object.<anonymous> (/sandbox/run/main.js:10:1) {\n  generatedMessage: true,\n  code: 'ERR_ASSERTION'\n}\n\nNode.js v18.20.4\n";
    assert.equal(messageOf(node), "AssertionError [ERR_ASSERTION]: Expected values to be loosely deep-equal: 21 should loosely deep-equal 22");
    assert.equal(messageOf("main: main.cpp:12: int main(): Assertion `sum_to_n(1) == 1' failed.\n"), "main: main.cpp:12: int main(): Assertion `sum_to_n(1) == 1' failed.");
    assert.equal(messageOf("error[E0432]: unresolved import `rand`\n --> main.rs:3:5\n  |\n\nerror: aborting due to previous error\n\nFor more information about this error, try `rustc --explain E0432`.\n"), "error[E0432]: unresolved import `rand`");
    assert.equal(messageOf('Traceback (most recent call last):\n  File "main.py", line 3, in <module>\n    assert f(1) == 2\nAssertionError\n'), "AssertionError");
  });
});

for (const [backend, open] of [["docker", () => openDockerForTests(2)], ["bwrap", openBwrapForTests]] as const) {
  const opened = await open();
  describe(`whole-program tests in the ${backend} sandbox`, { skip: opened.skip }, () => {
    const sb = opened.sandbox as Sandbox;
    after(() => sb?.close());
    const services = testServices({ sandbox: fakeSandbox(sb) });
    const javaMissing = sb?.languages.includes("java") ? false : notBuiltReason("java") ?? `${backend} does not run java`;
    // javac on bwrap: its JVM's threads wait for the slot's one CPU, which the meter counts as
    // the host's load, and at 400 ms the run ends as "overloaded" (no verdict) on a busy host.
    const skipCompile = backend === "bwrap" ? "javac's threads read as host load under bwrap's meter" : javaMissing && !IN_CI ? `not built: ${javaMissing}` : false;
    test("a compile that runs out of time is time_limit naming the compiler, for stdio and whole-program tests", { skip: skipCompile }, async () => {
      // javac spends about 1.1 s of CPU on a one-line class (measured here); 400 ms is far from
      // it, and the sandbox's overload bound (10x the limit on the wall) is 4 s on a busy host.
      const opts = { language: "java", compile_time_limit_ms: 400, time_limit_ms: 2000 };
      const stdio = await verifyDirect(code, { response: "```java\npublic class Main { public static void main(String[] a) { System.out.println(1); } }\n```", reference: { inputs: ["", ""], outputs: ["1", "1"] }, options: opts }, { services });
      assert.equal(stdio.reward, 0);
      assert.deepEqual((stdio.details as any).tests.map((t: any) => t.status), ["time_limit", "time_limit"]);
      assert.match(stdio.reason, /time limit \(the compiler \(javac\) ran out of time after \d+ ms; raise options\.compile_time_limit_ms/);
      const program = await verifyDirect(code, { response: "```java\n" + SHAPES.java.ok + "\n```", reference: SHAPES.java.reference, options: opts }, { services });
      assert.equal(program.reward, 0);
      assert.equal((program.details as any).tests[0].status, "time_limit");
      assert.match(program.reason, /the compiler \(javac\) ran out of time/);
    });
    const cppMissing = sb?.languages.includes("cpp") ? false : notBuiltReason("cpp") ?? `${backend} does not run cpp`;
    test("C++: a solution calling OpenSSL's MD5 links (HumanEval-X's CPP/162, which CodeGeeX links with -lcrypto)", { skip: cppMissing && !IN_CI ? `not built: ${cppMissing}` : false }, async () => {
      // CPP/162's shape: string_to_md5 through <openssl/md5.h>, the test comparing digests.
      const solution = "#include<stdio.h>\n#include<string>\n#include<openssl/md5.h>\nusing namespace std;\nstring string_to_md5(string text){\n" +
        "    unsigned char md[16];\n    if (text.length()==0) return \"None\";\n    MD5_CTX c;\n    MD5_Init(&c);\n    MD5_Update(&c, (unsigned char*)text.c_str(), text.length());\n    MD5_Final(md, &c);\n" +
        "    string out_str=\"\";\n    for (int i=0;i<16;i++) {\n        char w;\n        if (md[i]<160) w=48+md[i]/16;\n        else w=87+md[i]/16;\n        out_str=out_str+w;\n        if (md[i]%16<10) w=48+md[i]%16;\n        else w=87+md[i]%16;\n        out_str=out_str+w;\n    }\n    return out_str;\n}\n";
      const test = "#undef NDEBUG\n#include<assert.h>\nint main(){\n    assert (string_to_md5(\"Hello world\") == \"3e25960a79dbc69b674cd4ec67a72c62\");\n    assert (string_to_md5(\"\") == \"None\");\n}\n";
      const ok = await verifyDirect(code, { response: solution, reference: { test }, options: { language: "cpp", extract: "full", benchmark: "humaneval-x" } }, { services });
      assert.equal(ok.reward, 1, ok.reason);
      const wrong = await verifyDirect(code, { response: solution.replace("MD5_Final(md, &c);", "MD5_Final(md, &c); md[0] ^= 1;"), reference: { test }, options: { language: "cpp", extract: "full", benchmark: "humaneval-x" } }, { services });
      assert.equal(wrong.reward, 0, wrong.reason);
    });
    const goMissing = sb?.languages.includes("go_test") ? false : notBuiltReason("go_test") ?? `${backend} does not run go_test`;
    test("Go: the image's build cache is warm (go test -c with testify well within 12 s of CPU; an empty cache spent 23 s) and no run can write into it", { skip: goMissing && !IN_CI ? `not built: ${goMissing}` : false }, async () => {
      const warm = await verifyDirect(code, { response: "```go\n" + SHAPES.go.ok + "\n```", reference: SHAPES.go.reference, options: { language: "go", compile_time_limit_ms: 12_000 } }, { services });
      assert.equal(warm.reward, 1, warm.reason);
      // A program trying to leave something in the cache for the next compile: the root is read-only.
      const poison = `package main\n\nimport (\n    "fmt"\n    "os"\n)\n\nfunc main() {\n    if err := os.WriteFile("${GO_CACHE}/00/poison-d", []byte("x"), 0644); err != nil {\n        fmt.Println("refused")\n    } else {\n        fmt.Println("written")\n    }\n}\n`;
      const r = await verifyDirect(code, { response: "```go\n" + poison + "\n```", reference: { inputs: [""], outputs: ["refused"] }, options: { language: "go" } }, { services });
      assert.equal(r.reward, 1, r.reason);
    });
    const rustMissing = sb?.languages.includes("rust_test") ? false : notBuiltReason("rust_test") ?? `${backend} does not run rust_test`;
    test("Rust: HumanEval-X's crates (rand, regex, md5) link, as its #[test] module and as a whole program", { skip: rustMissing && !IN_CI ? `not built: ${rustMissing}` : false }, async () => {
      // HumanEval-X's Rust declaration header (every task's), and the canonical solutions of
      // Rust/162 (md5::compute), Rust/91 (regex::Regex) and Rust/53 (a test drawing with rand's Rng).
      const header = "fn main(){ \n } \n\nuse std::{slice::Iter, cmp::{max, self}, mem::replace, collections::{HashSet, HashMap}, ops::Index, ascii::AsciiExt};\nuse rand::Rng;\nuse regex::Regex;\nuse md5;\nuse std::any::{Any, TypeId};\n\n";
      const solution = (digest: string) => header +
        `fn string_to_md5(text: &str) -> String{\n    if text.is_empty() {\n        return "None".to_string();\n    }\n    let digest = md5::compute(text.as_bytes());\n    return format!("${digest}", digest);\n}\n` +
        'fn is_bored(s:&str) -> i32 {\n    let mut count = 0;\n    let regex = Regex::new(r"[.?!]\\s*").expect("Invalid regex");\n    let sqn: Vec<&str> = regex.split(s).into_iter().collect();\n    for s in sqn {\n        if s.starts_with("I ") {\n            count += 1;\n        }\n    }\n    return count;\n}\n' +
        "fn add(x:i32, y:i32) -> i32{\n    return x + y;\n}\n";
      const testModule = "#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[test]\n    fn test_string_to_md5() {\n        assert_eq!(string_to_md5(\"Hello world\"), \"3e25960a79dbc69b674cd4ec67a72c62\");\n        assert_eq!(string_to_md5(\"\"), \"None\");\n    }\n\n" +
        "    #[test]\n    fn test_is_bored() {\n        assert!(is_bored(\"Is the sky blue?\") == 0);\n        assert!(is_bored(\"I feel good today. I will be productive. will kill It\") == 2);\n    }\n\n" +
        "    #[test]\n    fn test_add() {\n        for _ in 0..100 {\n            let mut rng = rand::thread_rng();\n            let mut x: i32 = rng.gen();\n            x = x % 1000;\n            let mut y: i32 = rng.gen();\n            y = y % 1000;\n            assert!(add(x, y) == x + y);\n        }\n    }\n\n}\n";
      const opts = { language: "rust", extract: "full", benchmark: "humaneval-x" };
      const ok = await verifyDirect(code, { response: solution("{:x}"), reference: { test: testModule }, options: opts }, { services });
      assert.equal(ok.reward, 1, ok.reason);
      const wrong = await verifyDirect(code, { response: solution("{:X}"), reference: { test: testModule }, options: opts }, { services });
      assert.equal(wrong.reward, 0, wrong.reason);
      assert.match(wrong.reason, /3E25960A79DBC69B674CD4EC67A72C62|assertion/);
      // The whole-program shape: the test is a main of its own (compiled with -O, as `rust` is).
      const main = 'fn main() {\n    assert_eq!(string_to_md5("password"), "5f4dcc3b5aa765d61d8327deb882cf99");\n    assert_eq!(is_bored("I love It !"), 1);\n    let x: i32 = rand::thread_rng().gen_range(0..1000);\n    assert_eq!(add(x, 1), x + 1);\n}\n';
      const whole = await verifyDirect(code, { response: solution("{:x}").replace("fn main(){ \n } \n", ""), reference: { test_program: main }, options: { language: "rust", extract: "full" } }, { services });
      assert.equal(whole.reward, 1, whole.reason);
    });
    const pyMissing = sb?.languages.includes("python") ? false : notBuiltReason("python") ?? `${backend} does not run python`;
    test("Python's stdout is block-buffered in the fork server too: 450,000 print() calls fit a 2 s time limit", { skip: pyMissing && !IN_CI ? `not built: ${pyMissing}` : false }, async () => {
      // Before: the runner's PYTHONUNBUFFERED=0 read as set, the warm run's stdout was
      // unbuffered, and each print() two write(2)s: 3+ s of CPU where `python3 main.py` takes 0.4 s.
      const n = 450_000;
      const r = await verifyDirect(code, { response: "```python\nn=int(input())\nfor _ in range(n):\n    print(1)\n```", reference: { inputs: [`${n}\n`], outputs: ["1\n".repeat(n)] }, options: { time_limit_ms: 2000 } }, { services });
      assert.equal(r.reward, 1, r.reason);
      // still flushed at exit after an exception, and stderr still arrives
      const crash = await verifyDirect(code, { response: "```python\nprint(1)\nraise ValueError('boom')\n```", reference: { inputs: [""], outputs: ["1"] } }, { services });
      assert.equal(crash.reward, 0);
      assert.match(crash.reason, /runtime error.*ValueError: boom/);
    });
    test("a right output over the sandbox's 1 MiB default cap scores 1; a wrong one of that size 0", { skip: pyMissing && !IN_CI ? `not built: ${pyMissing}` : false }, async () => {
      // Before: every run was capped at 1 MiB, so a right 1.4 MB output scored 0 "output limit".
      const n = 200_000;
      const expected = Array.from({ length: n }, (_, i) => String(1_000_000 + i)).join("\n") + "\n";
      assert.ok(expected.length > 1.4e6);
      const verify = (body: string) => verifyDirect(code, { response: "```python\nn=int(input())\n" + body + "\n```", reference: { inputs: [`${n}\n`], outputs: [expected] } }, { services });
      const ok = await verify("print('\\n'.join(str(1000000+i) for i in range(n)))");
      assert.equal(ok.reward, 1, ok.reason);
      const wrong = await verify("print('\\n'.join(str(1000001+i) for i in range(n)))");
      assert.equal(wrong.reward, 0, wrong.reason);
      assert.equal((wrong.details as any).tests[0].status, "failed");
      // endless output still ends at the (raised) cap
      const endless = await verify("while True: print('1000000' * 100)");
      assert.equal(endless.reward, 0);
      assert.equal((endless.details as any).tests[0].status, "output_limit");
    });
    for (const [lang, s] of Object.entries(SHAPES)) {
      const language = s.language ?? lang;
      const runs = programLanguage(language, String(s.reference.test ?? s.reference.tests ?? s.reference.test_program));
      const missing = sb?.languages.includes(runs) ? false : notBuiltReason(runs) ?? `${backend} does not run ${runs}`;
      if (missing && IN_CI) {
        test(`${lang}: its image is built (CI builds every image)`, () => assert.fail(missing));
        continue;
      }
      test(`${lang}: correct 1, wrong 0 with the test's words, debug output free, hostile 0`, { skip: missing ? `not built: ${missing}` : false }, async () => {
        const verify = (src: string) =>
          verifyDirect(code, { response: "```\n" + src + "\n```", reference: s.reference, options: { language, time_limit_ms: 2000 } }, { services });
        const ok = await verify(s.ok);
        assert.equal(ok.reward, 1, ok.reason);
        // Python's whole-program tests run under the assert harness (an always-equal object or a
        // printed end marker would pass them in the program's own process); the others as programs.
        assert.equal((ok.details as any).format, lang === "python" ? "assert" : "program");
        const wrong = await verify(s.wrong);
        assert.equal(wrong.reward, 0, wrong.reason);
        assert.match(wrong.reason, s.wrongSays);
        const chatty = await verify(s.chatty);
        assert.equal(chatty.reward, 1, chatty.reason);
        for (const h of s.hostile) {
          const r = await verify(h);
          assert.equal(r.reward, 0, `${h}: ${r.reason}`);
        }
      });
    }
  });
}

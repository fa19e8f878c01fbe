/**
 * One small program per language and kind, shared by tests/languages.test.ts and
 * bench/languages.ts. Each `ok` program reads two integers from stdin and prints their sum;
 * `wrong` prints the sum plus one; `broken` does not compile (or parse); `loop` never ends;
 * `bomb` keeps allocating memory it touches.
 */
export interface Samples {
  ok: string;
  wrong: string;
  broken: string;
  /** What the compiler's (or interpreter's) message about `broken` contains. */
  brokenSays: RegExp;
  loop: string;
  bomb: string;
}

export const SAMPLES: Record<string, Samples> = {
  python: {
    ok: "a, b = map(int, input().split())\nprint(a + b)\n",
    wrong: "a, b = map(int, input().split())\nprint(a + b + 1)\n",
    broken: "def f(:\n  pass\n",
    brokenSays: /SyntaxError/,
    loop: "while True:\n  pass\n",
    bomb: "x = []\nwhile True:\n  x.append(bytearray(1 << 24))\n",
  },
  bash: {
    ok: "read a b\necho $((a + b))\n",
    wrong: "read a b\necho $((a + b + 1))\n",
    broken: "if then fi (\n",
    brokenSays: /syntax error/,
    loop: "while :; do :; done\n",
    bomb: "mapfile x < /dev/zero\n",
  },
  java: {
    ok: "import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n    Scanner s = new Scanner(System.in);\n    long x = s.nextLong(), y = s.nextLong();\n    System.out.println(x + y);\n  }\n}\n",
    wrong: "import java.util.*;\npublic class Solution {\n  public static void main(String[] a) {\n    Scanner s = new Scanner(System.in);\n    long x = s.nextLong(), y = s.nextLong();\n    System.out.println(x + y + 1);\n  }\n}\n",
    broken: "public class Main {\n  public static void main(String[] a) {\n    int x = \"no\";\n  }\n}\n",
    brokenSays: /incompatible types/,
    loop: "public class Main {\n  public static void main(String[] a) {\n    long i = 0;\n    while (true) { i++; }\n  }\n}\n",
    bomb: "import java.util.*;\npublic class Main {\n  public static void main(String[] a) {\n    List<long[]> l = new ArrayList<>();\n    while (true) l.add(new long[1 << 20]);\n  }\n}\n",
  },
  go: {
    ok: "package main\nimport \"fmt\"\nfunc main() {\n  var a, b int64\n  fmt.Scan(&a, &b)\n  fmt.Println(a + b)\n}\n",
    wrong: "package main\nimport \"fmt\"\nfunc main() {\n  var a, b int64\n  fmt.Scan(&a, &b)\n  fmt.Println(a + b + 1)\n}\n",
    broken: "package main\nfunc main() {\n  var x int = \"no\"\n}\n",
    brokenSays: /cannot use "no"/,
    loop: "package main\nfunc main() {\n  i := 0\n  for {\n    i++\n  }\n}\n",
    bomb: "package main\nimport \"fmt\"\nfunc main() {\n  var l [][]byte\n  for {\n    b := make([]byte, 1<<24)\n    for i := range b { b[i] = 1 }\n    l = append(l, b)\n    if len(l) < 0 { fmt.Println(len(l)) }\n  }\n}\n",
  },
  rust: {
    ok: "use std::io::*;\nfn main() {\n  let mut s = String::new();\n  stdin().read_to_string(&mut s).unwrap();\n  let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n  println!(\"{}\", v[0] + v[1]);\n}\n",
    wrong: "use std::io::*;\nfn main() {\n  let mut s = String::new();\n  stdin().read_to_string(&mut s).unwrap();\n  let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n  println!(\"{}\", v[0] + v[1] + 1);\n}\n",
    broken: "fn main() {\n  let x: i32 = \"no\";\n}\n",
    brokenSays: /mismatched types/,
    loop: "fn main() {\n  let mut i: u64 = 0;\n  loop { i = i.wrapping_add(1); if i == 0 { println!(\"{}\", i); } }\n}\n",
    bomb: "fn main() {\n  let mut l: Vec<Vec<u8>> = Vec::new();\n  loop { l.push(vec![1u8; 1 << 24]); }\n}\n",
  },
  typescript: {
    ok: "const [a, b] = require(\"fs\").readFileSync(0, \"utf8\").trim().split(/\\s+/).map(Number);\nconst s: number = a + b;\nconsole.log(s);\n",
    wrong: "const [a, b] = require(\"fs\").readFileSync(0, \"utf8\").trim().split(/\\s+/).map(Number);\nconst s: number = a + b + 1;\nconsole.log(s);\n",
    broken: "const x: number = ;\nfunction (\n",
    brokenSays: /error TS\d+/,
    loop: "let i = 0;\nwhile (true) { i++; }\n",
    bomb: "const l: number[][] = [];\nwhile (true) l.push(new Array(1 << 20).fill(1));\n",
  },
  csharp: {
    ok: "using System;\nclass P {\n  static void Main() {\n    var p = Console.ReadLine().Split();\n    Console.WriteLine(long.Parse(p[0]) + long.Parse(p[1]));\n  }\n}\n",
    wrong: "using System;\nclass P {\n  static void Main() {\n    var p = Console.ReadLine().Split();\n    Console.WriteLine(long.Parse(p[0]) + long.Parse(p[1]) + 1);\n  }\n}\n",
    broken: "class P {\n  static void Main() {\n    int x = \"no\";\n  }\n}\n",
    brokenSays: /error CS0029/,
    loop: "class P {\n  static void Main() {\n    long i = 0;\n    while (true) { i++; }\n  }\n}\n",
    bomb: "using System.Collections.Generic;\nclass P {\n  static void Main() {\n    var l = new List<long[]>();\n    while (true) l.Add(new long[1 << 20]);\n  }\n}\n",
  },
  ruby: {
    ok: "a, b = gets.split.map(&:to_i)\nputs a + b\n",
    wrong: "a, b = gets.split.map(&:to_i)\nputs a + b + 1\n",
    broken: "def f(\n",
    brokenSays: /syntax error/,
    loop: "i = 0\nloop { i += 1 }\n",
    bomb: "l = []\nloop { l << (\"x\" * (1 << 24)) }\n",
  },
  php: {
    ok: "<?php\n[$a, $b] = array_map('intval', explode(' ', trim(fgets(STDIN))));\necho $a + $b, \"\\n\";\n",
    wrong: "<?php\n[$a, $b] = array_map('intval', explode(' ', trim(fgets(STDIN))));\necho $a + $b + 1, \"\\n\";\n",
    broken: "<?php\nfunction (\n",
    brokenSays: /Parse error/,
    loop: "<?php\n$i = 0;\nwhile (true) { $i++; }\n",
    bomb: "<?php\n$l = [];\nwhile (true) { $l[] = str_repeat('x', 1 << 24); }\n",
  },
  lua: {
    ok: "local a, b = io.read(\"n\", \"n\")\nprint(math.tointeger(a + b) or a + b)\n",
    wrong: "local a, b = io.read(\"n\", \"n\")\nprint(math.tointeger(a + b + 1) or a + b + 1)\n",
    broken: "function f(\n",
    brokenSays: /expected/,
    loop: "local i = 0\nwhile true do i = i + 1 end\n",
    bomb: "local l = {}\nlocal s = string.rep(\"x\", 1 << 20)\nlocal i = 0\nwhile true do i = i + 1; l[i] = s .. i end\n",
  },
  perl: {
    ok: "my ($a, $b) = split ' ', <STDIN>;\nprint $a + $b, \"\\n\";\n",
    wrong: "my ($a, $b) = split ' ', <STDIN>;\nprint $a + $b + 1, \"\\n\";\n",
    broken: "sub f {\n",
    brokenSays: /Missing right curly/,
    loop: "my $i = 0;\nwhile (1) { $i++; }\n",
    bomb: "my @l;\nwhile (1) { push @l, 'x' x (1 << 24); }\n",
  },
  r: {
    ok: "v <- scan(file(\"stdin\"), quiet = TRUE)\ncat(v[1] + v[2], \"\\n\", sep = \"\")\n",
    wrong: "v <- scan(file(\"stdin\"), quiet = TRUE)\ncat(v[1] + v[2] + 1, \"\\n\", sep = \"\")\n",
    broken: "f <- function( {\n",
    brokenSays: /unexpected/,
    loop: "i <- 0\nwhile (TRUE) i <- i + 1\n",
    bomb: "l <- list()\ni <- 0\nwhile (TRUE) { i <- i + 1; l[[i]] <- runif(2^21) }\n",
  },
};

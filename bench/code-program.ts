/**
 * The trivial test the code benches time (bench/code.ts, code-warm-ab.ts, code-floor.ts,
 * code-ruby.ts): read n, print the sum of the first n squares. One source, so each bench's
 * figures are for the same program.
 */
export const PROGRAM = "n = int(input())\nprint(sum(i * i for i in range(n)))\n";
export const CPP = "#include <cstdio>\nint main(){ long n; if (scanf(\"%ld\", &n) != 1) return 1; long s = 0; for (long i = 0; i < n; i++) s += i * i; printf(\"%ld\\n\", s); }\n";
export const STDIN = "1000\n";
export const EXPECT = String(Array.from({ length: 1000 }, (_, i) => i * i).reduce((a, b) => a + b, 0));

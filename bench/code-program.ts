/**
 * The trivial test the code benches time (bench/code.ts, code-warm-ab.ts, code-floor.ts,
 * code-ruby.ts): read n, print the sum of the first n squares. One source, so each bench's
 * figures are for the same program.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { spawnOut } from "./lib.js";

export const PROGRAM = "n = int(input())\nprint(sum(i * i for i in range(n)))\n";
export const CPP = "#include <cstdio>\nint main(){ long n; if (scanf(\"%ld\", &n) != 1) return 1; long s = 0; for (long i = 0; i < n; i++) s += i * i; printf(\"%ld\\n\", s); }\n";
export const STDIN = "1000\n";
export const EXPECT = String(Array.from({ length: 1000 }, (_, i) => i * i).reduce((a, b) => a + b, 0));

/**
 * CPP compiled once in the cpp image's root filesystem (chroot, `g++ -O2`), as bench/code.ts's
 * (f) runs it bare: the argv that runs the binary, and the files to remove when the bench ends.
 */
export async function buildCppBare(cppRoot: string): Promise<{ argv: string[]; files: string[] }> {
  const bin = join(cppRoot, "sandbox", "run", "bench_main");
  writeFileSync(bin + ".cpp", CPP);
  await spawnOut(["chroot", cppRoot, "g++", "-O2", "-std=gnu++17", "-pipe", "-o", "/sandbox/run/bench_main", "/sandbox/run/bench_main.cpp"]);
  return { argv: ["chroot", cppRoot, "/sandbox/run/bench_main"], files: [bin, bin + ".cpp"] };
}

"""Regenerates lcb-stdio-cases.json: LiveCodeBench's own verdict (grade_stdio) on pairs of a
program's stdout and the expected output, so the code verifier's `lines` comparison is checked
against it (compare.test.ts). Nothing of LiveCodeBench is copied here; run it on its file:

    git --git-dir=<LiveCodeBench snapshot> show 28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24:lcb_runner/evaluation/testing_util.py > /tmp/lcb_testing_util.py
    python3 verifiers/code/lcb_stdio_cases.py /tmp/lcb_testing_util.py > verifiers/code/lcb-stdio-cases.json

Each pair runs as a program that writes `actual` to stdout, graded against `expected` by
grade_stdio (LiveCodeBench, MIT licence, Copyright (c) 2024 LiveCodeBench).
"""
import importlib.util
import json
import signal
import sys


def pairs():
    out = []
    add = lambda a, e: out.append((a, e))
    for x in ["1", "1 2", "1\n2", "YES", "abc def", "3.14"]:
        for a, e in [(x, x), (x + "\n", x), (x, x + "\n"), (x + "\n\n\n", x), (x + "   ", x), (x + "\t\n", x), ("   " + x, x),
                     ("\n" + x, x), ("\n\n" + x + "\n", x + "\n"), (x.replace("\n", "\r\n") + "\r\n", x + "\n"), (x + "\r", x)]:
            add(a, e)
    for a, e in [("1\r\n2", "1\n2"), ("1\n\n2", "1\n2"), ("1\n2", "1\n\n2"), ("1  2", "1 2"), ("1\t2", "1 2"), ("a  b", "a b"),
                 ("1\n2", "1 2"), ("1 2", "1\n2"), (" 1\n 2", "1\n2"), ("1\n 2", "1\n2"), ("", ""), ("", "\n"), ("\n", ""),
                 ("   \n  ", ""), ("", "0"), ("0", ""), ("1", "1\n2"), ("1\n2", "1"), ("1\n2\n3", "1\n2"), ("a b", "a b c"),
                 ("abc", "ab c"), ("yes", "YES"), ("YES", "NO"), ("a 1.0", "a 1"), ("1.0 a", "1 a"), ("x\n1.0", "x\n1")]:
        add(a, e)
    nums = [("1.0", "1"), ("1", "1.0"), ("1.00", "1.0"), ("-0", "0"), ("0", "-0"), ("-0.0", "0.0"), ("+1", "1"), ("01", "1"),
            ("1e-7", "0"), ("1.0000001", "1"), ("1000000000", "1000000007"), ("1e9", "1000000000"), ("1000000000.0", "1000000007"),
            ("1e400", "2e400"), ("1e400", "1" + "0" * 400), ("0.1", ".1"), ("1.", "1"), ("12345678901234567890", "12345678901234567891"),
            ("12345678901234567890", "12345678901234567890.0"), ("3.14159265", "3.14159266"), ("1" + "0" * 300, "1" + "0" * 300 + ".0"),
            ("1" + "0" * 300, "1" + "0" * 299 + "1"), ("0x10", "16"), ("1,5", "1.5"), ("1e5", "100000"), ("100000", "1E5"),
            ("0.30000000000000004", "0.3"), ("2 1", "1 2"), ("1.0 2.0", "1 2"), ("1.0001 2", "1 2"), ("1.50e2", "150"),
            ("-1e-7", "1e-7"), ("1e+2", "100"), ("0.000", "0"), ("-5", "5"), ("1 2 3", "1 2"), ("1.0  2.00", "1 2")]
    for a, e in nums:
        add(a, e)
        add(a + "\n", e + "\n")
        add("7\n" + a, "7\n" + e)
    return out


def main():
    spec = importlib.util.spec_from_file_location("lcb_testing_util", sys.argv[1])
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    signal.signal(signal.SIGALRM, m.timeout_handler)
    rows = []
    real = sys.stdout
    for a, e in pairs():
        code = "import sys\nsys.stdout.write(" + repr(a) + ")\n"
        res, _ = m.grade_stdio(code=code, all_inputs=[""], all_outputs=[e], timeout=10)
        sys.stdout = real  # grade_stdio captures stdout
        rows.append({"actual": a, "expected": e, "lcb": res == [True]})
    json.dump({"source": "LiveCodeBench 28fef95ea8c9f7a547c8329f2cd3d32b92c1fa24 lcb_runner/evaluation/testing_util.py grade_stdio", "cases": rows}, real, indent=0)
    real.write("\n")


if __name__ == "__main__":
    main()

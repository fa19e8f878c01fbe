"""HumanEval-X's own harness (THUDM/CodeGeeX), run bare in Assay's sandbox images, for
bench/humaneval-x.ts.

    python3 bench/harness/humaneval_x_reference.py FILE.jsonl[.gz] --image TAG [--every K] [--limit N]
        [--go-evaluation DIR] [--timeout S]

Prints one JSON line per task: {"task_id", "passed", "result"}.

Each task's program is put together by CodeGeeX's own process_humaneval_test (copied below
verbatim, with its IMPORT_HELPER) from the row's canonical_solution, and run with CodeGeeX's own
commands and verdict rules (codegeex/benchmark/execution.py, check_correctness), in one
`docker run --network none` of the language's sandbox image (the toolchain Assay runs, no
network) holding every task of the file:
- cpp: `g++ -std=c++11 test.cpp` (`-lcrypto -lssl` for a task id containing "162"), then
  `./a.out`; passed on exit status 0.
- java: `javac Main.java`, then `java -cp . Main`; passed on exit status 0. (At CodeGeeX's
  HEAD the `java` line is commented out, so its harness as published fails every Java task on
  `exec_result.returncode` of None; the line it comments out is what runs here.)
- js: `node test.js`; passed when it prints nothing on stdout and nothing on stderr.
- go: `go test -timeout=Ts main_test.go` in CodeGeeX's evaluation module (its go.mod and
  vendor.tar.gz: testify and the rest, vendored; --go-evaluation names the folder holding
  both); passed on exit status 0. CGO_ENABLED=0: the go image has no C compiler, and no task
  uses cgo (Assay's go_test builds the same way).
- python: the program run as `python3 test.py` (CodeGeeX exec()s it in-process; same verdict:
  passed when it raises nothing).
- rust: every task a binary `rust_<n>` of one crate (CodeGeeX's codegeex/benchmark/rust: its
  Cargo.toml below, src/bin/<task>.rs), `cargo check --bin X --message-format json`, then
  `cargo test --bin X --message-format json`; passed on exit status 0 of both. CodeGeeX's
  Cargo.toml asks crates.io for rand 0.4, regex 1 and md5 0.7.0; with no network the crate
  resolves offline against the Debian sources the rust image holds (/usr/share/cargo/registry:
  rand 0.8.5, regex 1.7.1, md5 0.7.0), the same crates Assay links, so `rand = "0.8"` here. The
  dependencies are built once before the first task (the first task's own check and test would
  otherwise spend --timeout on them).

CodeGeeX's evaluate_functional_correctness passes timeout=500 s; each step here runs under
`timeout` of --timeout seconds (default 60), ample for a canonical solution.

process_humaneval_test and IMPORT_HELPER: THUDM/CodeGeeX @ 2838420b7b4492cf3d16bce5320e26e65960c9e2,
codegeex/benchmark/humaneval-x/evaluate_humaneval_x.py and codegeex/benchmark/utils.py.
Copyright 2022 THUDM. Licensed under the Apache License, Version 2.0
(http://www.apache.org/licenses/LICENSE-2.0); copied unchanged but for the `problems` lookup,
which here is the row itself.
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

IMPORT_HELPER = {
    "python": [
        "import math",
        "import re",
        "import sys",
        "import copy",
        "import datetime",
        "import itertools",
        "import collections",
        "import heapq",
        "import statistics",
        "import functools",
        "import hashlib",
        "import numpy",
        "import numpy as np",
        "import string",
        "from typing import *",
        "from collections import *",
    ],
    "go": [
        "math",
        "strings",
        "fmt",
        "strconv",
        "time",
        "bytes",
        "regexp",
        "sort",
        "math/rand",
        "crypto/md5",
    ],
    "cpp": [
        "#include<stdlib.h>",
        "#include<algorithm>",
        "#include<math.h>",
        "#include<stdio.h>",
        "#include<vector>",
        "#include<string>",
        "#include<climits>",
        "#include<cstring>",
        "#include<iostream>",
    ],
}


def process_humaneval_test(sample, problems, example_test=False):
    task_id = sample["task_id"]
    language = task_id.split("/")[0].lower()

    prompt = sample["prompt"]
    if example_test and "example_test" in problems[task_id] and problems[task_id]["example_test"] != "":
        test = problems[task_id]["example_test"]
    else:
        test = problems[task_id]["test"]
    code = sample["generation"]

    # Pre-process for different languages
    if language == "python":
        code_ = []
        for line in code.split("\n"):
            if (len(line.strip()) > 0 and line[0] != ' ' and line[0] != '\t'):
                break
            code_.append(line)
        code = "\n".join(code_)
        test_setup = "\n".join(IMPORT_HELPER["python"]) + "\n"
        test_string = test_setup + prompt + code + "\n" + test + "\n"
    elif language == "cpp":
        test_set_up = ""
        for s in IMPORT_HELPER["cpp"]:
            if s not in prompt:
                test_set_up += s + "\n"
        test_string = test_set_up + "\n" + prompt + code + "\n" + test
    elif language == "java":
        test_string = prompt + code + "\n" + test
    elif language == "js" or language == "javascript":
        test_string = prompt + code + "\n" + test
    elif language == "go":
        import_string = problems[task_id]["import"]
        prompt = prompt.replace(import_string, "")
        if example_test and "example_test" in problems[task_id]:
            test = problems[task_id]["example_test"]
        else:
            test = problems[task_id]["test"]
        test_setup = problems[task_id]["test_setup"]
        other_pkgs = []
        for pkg in IMPORT_HELPER["go"]:
            if pkg not in test_setup:
                p = pkg.split("/")[-1]
                if p + "." in code:
                    other_pkgs.append(f"\"{pkg}\"")
        if other_pkgs:
            import_other_pkgs = "import (\n" + "    ".join([p + "\n" for p in other_pkgs]) + ")"
            test_string = test_setup + "\n" + import_other_pkgs + "\n" + prompt + code + "\n" + test
        else:
            test_string = test_setup + "\n" + prompt + code + "\n" + test
    elif language == "rust":
        main = "\nfn main(){ \n } \n"
        declaration = problems[task_id]["declaration"]
        test_string = main + declaration + prompt + code + test

    return test_string


def pick(rows, every, limit):
    """The documented sample: every K-th task (task index % K == 0), then the first N of those."""
    out = [r for i, r in enumerate(rows) if i % every == 0]
    return out[:limit] if limit else out


# The file each language's program is written to, and the shell steps CodeGeeX runs on it
# (execution.py). {t} is the per-step timeout in seconds.
FILES = {"cpp": "test.cpp", "java": "Main.java", "js": "test.js", "go": "main_test.go", "python": "test.py"}

# CodeGeeX's codegeex/benchmark/rust/Cargo.toml, rand's version the one Debian ships (see above),
# and cargo pointed at Debian's crate sources (a directory registry) in place of crates.io.
RUST_CARGO_TOML = """[package]
name = "rust"
version = "0.1.0"
edition = "2021"

[dependencies]
rand = "0.8"
regex = "1"
md5 = "0.7.0"
"""
RUST_CARGO_CONFIG = """[source.crates-io]
replace-with = "debian"
[source.debian]
directory = "/usr/share/cargo/registry"
"""


def rust_bin(task_id):
    """CodeGeeX's binary name for a task (execution.py: file_prefix)."""
    return task_id.lower().replace("/", "_")


def steps(lang, task_id, t):
    if lang == "cpp":
        libs = " -lcrypto -lssl" if "162" in task_id else ""
        return [("compile", f"timeout {t} g++ -std=c++11 test.cpp{libs}"), ("run", f"timeout {t} ./a.out")]
    if lang == "java":
        return [("compile", f"timeout {t} javac Main.java"), ("run", f"timeout {t} java -cp . Main")]
    if lang == "js":
        return [("run", f"timeout {t} node test.js")]
    if lang == "go":
        return [("run", f"timeout {t} go test -timeout={t}s main_test.go")]
    if lang == "python":
        return [("run", f"timeout {t} python3 test.py")]
    if lang == "rust":
        b = rust_bin(task_id)
        return [("compile", f"timeout {t} cargo check --offline --bin {b} --message-format json"),
                ("run", f"timeout {t} cargo test --offline --bin {b} --message-format json")]
    raise ValueError(lang)


def verdict(lang, out):
    """CodeGeeX's rule for one task from what its steps left (rc, stdout, stderr per step)."""
    c = out.get("compile")
    if c is not None and c["rc"] != 0:
        return "timed out" if c["rc"] == 124 else "failed: compilation error: " + (c["err"] or c["out"])[-400:]
    r = out.get("run")
    if r is None:
        return "failed: did not run"
    if r["rc"] == 124:
        return "timed out"
    if lang == "js":
        if r["err"]:
            return "failed: " + r["err"][-400:]
        if r["out"]:
            return "failed: " + r["out"][-400:]
        return "passed"
    if r["rc"] == 0:
        return "passed"
    return "failed: " + (r["err"] or r["out"])[-400:]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--image", required=True)
    ap.add_argument("--every", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--go-evaluation", default="")
    a = ap.parse_args()

    with (gzip.open if a.file.endswith(".gz") else open)(a.file, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    rows = pick(rows, a.every, a.limit)
    lang = rows[0]["task_id"].split("/")[0].lower()
    lang = {"javascript": "js"}.get(lang, lang)
    work = tempfile.mkdtemp(prefix="hx-bare-")
    try:
        script = ["set +e", "export HOME=/tmp GOCACHE=/tmp/gocache GOFLAGS=-mod=vendor CGO_ENABLED=0 CARGO_HOME=/tmp/cargo"]
        crate = os.path.join(work, "crate")
        if lang == "rust":
            os.makedirs(os.path.join(crate, "src", "bin"))
            os.makedirs(os.path.join(crate, ".cargo"))
            with open(os.path.join(crate, "Cargo.toml"), "w") as f:
                f.write(RUST_CARGO_TOML)
            with open(os.path.join(crate, ".cargo", "config.toml"), "w") as f:
                f.write(RUST_CARGO_CONFIG)
            # The dependencies, built once (check's metadata and test's code) on an empty binary.
            with open(os.path.join(crate, "src", "bin", "deps_warmup.rs"), "w") as f:
                f.write("fn main() {}\n")
            script.append("( cd /w/crate && cargo check --offline --bin deps_warmup >/dev/null 2>&1; cargo test --offline --no-run --bin deps_warmup >/dev/null 2>&1 )")
        for i, r in enumerate(rows):
            d = os.path.join(work, str(i))
            os.makedirs(d)
            sample = dict(r, generation=r["canonical_solution"])
            program = process_humaneval_test(sample, {r["task_id"]: r})
            target = os.path.join(crate, "src", "bin", rust_bin(r["task_id"]) + ".rs") if lang == "rust" else os.path.join(d, FILES[lang])
            with open(target, "w", encoding="utf-8") as f:
                f.write(program)
            if lang == "go":
                # CodeGeeX runs each Go test inside its evaluation module (go.mod + vendor/).
                shutil.copy(os.path.join(a.go_evaluation, "go.mod"), d)
                with tarfile.open(os.path.join(a.go_evaluation, "vendor.tar.gz")) as t:
                    t.extractall(d)
            line = "cd /w/crate" if lang == "rust" else f"cd /w/{i}"
            for name, cmd in steps(lang, r["task_id"], a.timeout):
                o = f"/w/{i}/{name}"
                line += f" && {{ {cmd} >{o}.out 2>{o}.err; echo $? >{o}.rc; test $(cat {o}.rc) = 0; }}"
            script.append(f"( {line} )")
        with open(os.path.join(work, "run.sh"), "w") as f:
            f.write("\n".join(script) + "\nexit 0\n")
        os.chmod(work, 0o777)
        subprocess.run(["docker", "run", "--rm", "--network", "none", "-v", f"{work}:/w", a.image, "sh", "/w/run.sh"],
                       check=True, stdout=subprocess.DEVNULL, stderr=sys.stderr)
        for i, r in enumerate(rows):
            d = os.path.join(work, str(i))
            out = {}
            for name, _ in steps(lang, r["task_id"], a.timeout):
                p = os.path.join(d, name + ".rc")
                if os.path.exists(p):
                    read = lambda ext: open(os.path.join(d, name + ext), encoding="utf-8", errors="replace").read()
                    out[name] = {"rc": int(read(".rc").strip() or "1"), "out": read(".out"), "err": read(".err")}
            res = verdict(lang, out)
            print(json.dumps({"task_id": r["task_id"], "passed": res == "passed", "result": res}), flush=True)
    finally:
        subprocess.run(["docker", "run", "--rm", "-v", f"{work}:/w", a.image, "sh", "-c", "rm -rf /w/*"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

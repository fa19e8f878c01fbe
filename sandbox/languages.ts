/**
 * How each language is run: the one table every part of Assay reads (backends, the code
 * verifier, fenced-block extraction, POST /run_code, `assay sandbox build --lang`).
 *
 * An entry names the image (recipe under sandbox/images/) whose toolchain runs it, the file the
 * program goes in, an optional compile step with its own limits, the run command, and the names
 * people and SandboxFusion use for it. Argument and environment templates: `{memoryMb}` (the
 * run's memory limit), `{heapMb}` (three quarters of it, for a VM's heap flag), `{main}` (the
 * program's main class, languages with `main`).
 *
 * Memory: a native program runs under an address-space rlimit equal to its memory limit. A VM
 * (JVM, V8, Mono, the Go runtime) reserves far more address space than it touches, so its
 * entry sets `addressSpaceMb`: the heap is bounded by the VM's own flag, real memory by the
 * container's (or bwrap slot's) cgroup, and the runtime's out-of-memory words (`oomMarkers`) make
 * a memory bomb `memory_limit` rather than a runtime error.
 */
export interface CompileStep {
  argv: string[];
  /** What the step leaves behind and the run needs (a file or a directory): the cached result. */
  output: string;
  /** Default wall (and CPU) limit, ms; a request's compileWallMs overrides it. */
  wallMs: number;
  /** Address-space rlimit of the compiler, MiB (0: none; the cgroup still caps real memory). */
  addressSpaceMb: number;
  env?: Record<string, string>;
}

export interface LanguageSpec {
  /** Recipe (image) name under sandbox/images/; absent for JavaScript (isolated-vm, no image). */
  image?: string;
  /** Where the program's source is written, relative to the scratch directory. */
  file: string;
  compile?: CompileStep;
  argv: string[];
  env?: Record<string, string>;
  /** The run's address-space rlimit as a function of its memory limit (MiB; 0: none). Unset: the memory limit. */
  addressSpaceMb?: (memoryMb: number) => number;
  /** Words the runtime prints when it runs out of memory (a non-zero exit with one is memory_limit). */
  oomMarkers: string[];
  /**
   * Python (and Ruby): the modules the warm interpreter (the runner's fork server) imports once,
   * so a run that imports them finds them loaded (ASSAY_SANDBOX_PRELOAD replaces Python's list).
   * A module the image lacks is skipped.
   */
  preload?: string[];
  /** The preload list is the language's own: ASSAY_SANDBOX_PRELOAD (Python's modules) does not replace it. */
  preloadFixed?: boolean;
  /** The program's main class, read from its source ({main} in file and argv). */
  main?: (code: string) => string;
  /** Other names for it: fenced-block tags, request languages. SandboxFusion's name comes first. */
  aliases: string[];
  /** Fenced blocks of this language are tagged as this language's (python-sci: python). */
  fence?: string;
  /** Built by `assay sandbox build` with no --lang. */
  buildByDefault?: boolean;
}

/** Three quarters of the memory limit for the heap; the rest is the VM's own (code, stacks, GC). */
export const heapMb = (mb: number) => Math.max(16, Math.floor(mb * 0.75));

const PY_OOM = ["MemoryError"];
/** What the code datasets' Python solutions import most (HumanEval, MBPP, APPS, LiveCodeBench). */
export const PY_PRELOAD = [
  "math", "collections", "itertools", "functools", "heapq", "bisect", "re", "string", "typing", "random",
  "fractions", "decimal", "statistics", "datetime", "operator", "copy",
];

/**
 * What the warm Ruby loads once: test/unit's test case and runner, which MultiPL-E's Ruby programs
 * require (`require 'test/unit'`: 85 ms of a run's CPU). Not test/unit.rb itself, which registers
 * the at_exit hook that runs the tests: a program that requires it loads that file alone (1 ms)
 * and its tests run as under `ruby main.rb`; one that does not sees no test run. Nothing else:
 * Ruby's require is global, so a preloaded library (set, json, prime) would be found by a program
 * that never required it, where `ruby main.rb` raises NameError (a reward changed).
 */
export const RB_PRELOAD = ["test/unit/testcase", "test/unit/autorunner"];

/**
 * The crates the rust image precompiles (sandbox/images/rust/recipe.json: Debian's rand 0.8.5,
 * regex 1.7.1 and md5 0.7.0, built by cargo --offline at image build), named to every Rust compile
 * as HumanEval-X's Cargo.toml names them to cargo; a program that does not `use` one never loads it.
 */
const RUST_CRATE_DIR = "/usr/lib/assay-crates";
export const RUST_CRATES = [
  ...["rand", "regex", "md5"].flatMap((c) => ["--extern", `${c}=${RUST_CRATE_DIR}/lib${c}.rlib`]),
  "-L", `dependency=${RUST_CRATE_DIR}/deps`,
];

/**
 * Go's build cache, warm from the image (sandbox/images/go/recipe.json: the standard library as
 * CGO_ENABLED=0 builds it, testify, vetted, built once at image build with the env below). It lies
 * in the read-only root on both backends: Go 1.19 takes a cache write that fails as a miss, so the
 * program's own package compiles in the run's scratch ($WORK under TMPDIR) and no run leaves
 * anything in it for the next. An empty cache per run spent 27 s of CPU on `go test -c` with
 * testify (net/http and crypto rebuilt for CGO_ENABLED=0), 1.4 s with this one.
 */
export const GO_CACHE = "/usr/lib/assay-gocache";

export const LANGUAGES: Record<string, LanguageSpec> = {
  python: {
    image: "python", file: "main.py", argv: ["python3", "main.py"], oomMarkers: PY_OOM,
    aliases: ["python", "python3", "py"], buildByDefault: true, preload: PY_PRELOAD,
  },
  "python-sci": {
    image: "python-sci", file: "main.py", argv: ["python3", "main.py"], oomMarkers: PY_OOM,
    // One BLAS thread (each would reserve its own buffers; one core per container anyway), and
    // 256 MiB of address space for the libraries' mappings (importing all six maps 170 MiB).
    env: { OPENBLAS_NUM_THREADS: "1", OMP_NUM_THREADS: "1" },
    addressSpaceMb: (mb) => mb + 256,
    aliases: ["python-sci", "python_sci", "python3-sci"], fence: "python",
    // NumPy too (≈ 100 ms to import, shared copy-on-write by every run); SciPy and pandas are
    // heavier and used less: add them with ASSAY_SANDBOX_PRELOAD.
    preload: [...PY_PRELOAD, "numpy"],
  },
  cpp: {
    image: "cpp", file: "main.cpp",
    // libcrypto linked where the program uses it (--as-needed: nowhere else): HumanEval-X's
    // CPP/162 (string_to_md5) calls OpenSSL's MD5, which CodeGeeX's harness links with -lcrypto.
    compile: { argv: ["g++", "-O2", "-std=gnu++17", "-pipe", "-o", "main", "main.cpp", "-Wl,--as-needed", "-lcrypto"], output: "main", wallMs: 10_000, addressSpaceMb: 2048 },
    argv: ["./main"], oomMarkers: ["std::bad_alloc"],
    aliases: ["cpp", "c++", "cxx", "cc"], buildByDefault: true,
  },
  javascript: {
    file: "main.js", argv: [], oomMarkers: [],
    aliases: ["nodejs", "javascript", "js", "node"],
  },
  bash: {
    image: "python", file: "main.sh", argv: ["bash", "main.sh"], oomMarkers: ["xmalloc: cannot allocate", "xrealloc: cannot allocate"],
    aliases: ["bash", "sh", "shell"],
  },
  java: {
    image: "java", file: "{main}.java",
    compile: {
      argv: ["javac", "-J-XX:+UseSerialGC", "-J-Xss8m", "-J-XX:TieredStopAtLevel=1", "-encoding", "UTF-8", "-nowarn", "-d", "classes", "{main}.java"],
      output: "classes", wallMs: 20_000, addressSpaceMb: 0, env: { MALLOC_ARENA_MAX: "2" },
    },
    argv: ["java", "-Xmx{heapMb}m", "-Xss64m", "-XX:+UseSerialGC", "-XX:ReservedCodeCacheSize=64m", "-XX:MaxMetaspaceSize=128m", "-XX:CompressedClassSpaceSize=64m", "-cp", "classes", "{main}"],
    env: { MALLOC_ARENA_MAX: "2" },
    addressSpaceMb: () => 0,
    oomMarkers: ["java.lang.OutOfMemoryError"],
    main: javaMain,
    aliases: ["java"],
  },
  go: {
    image: "go", file: "main.go",
    compile: {
      argv: ["go", "build", "-o", "main", "main.go"], output: "main", wallMs: 20_000, addressSpaceMb: 0,
      // GOPATH mode (no module lookups, nothing to download); the image's warm build cache
      // (GO_CACHE) holds the standard library, so only the program's package compiles. No
      // -trimpath: the cache's entries would not match it.
      env: { GOCACHE: GO_CACHE, GOPATH: "/sandbox/run/.gopath", GO111MODULE: "off", CGO_ENABLED: "0" },
    },
    argv: ["./main"],
    env: { GOMAXPROCS: "1" },
    // The Go runtime reserves about 700 MiB of address space before the first allocation.
    addressSpaceMb: (mb) => mb + 768,
    oomMarkers: ["fatal error: out of memory", "runtime: out of memory", "cannot allocate memory"],
    aliases: ["go", "golang"],
  },
  rust: {
    image: "rust", file: "main.rs",
    compile: { argv: ["rustc", "--edition", "2021", "-O", "-o", "main", "main.rs", ...RUST_CRATES], output: "main", wallMs: 30_000, addressSpaceMb: 0 },
    argv: ["./main"], oomMarkers: ["memory allocation of"],
    aliases: ["rust", "rs"],
  },
  typescript: {
    image: "typescript", file: "main.ts",
    // Transpiled, not type-checked (as ts-node --transpile-only, tsx or esbuild run TypeScript):
    // Debian ships no @types/node, and a program reading stdin through `require("fs")` must run.
    // Syntax errors are compile errors.
    compile: { argv: ["node", "-e", tsTranspiler(), "main.ts", "main.js"], output: "main.js", wallMs: 20_000, addressSpaceMb: 0 },
    argv: ["node", "--max-old-space-size={heapMb}", "--stack-size=65500", "main.js"],
    addressSpaceMb: () => 0,
    oomMarkers: ["JavaScript heap out of memory", "Reached heap limit"],
    aliases: ["typescript", "ts"],
  },
  csharp: {
    image: "csharp", file: "main.cs",
    compile: { argv: ["mcs", "-optimize+", "-nowarn:0219,0168,0414", "-r:System.Numerics", "-out:main.exe", "main.cs"], output: "main.exe", wallMs: 20_000, addressSpaceMb: 0 },
    argv: ["mono", "main.exe"],
    env: { MONO_GC_PARAMS: "max-heap-size={heapMb}m" },
    addressSpaceMb: () => 0,
    oomMarkers: ["OutOfMemoryException", "Out of memory"],
    aliases: ["csharp", "c#", "cs"],
  },
  ruby: {
    image: "scripting", file: "main.rb", argv: ["ruby", "main.rb"],
    oomMarkers: ["NoMemoryError", "failed to allocate memory"],
    aliases: ["ruby", "rb"],
    // The warm Ruby (sandbox/runner/ruby_server.rb) forks each run from an interpreter that has
    // loaded these: RB_PRELOAD says why only these.
    preload: RB_PRELOAD, preloadFixed: true,
  },
  php: {
    image: "scripting", file: "main.php", argv: ["php", "-d", "memory_limit={heapMb}M", "-d", "display_errors=stderr", "main.php"],
    oomMarkers: ["Allowed memory size of", "Out of memory"],
    aliases: ["php"],
  },
  lua: {
    image: "scripting", file: "main.lua", argv: ["lua5.4", "main.lua"], oomMarkers: ["not enough memory"],
    aliases: ["lua"],
  },
  perl: {
    image: "scripting", file: "main.pl", argv: ["perl", "main.pl"], oomMarkers: ["Out of memory"],
    aliases: ["perl", "pl"],
  },
  r: {
    image: "r", file: "main.R", argv: ["Rscript", "--vanilla", "main.R"], oomMarkers: ["cannot allocate vector", "cannot allocate memory"],
    aliases: ["R", "r", "rscript"],
  },
  // Icarus Verilog: main.v holds the top (a testbench); `vvp -n` ends the run at $stop too.
  verilog: {
    image: "verilog", file: "main.v",
    compile: { argv: ["iverilog", "-g2012", "-o", "main", "main.v"], output: "main", wallMs: 10_000, addressSpaceMb: 2048 },
    argv: ["vvp", "-n", "main"], oomMarkers: ["std::bad_alloc"],
    aliases: ["verilog", "v", "systemverilog", "sv", "iverilog"],
  },
  // A Yosys script in the same image (verifiers/verilog reads interfaces and checks equivalence with it).
  yosys: { image: "verilog", file: "main.ys", argv: ["yosys", "-q", "-s", "main.ys"], oomMarkers: ["std::bad_alloc"], aliases: ["yosys"] },
  // Go's `testing` tests (HumanEval-X, SandboxFusion's go_test): `go test -c` builds the test
  // binary from main_test.go; modules the image holds (testify) are found under GOPATH.
  go_test: {
    image: "go", file: "main_test.go",
    compile: {
      argv: ["go", "test", "-c", "-o", "main", "main_test.go"], output: "main", wallMs: 30_000, addressSpaceMb: 0,
      env: { GOCACHE: GO_CACHE, GOPATH: "/sandbox/run/.gopath:/usr/share/gocode", GO111MODULE: "off", CGO_ENABLED: "0" },
    },
    argv: ["./main", "-test.v", "-test.paniconexit0"],
    env: { GOMAXPROCS: "1" },
    addressSpaceMb: (mb) => mb + 768,
    oomMarkers: ["fatal error: out of memory", "runtime: out of memory", "cannot allocate memory"],
    aliases: ["go_test"], fence: "go",
  },
  // C#'s Debug.Assert tests (MultiPL-E's C#): compiled with DEBUG defined, as MultiPL-E's own
  // harness compiles them (eval_cs.py: `csc /d:DEBUG`; without it every Debug.Assert is compiled
  // out and a wrong solution passes), a failed assert written to stderr (MONO_TRACE_LISTENER);
  // mono still exits 0 after one, so the code verifier reads that line (verifiers/code).
  csharp_test: {
    image: "csharp", file: "main.cs",
    compile: { argv: ["mcs", "-d:DEBUG", "-optimize+", "-nowarn:0219,0168,0414", "-r:System.Numerics", "-out:main.exe", "main.cs"], output: "main.exe", wallMs: 20_000, addressSpaceMb: 0 },
    argv: ["mono", "main.exe"],
    env: { MONO_GC_PARAMS: "max-heap-size={heapMb}m", MONO_TRACE_LISTENER: "Console.Error" },
    addressSpaceMb: () => 0,
    oomMarkers: ["OutOfMemoryException", "Out of memory"],
    aliases: ["csharp_test"], fence: "csharp",
  },
  // Rust's #[test] functions (HumanEval-X's tests module): rustc --test builds the test harness.
  rust_test: {
    image: "rust", file: "main.rs",
    compile: { argv: ["rustc", "--edition", "2021", "--test", "-o", "main", "main.rs", ...RUST_CRATES], output: "main", wallMs: 30_000, addressSpaceMb: 0 },
    argv: ["./main", "--test-threads=1"], oomMarkers: ["memory allocation of"],
    aliases: ["rust_test"], fence: "rust",
  },
};

/**
 * The program's main class: the public class (Java requires the file to be named after it), else
 * the last class declared before `static void main`, else Main. Linear in the source.
 */
function javaMain(code: string): string {
  const src = code.slice(0, 1 << 20);
  const pub = /\bpublic\s+(?:final\s+|abstract\s+)?class\s+([A-Za-z_$][A-Za-z0-9_$]{0,200})/.exec(src);
  if (pub) return pub[1];
  const at = src.search(/\bstatic\s+void\s+main\b/);
  let last = "Main";
  for (const m of src.slice(0, at < 0 ? 0 : at).matchAll(/\bclass\s+([A-Za-z_$][A-Za-z0-9_$]{0,200})/g)) last = m[1];
  return last;
}

/** A small program for node: transpiles argv[1] to argv[2] with Debian's typescript, reports syntax errors. */
function tsTranspiler(): string {
  return [
    'const ts=require("typescript"),fs=require("fs");const [src,out]=process.argv.slice(1);',
    'const r=ts.transpileModule(fs.readFileSync(src,"utf8"),{fileName:src,reportDiagnostics:true,compilerOptions:{target:ts.ScriptTarget.ES2020,module:ts.ModuleKind.CommonJS}});',
    "const d=r.diagnostics||[];",
    'for(const x of d){const p=x.file&&x.start!==undefined?x.file.getLineAndCharacterOfPosition(x.start):null;',
    'process.stderr.write(src+(p?"("+(p.line+1)+","+(p.character+1)+")":"")+": error TS"+x.code+": "+ts.flattenDiagnosticMessageText(x.messageText,"\\n")+"\\n")}',
    "if(d.length)process.exit(1);fs.writeFileSync(out,r.outputText);",
  ].join("");
}

/** Every name (lower-cased) -> its language key. */
export const LANGUAGE_ALIASES: Record<string, string> = Object.fromEntries(
  Object.entries(LANGUAGES).flatMap(([key, spec]) => [key, ...spec.aliases].map((a) => [a.toLowerCase(), key])),
);

export function canonicalLanguage(lang: string): string | undefined {
  return LANGUAGE_ALIASES[lang.toLowerCase()];
}

/** The language a fenced block of `lang` counts as (python-sci's blocks are python's). */
export function fenceLanguage(lang: string): string {
  const c = canonicalLanguage(lang);
  return c ? LANGUAGES[c].fence ?? c : lang.toLowerCase();
}

/** SandboxFusion's name for each language (the first alias): what POST /run_code lists. */
export function languageNames(): string[] {
  return Object.values(LANGUAGES).map((s) => s.aliases[0]);
}

/** Whether a language compiles before it runs (one binary serves every test). */
export function isCompiled(lang: string): boolean {
  const c = canonicalLanguage(lang);
  return !!(c && LANGUAGES[c].compile);
}

/** The compile step's default wall limit, ms (0 for an interpreted language). */
export function compileMsOf(lang: string): number {
  const c = canonicalLanguage(lang);
  return (c && LANGUAGES[c].compile?.wallMs) || 0;
}

/** The image each of these languages needs; throws naming the known languages for an unknown one. */
export function imagesFor(langs: string[]): string[] {
  const out = new Set<string>();
  for (const l of langs) {
    if (l.toLowerCase() === "all") {
      for (const s of Object.values(LANGUAGES)) if (s.image) out.add(s.image);
      continue;
    }
    const c = canonicalLanguage(l);
    if (!c) throw new Error(`unknown language ${JSON.stringify(l)}; known: all, ${Object.keys(LANGUAGES).join(", ")}`);
    const image = LANGUAGES[c].image;
    if (image) out.add(image);
  }
  return [...out];
}

/** The images `assay sandbox build` makes with no --lang. */
export function defaultImages(): string[] {
  return [...new Set(Object.values(LANGUAGES).filter((s) => s.buildByDefault && s.image).map((s) => s.image!))];
}

/** Why a known language cannot run here: its image is not built, and the command that builds it. */
export function notBuiltReason(lang: string): string | undefined {
  const c = canonicalLanguage(lang);
  const image = c && LANGUAGES[c].image;
  if (!image) return undefined;
  return `${c} runs in the sandbox image "${image}", which is not built here; build it with \`npx assay sandbox build --lang ${c}\``;
}

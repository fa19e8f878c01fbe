/**
 * How each language is run inside a sandbox image: the file the program goes in, an optional
 * compile step, and the command. Backends share this table; the image names come from recipes.
 */
export interface LanguageSpec {
  /** Recipe (image) name under sandbox/images/. */
  image: string;
  /** Where the program's source is written, relative to the scratch directory. */
  file: string;
  compile?: { argv: string[]; output: string };
  argv: string[];
}

export const LANGUAGES: Record<string, LanguageSpec> = {
  python: { image: "python", file: "main.py", argv: ["python3", "main.py"] },
  cpp: {
    image: "cpp",
    file: "main.cpp",
    compile: { argv: ["g++", "-O2", "-std=gnu++17", "-pipe", "-o", "main", "main.cpp"], output: "main" },
    argv: ["./main"],
  },
  // Icarus Verilog: main.v holds the top (a testbench); `vvp -n` ends the run at $stop too.
  verilog: {
    image: "verilog",
    file: "main.v",
    compile: { argv: ["iverilog", "-g2012", "-o", "main", "main.v"], output: "main" },
    argv: ["vvp", "-n", "main"],
  },
  // A Yosys script in the same image (verifiers/verilog reads interfaces and checks equivalence with it).
  yosys: { image: "verilog", file: "main.ys", argv: ["yosys", "-q", "-s", "main.ys"] },
};

/** Names people use for the same language. */
export const LANGUAGE_ALIASES: Record<string, string> = {
  python: "python", python3: "python", py: "python",
  cpp: "cpp", "c++": "cpp", cxx: "cpp", cc: "cpp",
  verilog: "verilog", v: "verilog", systemverilog: "verilog", sv: "verilog", iverilog: "verilog", yosys: "yosys",
  javascript: "javascript", js: "javascript", nodejs: "javascript", node: "javascript",
};

export function canonicalLanguage(lang: string): string | undefined {
  return LANGUAGE_ALIASES[lang.toLowerCase()];
}

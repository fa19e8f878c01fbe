/**
 * The optional formal check (options.formal): Yosys's equivalence checker between the golden
 * module ("gold") and the candidate ("gate"), in one Yosys run in the sandbox (no simulation, so
 * the candidate has no testbench to read). Each design is elaborated, flattened and renamed on
 * its own (the two share module names), then:
 *
 *   equiv_make gold gate equiv; equiv_simple -seq 5; equiv_induct -seq 5; equiv_status -assert
 *
 * equiv_make pairs signals of the same name (ports, and registers whose names agree) with
 * $equiv cells; equiv_simple proves a cell from its input cone (over 5 time steps); equiv_induct
 * proves the remaining ones together by temporal induction. "proven" means every output (and
 * every matched register) is equal in every reachable state under the matching assumption, for
 * any inputs and with no reset assumed. "unproven" is not a counterexample: designs with
 * different state encodings (binary vs one-hot) or unmatched registers are often equivalent yet
 * unprovable this way. That is why the reward stays the simulation's and the verdict goes to
 * details only.
 */
import type { RunOutcome } from "../../sandbox/types.js";

export interface FormalVerdict {
  verdict: "proven" | "unproven" | "error";
  /** What Yosys said (the equiv_status summary or the first error). */
  note: string;
}

export function formalScript(top: string): string {
  const side = (file: string, name: string) => [
    `read_verilog -sv ${file}`,
    `hierarchy -check -top ${top}`,
    "proc",
    "flatten",
    "opt_clean",
    `rename ${top} ${name}`,
    `design -stash ${name}`,
  ];
  return [
    ...side("gold.v", "gold"),
    ...side("gate.v", "gate"),
    "design -copy-from gold -as gold gold",
    "design -copy-from gate -as gate gate",
    "equiv_make gold gate equiv",
    "hierarchy -top equiv",
    "equiv_simple -seq 5",
    "equiv_induct -seq 5",
    "equiv_status -assert",
    "",
  ].join("\n");
}

export function formalVerdict(o: RunOutcome): FormalVerdict {
  const text = `${o.stdout}\n${o.stderr}`;
  const line = (re: RegExp) => text.split("\n").find((l) => re.test(l))?.trim() ?? "";
  if (o.status === "finished" && o.exitCode === 0) return { verdict: "proven", note: "equiv_status -assert: every $equiv cell proven" };
  const unproven = line(/unproven \$equiv cells/i);
  if (o.status === "finished" && unproven) return { verdict: "unproven", note: unproven.slice(0, 300) };
  return { verdict: "error", note: (line(/ERROR/) || o.status).slice(0, 300) };
}

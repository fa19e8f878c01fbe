/**
 * CPU profiles of bench/sql.ts's verifier path, the server's and the SQLite processes' own:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/sql-prof --import tsx bench/sql-profile.ts --only warm
 *
 * The pool stops its processes with SIGKILL, which leaves no profile; here they are disconnected
 * instead (they exit on 'disconnect'), so each writes its .cpuprofile. Takes bench/sql.ts's flags.
 * On a loaded machine a profile's samples are wall time: a system call where the kernel switches
 * the process out (a pipe write waking the other side, getrusage, a /proc read) collects samples
 * for the time it was off the CPU; bench/sql.ts's CPU time per pair is the measure to trust.
 */
import { ChildProcess } from "node:child_process";

const kill = ChildProcess.prototype.kill;
ChildProcess.prototype.kill = function (this: ChildProcess, signal?: NodeJS.Signals | number) {
  if (this.connected) {
    this.disconnect();
    return true;
  }
  return kill.call(this, signal);
};
await import("./sql.js");

/**
 * The host's CPU pressure (Linux PSI, /proc/pressure/cpu): the share of recent time in which at
 * least one runnable task waited for a CPU. Admission reads it to refuse sandboxed work the
 * machine cannot keep up with (src/server/http.ts), rather than accept items that then wait.
 */
import { readFileSync } from "node:fs";

export interface CpuPressure {
  /** % of the last 10 s with some task waiting for a CPU. */
  some10: number;
  /** % of the last 60 s. */
  some60: number;
}

/** Parses /proc/pressure/cpu's `some` line; null when absent or unreadable (no PSI: no check). */
export function parseCpuPressure(text: string): CpuPressure | null {
  const m = /^some avg10=([\d.]+) avg60=([\d.]+)/m.exec(text);
  return m ? { some10: Number(m[1]), some60: Number(m[2]) } : null;
}

export function cpuPressure(path = "/proc/pressure/cpu"): CpuPressure | null {
  try {
    return parseCpuPressure(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/**
 * Seconds to wait before sending work again while pressure is past `maxPct`: the stall of the
 * last 10 s (avg10 % of 10 s), the time the CPUs' own backlog took to clear lately, at least 1.
 */
export function pressureRetryS(p: CpuPressure): number {
  return Math.max(1, Math.ceil(p.some10 / 10));
}

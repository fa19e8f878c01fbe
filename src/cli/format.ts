/** How the command line writes durations: the progress bars' ETA, in-process and with --server. */

/**
 * A duration as `42s`, `3m05s` or `2h07m`: rounded to whole seconds first, so 239.6 s is
 * `4m00s`, never `3m60s` (cli-progress's own formatter rounds the seconds to fives after taking
 * the minutes, and prints 239 s as `03m60s`). Not a finite number (cli-progress's "NULL", "INF"): `-`.
 */
export function formatSeconds(seconds: number | string): string {
  if (typeof seconds !== "number" || !Number.isFinite(seconds)) return "-";
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

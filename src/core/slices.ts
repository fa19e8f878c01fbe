/**
 * Long synchronous work cut into slices: `pause()` returns at once while the slice lasts, and
 * lets the event loop run (one macrotask turn) once it has run `ms`. For work on the event loop
 * whose size a caller decides (a megabyte of completion, an import of thousands of rubrics), so
 * that /healthz and every other request wait at most one slice.
 */
export function slices(ms: number): { pause(): Promise<void> | undefined } {
  let t0 = performance.now();
  return {
    pause() {
      if (performance.now() - t0 <= ms) return undefined;
      return new Promise<void>((resolve) =>
        setImmediate(() => {
          t0 = performance.now();
          resolve();
        }),
      );
    },
  };
}

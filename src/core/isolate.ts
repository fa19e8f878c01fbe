/**
 * Safe reads and disposal of an isolated-vm isolate, for every place that holds one (the custom
 * verifier's runner, the js sandbox). Typed structurally so importing this loads no native code.
 */

/**
 * Disposes the isolate unless it is gone already. isolated-vm's isolate thread can drop an
 * isolate on its own (its heap limit), so `isDisposed` read false can be stale by the time
 * `dispose()` runs, which then throws "Isolate is already disposed". Every dispose goes through
 * here: from a timer or a promise callback that throw would be an uncaught exception in the server.
 */
export function disposeOf(isolate: { readonly isDisposed: boolean; dispose(): void }): void {
  if (isolate.isDisposed) return;
  try {
    isolate.dispose();
  } catch {
    // gone between the check and the call: what was asked for
  }
}

/** The isolate's CPU time in ns, or undefined once it is disposed (for the same race as disposeOf). */
export function cpuTimeOf(isolate: { readonly isDisposed: boolean; readonly cpuTime: bigint }): bigint | undefined {
  if (isolate.isDisposed) return undefined;
  try {
    return isolate.cpuTime;
  } catch {
    return undefined;
  }
}

/**
 * Chooses a sandbox backend from configuration. Backends live beside this file.
 * (Backends are being added; until then no backend answers and code verifiers report an error.)
 */
import type { Sandbox } from "./types.js";

export interface SandboxChoice {
  sandbox: Sandbox | null;
  /** Why this backend (or why none): logged at start-up. */
  note: string;
}

export async function selectSandbox(mode: string): Promise<SandboxChoice> {
  return { sandbox: null, note: `no sandbox backend is built in yet (ASSAY_SANDBOX=${mode})` };
}

import type { Sandbox } from "../types.js";
export async function openBwrap(): Promise<{ sandbox: Sandbox | null; note: string }> {
  return { sandbox: null, note: "bwrap: not built yet" };
}

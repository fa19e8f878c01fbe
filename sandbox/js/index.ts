import type { Sandbox } from "../types.js";
export async function openJs(): Promise<{ sandbox: Sandbox | null; note: string }> {
  return { sandbox: null, note: "js: not built yet" };
}

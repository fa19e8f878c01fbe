/**
 * Finds verifiers: every folder under verifiers/ with an index module whose default export is a
 * Verifier or an array of them. Adding a verifier is adding a folder; nothing else changes.
 */
import { readdirSync, existsSync } from "node:fs";
import { join, extname } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Verifier } from "./types.js";
import { Registry } from "./registry.js";

/** src/core -> ../../verifiers, and dist/src/core -> ../../verifiers (i.e. dist/verifiers). */
export const VERIFIERS_DIR = fileURLToPath(new URL("../../verifiers/", import.meta.url));
/** Running from TypeScript sources (tsx) or compiled JavaScript. */
const EXT = extname(fileURLToPath(import.meta.url)) === ".ts" ? ".ts" : ".js";

export async function discoverVerifiers(dir = VERIFIERS_DIR): Promise<Verifier[]> {
  const found: Verifier[] = [];
  for (const name of readdirSync(dir, { withFileTypes: true })) {
    if (!name.isDirectory()) continue;
    const index = join(dir, name.name, `index${EXT}`);
    if (!existsSync(index)) continue;
    const mod = await import(pathToFileURL(index).href);
    const exported = mod.default;
    const list: unknown[] = Array.isArray(exported) ? exported : [exported];
    for (const v of list) {
      if (!v || typeof (v as Verifier).verify !== "function" || typeof (v as Verifier).name !== "string") {
        throw new Error(`${index}: default export must be a Verifier or Verifier[]`);
      }
      found.push(v as Verifier);
    }
  }
  return found;
}

/** A registry holding every verifier under verifiers/, or only those named in `only`. */
export async function defaultRegistry(only?: string[]): Promise<Registry> {
  const registry = new Registry();
  for (const v of await discoverVerifiers()) {
    if (!only || only.includes(v.name)) registry.register(v);
  }
  return registry;
}

/**
 * custom: answers `custom:<name>[@<version>]` (a namespace verifier): user-written verifiers
 * uploaded with POST /verifiers/custom, run in isolated-vm (runner.ts). A verifier that throws,
 * times out, runs out of memory or returns something that is not a reward gives error/null with
 * the reason: the fault is the verifier author's, not the policy's.
 */
import { createHash } from "node:crypto";
import { Type } from "@sinclair/typebox";
import { InvalidItemError, MachineryError } from "../../src/core/types.js";
import { defineVerifier } from "../../src/core/verifier.js";
import { storedName } from "../../src/core/stored-name.js";
import { NotFound } from "../../src/store/index.js";
import { CustomRunnerProcess } from "./process.js";
import type { Config } from "../../src/core/config.js";

let runner: CustomRunnerProcess | undefined;
/**
 * Compiled bodies by store and name@version: a version never changes, so only the latest number
 * is looked up per item. Each carries a hash of the body, which names its isolates, so two stores
 * (two runtimes in one process) never share one.
 */
const compiledByStore = new WeakMap<object, Map<string, { body: string; hash: string }>>();
const COMPILED_MAX = 1024;

function makeRunner(c: Config["custom"]): CustomRunnerProcess {
  return new CustomRunnerProcess({ memoryMb: c.memoryMb, timeoutMs: c.timeoutMs, isolates: c.isolates, perVersion: c.perVersion });
}

export const custom = defineVerifier({
  name: "custom",
  namespace: true,
  description: "A user-written verifier (POST /verifiers/custom), called as custom:<name> or custom:<name>@<version>; runs in an isolated V8 sandbox.",
  reference: Type.Unknown({ description: "passed to score() as is" }),
  options: Type.Object({}, { additionalProperties: true, description: "passed to score() as is" }),
  async init({ services }) {
    runner ??= makeRunner(services.config.custom);
  },
  async close() {
    await runner?.close();
    runner = undefined;
  },
  async verify(item, ctx) {
    const { name, version } = storedName(item.verifier);
    let doc: { version: number; compiled: string; hash: string };
    try {
      const store = (await ctx.services.store()).customVerifiers;
      const latest = await store.latest(name); // also: a deleted verifier is gone, pinned versions too
      const v = version ?? latest;
      const key = `${name}@${v}`;
      let cache = compiledByStore.get(store);
      if (!cache) compiledByStore.set(store, (cache = new Map()));
      let hit = cache.get(key);
      if (hit === undefined) {
        const body = (await store.get(name, v)).compiled;
        hit = { body, hash: createHash("sha256").update(body).digest("hex").slice(0, 16) };
        if (cache.size >= COMPILED_MAX) cache.delete(cache.keys().next().value!);
        cache.set(key, hit);
      }
      doc = { version: v, compiled: hit.body, hash: hit.hash };
    } catch (err) {
      if (err instanceof NotFound) throw new InvalidItemError(`${err.message}; GET /verifiers/custom lists them`, "verifier");
      throw new MachineryError(`custom verifier store: ${(err as Error).message}`);
    }
    runner ??= makeRunner(ctx.services.config.custom); // closed by another runtime in this process
    const input = { prompt: item.prompt ?? null, response: item.response, reference: item.reference ?? null, options: item.options };
    const key = `${name}@${doc.version}:${doc.hash}`;
    // Loading a cold verifier is warm-up, not the item's work: its clock is stopped meanwhile.
    const warming = runner.warm(key, doc.compiled);
    await (ctx.unclocked ? ctx.unclocked(warming) : warming);
    // The wait for one of the version's isolates is its place in a queue, not its work (a batch
    // of 64 slow items waits behind the others): the clock stops, as for a sandbox slot. Its own
    // call is bounded by ASSAY_CUSTOM_TIMEOUT_MS (CPU) and its wall safety net.
    const scoring = runner.score(key, doc.compiled, input);
    const r = await (ctx.unclocked ? ctx.unclocked(scoring) : scoring);
    const at = { verifier: name, version: doc.version };
    if (!r.ok) return { reward: null, reason: `custom verifier ${name} version ${doc.version}: ${r.message}`, details: at };
    return { reward: r.reward, reason: r.reason || `custom verifier ${name} version ${doc.version}`, details: { ...r.details, custom: at } };
  },
});

export default [custom];

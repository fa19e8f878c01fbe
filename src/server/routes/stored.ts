/**
 * /presets and /verifiers/custom: named, versioned reward presets and user-written verifiers.
 * Thin over the store; shapes from openapi.yaml. Knows no verifier: items reach them as
 * `preset:<name>` / `custom:<name>` through the registry's namespace verifiers.
 */
import { Router, type Request } from "express";
import type { Wire } from "../../core/types.js";
import { check } from "../../core/contract.js";
import { fieldOf } from "../../core/schema.js";
import { HttpError } from "../errors.js";
import type { RouteDeps } from "../http.js";
import { NotFound, Invalid, compileCustom, type VersionedStore, type Store } from "../../store/index.js";

function nameOf(req: Request): string {
  const name = String(req.params.name);
  if (check("StoredName", name)) throw new HttpError(400, `name ${JSON.stringify(name.slice(0, 200))} must be lower-case letters, digits, _ . - (up to 128, starting with a letter or digit)`, "name");
  return name;
}

function versionOf(req: Request): number {
  const raw = String(req.params.version);
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) throw new HttpError(400, `version ${JSON.stringify(raw.slice(0, 50))} must be an integer >= 1`, "version");
  return Number(raw);
}

async function mapped<T>(fn: () => Promise<T>, list: string): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof NotFound) throw new HttpError(404, `${err.message}; GET ${list} lists them`);
    if (err instanceof Invalid) throw new HttpError(400, `request ${err.message}`, fieldOf(err.message));
    throw err;
  }
}

/** GET list, GET one, versions, one version, DELETE: the same for both kinds. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function readRoutes(r: Router, base: string, listKey: string, store: () => Promise<VersionedStore<any>>): void {
  r.get(base, async (_req, res) => {
    const s = await store();
    res.json({ [listKey]: await s.list() });
  });
  r.get(`${base}/:name`, async (req, res) => {
    const name = nameOf(req);
    const s = await store();
    res.json(await mapped(() => s.get(name), base));
  });
  r.delete(`${base}/:name`, async (req, res) => {
    const name = nameOf(req);
    const s = await store();
    await mapped(() => s.delete(name), base);
    res.status(204).end();
  });
  r.get(`${base}/:name/versions`, async (req, res) => {
    const name = nameOf(req);
    const s = await store();
    res.json({ versions: await mapped(() => s.versions(name), base) });
  });
  r.get(`${base}/:name/versions/:version`, async (req, res) => {
    const name = nameOf(req);
    const v = versionOf(req);
    const s = await store();
    res.json(await mapped(() => s.get(name, v), base));
  });
}

export function storedRoutes({ runtime, body }: RouteDeps): Router {
  const r = Router();
  const store = (): Promise<Store> => runtime.services.store();

  r.post("/presets", body("PresetInput"), async (req, res) => {
    const { name, ...content } = req.body as Wire["PresetInput"];
    // checked by the verifier that scores presets, so a typo is a 400 now, not a run of invalid items
    const problem = runtime.registry.storedProblem("preset", name, content);
    if (problem) throw new HttpError(400, `request ${problem.message}`, problem.field);
    const s = (await store()).presets;
    const { doc, created } = await mapped(() => s.save(name, content), "/presets");
    res.status(created ? 201 : 200).json(doc);
  });
  readRoutes(r, "/presets", "presets", async () => (await store()).presets);

  r.post("/verifiers/custom", body("CustomVerifierInput"), async (req, res) => {
    const { name, ...input } = req.body as Wire["CustomVerifierInput"];
    const max = runtime.config.custom.maxSourceBytes;
    if (Buffer.byteLength(input.source) > max) throw new HttpError(413, `source is ${Buffer.byteLength(input.source)} bytes, over ASSAY_CUSTOM_MAX_SOURCE (${max})`, "source");
    let content;
    try {
      content = await compileCustom(input, { timeoutMs: runtime.config.custom.compileMs });
    } catch (err) {
      if (err instanceof Invalid) throw new HttpError(400, `request ${err.message}`, "source");
      throw err;
    }
    const s = (await store()).customVerifiers;
    const { doc, created } = await mapped(() => s.save(name, content), "/verifiers/custom");
    res.status(created ? 201 : 200).json(doc);
  });
  readRoutes(r, "/verifiers/custom", "verifiers", async () => (await store()).customVerifiers);

  return r;
}

/**
 * /rubrics: create, read, version, delete, import and export rubrics. Thin over the store; the
 * request shapes come from openapi.yaml. Knows no verifier.
 */
import { Router, type Request } from "express";
import { randomUUID } from "node:crypto";
import type { Wire } from "../../core/types.js";
import { check } from "../../core/contract.js";
import { fieldOf } from "../../core/schema.js";
import { HttpError } from "../errors.js";
import type { RouteDeps } from "../http.js";
import { RubricConflict, RubricExists, RubricInvalid, RubricNotFound, type RubricContent, type RubricExport, type SavePrecondition } from "../../store/index.js";

function idOf(req: Request): string {
  const id = String(req.params.id);
  if (check("RubricId", id)) throw new HttpError(400, `rubric id ${JSON.stringify(id.slice(0, 200))} must be letters, digits, _ . - (up to 128, starting with a letter or digit)`, "id");
  return id;
}

/** Store errors as HTTP errors; anything else is rethrown (a 500). */
async function mapped<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof RubricNotFound) throw new HttpError(404, `${err.message}; GET /rubrics lists them`);
    if (err instanceof RubricExists) throw new HttpError(409, err.message, "id");
    if (err instanceof RubricInvalid) throw new HttpError(400, `request ${err.message}`, fieldOf(err.message));
    if (err instanceof RubricConflict) throw new HttpError(412, err.message, undefined, err.current === null ? {} : { ETag: etagOf(err.current) });
    throw err;
  }
}

/** A rubric's entity tag is its version number: what a later PUT's If-Match names. */
const etagOf = (version: number) => `"${version}"`;

/**
 * If-Match (RFC 9110 13.1.1) as the versions a save may start from: `*`, or a list of entity
 * tags, each `"N"` (weak `W/"N"` compares the same: a version is its content). A tag that is no
 * version can match none. Undefined without the header.
 */
function ifMatchOf(req: Request): SavePrecondition | undefined {
  const h = req.get("If-Match");
  if (h === undefined) return undefined;
  if (h.trim() === "*") return "exists";
  const versions: number[] = [];
  for (const tag of h.slice(0, 1024).split(",")) {
    const m = /^\s*(?:W\/)?"(\d{1,9})"\s*$/.exec(tag);
    if (m) versions.push(Number(m[1]));
  }
  return versions;
}

function contentOfBody(body: Wire["RubricInput"]): RubricContent {
  return { title: body.title, ...(body.description !== undefined ? { description: body.description } : {}), criteria: body.criteria };
}

export function rubricRoutes({ runtime, body }: RouteDeps): Router {
  const r = Router();
  const rubrics = async () => (await runtime.services.store()).rubrics;

  r.get("/rubrics", async (_req, res) => {
    const store = await rubrics();
    res.json({ rubrics: await mapped(() => store.list()) });
  });

  r.post("/rubrics", body("RubricInput"), async (req, res) => {
    const input = req.body as Wire["RubricInput"];
    const store = await rubrics();
    res.status(201).json(await mapped(() => store.create(input.id ?? randomUUID(), contentOfBody(input))));
  });

  r.post("/rubrics/import", body("RubricExport"), async (req, res) => {
    const store = await rubrics();
    res.json({ imported: await mapped(() => store.import(req.body as RubricExport)) });
  });

  r.get("/rubrics/:id", async (req, res) => {
    const id = idOf(req);
    const store = await rubrics();
    const rubric = await mapped(() => store.get(id));
    res.set("ETag", etagOf(rubric.version)).json(rubric);
  });

  r.put("/rubrics/:id", body("RubricInput"), async (req, res) => {
    const id = idOf(req);
    const input = req.body as Wire["RubricInput"];
    if (input.id !== undefined && input.id !== id) {
      throw new HttpError(400, `request body's id ${JSON.stringify(input.id)} differs from the path's ${JSON.stringify(id)}; drop it or make them agree`, "id");
    }
    const onlyIf = ifMatchOf(req);
    const store = await rubrics();
    const { rubric, created } = await mapped(() => store.save(id, contentOfBody(input), undefined, onlyIf));
    res.status(created ? 201 : 200).set("ETag", etagOf(rubric.version)).json(rubric);
  });

  r.delete("/rubrics/:id", async (req, res) => {
    const id = idOf(req);
    const store = await rubrics();
    await mapped(() => store.delete(id));
    res.status(204).end();
  });

  r.get("/rubrics/:id/versions", async (req, res) => {
    const id = idOf(req);
    const store = await rubrics();
    res.json({ versions: await mapped(() => store.versions(id)) });
  });

  r.get("/rubrics/:id/versions/:version", async (req, res) => {
    const id = idOf(req);
    const v = Number(req.params.version);
    if (!/^\d{1,9}$/.test(String(req.params.version)) || v < 1) {
      throw new HttpError(400, `version ${JSON.stringify(String(req.params.version).slice(0, 50))} must be an integer >= 1`, "version");
    }
    const store = await rubrics();
    res.json(await mapped(() => store.get(id, v)));
  });

  r.get("/rubrics/:id/export", async (req, res) => {
    const id = idOf(req);
    const store = await rubrics();
    res.json(await mapped(() => store.export([id])));
  });

  return r;
}

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
import { RubricExists, RubricInvalid, RubricNotFound, type RubricContent, type RubricExport } from "../../store/index.js";

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
    throw err;
  }
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
    res.json(await mapped(() => store.get(id)));
  });

  r.put("/rubrics/:id", body("RubricInput"), async (req, res) => {
    const id = idOf(req);
    const input = req.body as Wire["RubricInput"];
    if (input.id !== undefined && input.id !== id) {
      throw new HttpError(400, `request body's id ${JSON.stringify(input.id)} differs from the path's ${JSON.stringify(id)}; drop it or make them agree`, "id");
    }
    const store = await rubrics();
    const { rubric, created } = await mapped(() => store.save(id, contentOfBody(input)));
    res.status(created ? 201 : 200).json(rubric);
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

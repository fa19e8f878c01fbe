/** One Ajv configuration for every schema in Assay (draft 2020-12, as OpenAPI 3.1 uses). */
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ErrorObject } from "ajv";

// Both packages are CommonJS with a default export; under NodeNext the default sits on .default.
const Ajv2020 = (Ajv2020Module as any).default ?? Ajv2020Module;
const addFormats = (addFormatsModule as any).default ?? addFormatsModule;

export function newAjv() {
  const ajv = new Ajv2020({ allErrors: false, strict: false, useDefaults: false, coerceTypes: false });
  addFormats(ajv);
  return ajv as import("ajv").default;
}

/** Turns Ajv errors into one line that names the field: "at /items/3/response: must be string". */
export function describeErrors(errors: ErrorObject[] | null | undefined, root = ""): string {
  if (!errors?.length) return "is invalid";
  const e = errors[0];
  let where = (root ? root : "") + (e.instancePath || "");
  let msg = e.message ?? "is invalid";
  if (e.keyword === "required") {
    where += `/${(e.params as any).missingProperty}`;
    msg = "is required";
  }
  else if (e.keyword === "additionalProperties") msg = `has unknown field ${JSON.stringify((e.params as any).additionalProperty)}`;
  else if (e.keyword === "enum") msg = `must be one of ${JSON.stringify((e.params as any).allowedValues)}`;
  return where ? `at ${where}: ${msg}` : msg;
}

/** The field a one-line reason blames ("at /items/3/response: ..." -> "items.3.response"). */
export function fieldOf(reason: string): string | undefined {
  const m = /^(?:\w+ )?at (\S+):/.exec(reason);
  return m ? m[1].replace(/^\//, "").replaceAll("/", ".") || undefined : undefined;
}

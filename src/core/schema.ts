/** One Ajv configuration for every schema in Assay (draft 2020-12, as OpenAPI 3.1 uses). */
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import type { ErrorObject } from "ajv";

// Both packages are CommonJS with a default export; under NodeNext the default sits on .default.
const Ajv2020 = (Ajv2020Module as any).default ?? Ajv2020Module;
const addFormats = (addFormatsModule as any).default ?? addFormatsModule;

/** A JSON Schema (draft 2020-12) object. */
export type JSONSchema = Record<string, unknown>;

/**
 * `useDefaults`: validation fills each missing property that declares a `default`.
 * `regExp`: the engine for `pattern` keywords (e.g. RE2 where patterns meet untrusted text).
 */
export function newAjv(o: { useDefaults?: boolean; regExp?: import("ajv").CodeOptions["regExp"] } = {}) {
  const ajv = new Ajv2020({
    // strictNumbers: `type: number` refuses Infinity and NaN (JSON.parse reads 1e400 as Infinity;
    // strict: false alone let it through to a verifier, and an id of 1e400 came back null)
    allErrors: false, strict: false, strictNumbers: true, useDefaults: o.useDefaults ?? false, coerceTypes: false,
    ...(o.regExp ? { code: { regExp: o.regExp } } : {}),
  });
  addFormats(ajv);
  return ajv as import("ajv").default;
}

/**
 * A declaration as clients should read it: plain JSON (TypeBox's symbol keys dropped), and a
 * property that has a default is not listed as required (the registry fills it in).
 */
export function publicSchema(schema: unknown): JSONSchema {
  return JSON.parse(JSON.stringify(schema), (_key, value) => {
    if (value && typeof value === "object" && !Array.isArray(value) && Array.isArray(value.required) && value.properties) {
      const required = (value.required as string[]).filter((k) => value.properties[k]?.default === undefined);
      const { required: _drop, ...rest } = value;
      return required.length ? { ...rest, required } : rest;
    }
    return value;
  });
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
  else if (e.keyword === "additionalProperties") msg = `has unknown field ${JSON.stringify((e.params as any).additionalProperty)}; remove it or fix its spelling (the schemas are in GET /openapi.yaml)`;
  else if (e.keyword === "enum") msg = `must be one of ${JSON.stringify((e.params as any).allowedValues)}`;
  return where ? `at ${where}: ${msg}` : msg;
}

/** The field a one-line reason blames ("at /items/3/response: ..." -> "items.3.response"). */
export function fieldOf(reason: string): string | undefined {
  // An unknown field is blamed on itself: "at /items/0: has unknown field \"x\"" -> "items.0.x".
  const unknown = /^(?:\w+ )?(?:at (\S+): )?has unknown field ("(?:[^"\\]|\\.)*")/.exec(reason);
  if (unknown) {
    const at = (unknown[1] ?? "").replace(/^\//, "").replaceAll("/", ".");
    const name = JSON.parse(unknown[2]!) as string;
    return at ? `${at}.${name}` : name;
  }
  const m = /^(?:\w+ )?at (\S+):/.exec(reason);
  return m ? m[1].replace(/^\//, "").replaceAll("/", ".") || undefined : undefined;
}

/**
 * The json verifier's validation thread: validates an answer against a schema that may recurse
 * (see validate-pool.ts). Ajv's generated code cannot be interrupted, so a validation that runs
 * too long is ended by terminating this thread. Compiled validators are cached by the schema's
 * JSON text, as in the main thread.
 */
import { parentPort } from "node:worker_threads";
import type { ValidateFunction } from "ajv";
import { describeErrors } from "../../src/core/schema.js";
import { newJsonAjv } from "./ajv.js";

/** To the thread: validate `value` against the schema whose JSON text is `schema`. */
export interface ValidateJob {
  id: number;
  schema: string;
  value: unknown;
}

/**
 * From the thread: `ready` once loaded; `compiled` when a job's schema had to be compiled first
 * (its budget starts again from there); the verdict (`reason` when invalid); or `error` when
 * validation threw (the schema's fault: a `$ref` cycle that never consumes the answer).
 */
export type FromValidator =
  | { ready: true }
  | { id: number; compiled: true }
  | { id: number; valid: boolean; reason?: string }
  | { id: number; error: string };

const VALIDATORS_MAX = 256;
const ajv = newJsonAjv();
const validators = new Map<string, ValidateFunction>();

function validatorFor(id: number, text: string): ValidateFunction {
  let v = validators.get(text);
  if (v) return v;
  v = ajv.compile(JSON.parse(text) as object);
  if (validators.size >= VALIDATORS_MAX) validators.delete(validators.keys().next().value!);
  validators.set(text, v);
  parentPort!.postMessage({ id, compiled: true } satisfies FromValidator);
  return v;
}

parentPort!.on("message", (job: ValidateJob) => {
  let msg: FromValidator;
  try {
    const v = validatorFor(job.id, job.schema);
    const valid = v(job.value) as boolean;
    msg = valid ? { id: job.id, valid } : { id: job.id, valid, reason: describeErrors(v.errors) };
  } catch (e) {
    msg = { id: job.id, error: String((e as Error)?.message ?? e).slice(0, 200) };
  }
  parentPort!.postMessage(msg);
});
parentPort!.postMessage({ ready: true } satisfies FromValidator);

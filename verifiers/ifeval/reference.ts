/**
 * The item's `reference`, in any of the shapes public instruction-following data comes in,
 * turned into one list of checks. Malformed data throws InvalidItemError (status "invalid").
 *
 * - IFEval (google-research instruction_following_eval/data/input_data.jsonl, HF google/IFEval):
 *   `{instruction_id_list: string[], kwargs: object[]}`; HF rows fill absent kwargs with null.
 *   The whole row (`key`, `prompt` too) is accepted as is.
 * - open-instruct IFEvalVerifier (IF_multi_constraints / IFEvalG data): `{instruction_id: [...], kwargs: [...]}`,
 *   or a one-element list of it; as a string, open-instruct stores `str([{...}])`, a Python literal
 *   (single quotes, None), which is parsed by pyliteral.ts (never evaluated).
 * - Tulu 3 RLVR-IFeval (open-instruct IFEvalVerifierOld): `{"func_name": "...", ...kwargs}`.
 * Each may also arrive as a JSON string of the same, or as a Python literal string.
 */
import { InvalidItemError } from "../../src/core/types.js";
import { buildInstruction, type Check, type Kwargs } from "./instructions.js";
import { IFEVALG_ALIASES, IFEVALG_INSTRUCTIONS } from "./ifevalg.js";
import { buildFunction, type SimpleCheck } from "./open_instruct.js";
import { parsePyLiteral, PyLiteralError } from "./pyliteral.js";

export const MAX_INSTRUCTIONS = 64;

/**
 * "ifeval": IFEval's `instruction_id_list` rows, scored as evaluation_lib does; "ifevalg":
 * open-instruct's IFEvalVerifier rows (`instruction_id`), whose answer is cleaned as open-instruct
 * cleans it and which score 0 when it is empty; "open-instruct": RLVR-IFeval's `func_name` rows.
 */
export type Parsed =
  | { format: "ifeval" | "ifevalg"; items: { id: string; kwargs: Kwargs; check: Check }[] }
  | { format: "open-instruct"; items: { id: string; kwargs: Kwargs; check: SimpleCheck }[] };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** HF datasets fill absent keys with null; IFEval's own loaders and open-instruct drop them. */
function dropNulls(kw: unknown, where: string): Kwargs {
  if (kw === null || kw === undefined) return {};
  if (!isObject(kw)) throw new InvalidItemError(`${where} must be an object (or null)`);
  const out: Kwargs = {};
  for (const [k, v] of Object.entries(kw)) if (v !== null && v !== undefined) out[k] = v;
  return out;
}

export function parseReference(reference: unknown, prompt?: string): Parsed {
  let ref = reference;
  if (typeof ref === "string") ref = jsonOrPython(ref, "reference");
  if (Array.isArray(ref) && ref.length === 1) ref = typeof ref[0] === "string" ? jsonOrPython(ref[0], "reference[0]") : ref[0];
  if (!isObject(ref)) throw new InvalidItemError("reference must be an object: {instruction_id_list, kwargs} or {func_name, ...}");

  if (typeof ref.func_name === "string") {
    const { func_name, ...rest } = ref;
    const kwargs = dropNulls(rest, "reference");
    return { format: "open-instruct", items: [{ id: func_name, kwargs, check: buildFunction(func_name, kwargs) }] };
  }

  const format = ref.instruction_id_list === undefined && ref.instruction_id !== undefined ? "ifevalg" : "ifeval";
  const ids = ref.instruction_id_list ?? ref.instruction_id;
  if (!Array.isArray(ids) || ids.length === 0 || !ids.every((s) => typeof s === "string")) {
    throw new InvalidItemError("reference.instruction_id_list must be a non-empty list of instruction ids (or give func_name)");
  }
  if (ids.length > MAX_INSTRUCTIONS) throw new InvalidItemError(`reference has ${ids.length} instructions; at most ${MAX_INSTRUCTIONS}`);
  const kwargsList = ref.kwargs ?? ids.map(() => ({}));
  if (!Array.isArray(kwargsList) || kwargsList.length !== ids.length) {
    throw new InvalidItemError(`reference.kwargs must be a list with one entry per instruction (${ids.length})`);
  }
  const rowPrompt = typeof ref.prompt === "string" ? ref.prompt : undefined;
  const items = ids.map((id: string, i: number) => {
    const kwargs = dropNulls(kwargsList[i], `reference.kwargs[${i}]`);
    return { id, kwargs, check: buildInstruction(id, kwargs, prompt ?? rowPrompt, IFEVALG_INSTRUCTIONS, IFEVALG_ALIASES) };
  });
  return { format, items };
}

/** A string reference: JSON, else a Python literal (open-instruct's `str([...])`, read without eval). */
function jsonOrPython(s: string, where: string): unknown {
  try {
    return JSON.parse(s);
  } catch (jsonError) {
    try {
      return parsePyLiteral(s);
    } catch (e) {
      if (!(e instanceof PyLiteralError)) throw e;
      throw new InvalidItemError(
        `${where} is a string but neither JSON (${(jsonError as Error).message}) nor a Python literal (${e.message}); give IFEval's {instruction_id_list, kwargs}, open-instruct's [{instruction_id, kwargs}] or RLVR-IFeval's {func_name, ...}`,
      );
    }
  }
}

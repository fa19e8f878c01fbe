/**
 * Try any verifier: its reference and options as a form generated from the JSON schemas that
 * GET /verifiers publishes (a JSON textarea where a shape is too complex for a form), scored
 * through POST /reward/batch, with the result's details.
 */
import { Reward } from "./Reward";
import { useMemo, useState } from "react";
import { errorsOf, scoreBatch, type FieldErrors, type JsonSchema, type RewardResult, type VerifierInfo } from "./api";
import { FieldError } from "./FieldError";

type Widget =
  | { kind: "boolean" }
  | { kind: "number"; integer: boolean }
  | { kind: "enum"; values: unknown[] }
  | { kind: "string" }
  | { kind: "json" };

const types = (s: JsonSchema): string[] => (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []);

export function widgetOf(s: JsonSchema): Widget {
  if (Array.isArray(s.enum)) return { kind: "enum", values: s.enum };
  const alts = s.anyOf ?? s.oneOf;
  if (alts && alts.length > 0 && alts.every((a) => "const" in a)) return { kind: "enum", values: alts.map((a) => a.const) };
  const t = types(s);
  if (t.length === 1) {
    if (t[0] === "boolean") return { kind: "boolean" };
    if (t[0] === "integer" || t[0] === "number") return { kind: "number", integer: t[0] === "integer" };
    if (t[0] === "string") return { kind: "string" };
  }
  return { kind: "json" };
}

/** Whether a reference schema takes a plain string (then the form offers a text box). */
function acceptsString(s: JsonSchema): boolean {
  if (types(s).includes("string")) return true;
  return (s.anyOf ?? s.oneOf ?? []).some((a) => types(a).includes("string") && !("const" in a));
}

/** The options form can show every property as a widget (else: the whole object as JSON). */
function formable(s: JsonSchema): boolean {
  return types(s).includes("object") && !!s.properties && !s.patternProperties;
}

const initial = (props: Record<string, JsonSchema>) =>
  Object.fromEntries(
    Object.entries(props).map(([k, s]) => {
      const w = widgetOf(s);
      if (w.kind === "boolean") return [k, s.default === true];
      if (s.default === undefined) return [k, ""];
      return [k, w.kind === "json" ? JSON.stringify(s.default) : w.kind === "enum" ? JSON.stringify(s.default) : String(s.default)];
    }),
  ) as Record<string, string | boolean>;

export function Playground({ verifiers }: { verifiers: VerifierInfo[] }) {
  const [name, setName] = useState(verifiers.find((v) => v.name === "math")?.name ?? verifiers[0]?.name ?? "");
  const v = verifiers.find((x) => x.name === name);
  return (
    <section className="panel playground" aria-labelledby="pg-h">
      <h2 id="pg-h">Verifier playground</h2>
      <div className="field">
        <label htmlFor="pg-verifier">Verifier</label>
        <select id="pg-verifier" value={name} onChange={(e) => setName(e.target.value)}>
          {verifiers.map((x) => <option key={x.name} value={x.name}>{x.name}</option>)}
        </select>
        {v && <p className="muted">{v.description}</p>}
      </div>
      {v && <VerifierForm key={v.name} v={v} />}
    </section>
  );
}

function VerifierForm({ v }: { v: VerifierInfo }) {
  const props = useMemo(() => (formable(v.options_schema) ? v.options_schema.properties! : {}), [v]);
  const [prompt, setPrompt] = useState("");
  const [response, setResponse] = useState("");
  const stringRef = acceptsString(v.reference_schema);
  const [refAsJson, setRefAsJson] = useState(!stringRef);
  const [reference, setReference] = useState("");
  const [values, setValues] = useState(() => initial(props));
  const [optionsJson, setOptionsJson] = useState("{}");
  const [optionsAsJson, setOptionsAsJson] = useState(!formable(v.options_schema));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [result, setResult] = useState<RewardResult | null>(null);
  const [busy, setBusy] = useState(false);

  function build(): { reference: unknown; options: Record<string, unknown> } | FieldErrors {
    const bad: FieldErrors = {};
    let ref: unknown = reference;
    // An empty JSON box sends no reference (verifiers such as format take none).
    if (refAsJson && reference.trim() === "") ref = undefined;
    else if (refAsJson) {
      try {
        ref = JSON.parse(reference);
      } catch (err) {
        bad.reference = `not JSON: ${(err as Error).message}`;
      }
    }
    let options: Record<string, unknown> = {};
    if (optionsAsJson) {
      try {
        const o = JSON.parse(optionsJson || "{}");
        if (typeof o !== "object" || o === null || Array.isArray(o)) throw new Error("options must be a JSON object");
        options = o;
      } catch (err) {
        bad.options = (err as Error).message;
      }
    } else {
      for (const [k, s] of Object.entries(props)) {
        const w = widgetOf(s);
        const raw = values[k];
        if (w.kind === "boolean") options[k] = raw === true;
        else if (raw === "") continue;
        else if (w.kind === "number") options[k] = Number(raw);
        else if (w.kind === "string") options[k] = raw;
        else {
          try {
            options[k] = JSON.parse(String(raw));
          } catch (err) {
            bad[`options.${k}`] = `not JSON: ${(err as Error).message}`;
          }
        }
      }
    }
    return Object.keys(bad).length ? bad : { reference: ref, options };
  }

  async function run() {
    const built = build();
    if (!("options" in built && "reference" in built)) {
      setErrors(built as FieldErrors);
      setResult(null);
      return;
    }
    setBusy(true);
    setErrors({});
    try {
      const [r] = await scoreBatch([{ verifier: v.name, ...(prompt ? { prompt } : {}), response, ...(built.reference !== undefined ? { reference: built.reference } : {}), options: built.options as Record<string, unknown> }]);
      setResult(r);
      // An invalid item names its field (reference, options, options.x...): show it there.
      if (r.status === "invalid" && typeof r.details?.field === "string") setErrors({ [r.details.field as string]: r.reason });
    } catch (err) {
      const e = errorsOf(err);
      const mapped: FieldErrors = {};
      for (const [f, m] of Object.entries(e)) mapped[f.replace(/^items\.\d+\./, "")] = m;
      setErrors(mapped);
      setResult(null);
    } finally {
      setBusy(false);
    }
  }

  /** The error for a field or anything under it (reference.x.y shows by reference). */
  const errUnder = (f: string) => Object.entries(errors).filter(([k]) => k === f || k.startsWith(f + ".")).map(([, m]) => m).join("; ") || undefined;
  const optionKeys = Object.keys(props);
  const optionErrorsElsewhere = optionsAsJson ? errUnder("options") : errors.options;

  return (
    <form className="pg-form" onSubmit={(e) => { e.preventDefault(); void run(); }}>
      <div className="field">
        <label htmlFor="pg-prompt">Prompt <span className="muted">(optional)</span></label>
        <textarea id="pg-prompt" rows={2} value={prompt} onChange={(e) => setPrompt(e.target.value)} />
      </div>
      <div className="field">
        <label htmlFor="pg-response">Response</label>
        <textarea id="pg-response" rows={4} value={response} onChange={(e) => setResponse(e.target.value)} aria-describedby={errors.response ? "pg-response-err" : undefined} />
        <FieldError id="pg-response-err" message={errors.response} />
      </div>
      <div className="field">
        <label htmlFor="pg-reference">Reference {refAsJson ? "(JSON)" : "(text)"}</label>
        <textarea id="pg-reference" rows={refAsJson ? 4 : 2} className={refAsJson ? "mono" : undefined} value={reference} onChange={(e) => setReference(e.target.value)}
          aria-invalid={!!errUnder("reference") || undefined} aria-describedby={errUnder("reference") ? "pg-reference-err" : "pg-reference-help"} />
        <p id="pg-reference-help" className="muted small">{v.reference_schema.description as string | undefined}</p>
        {stringRef && (
          <label className="inline">
            <input type="checkbox" checked={refAsJson} onChange={(e) => setRefAsJson(e.target.checked)} /> Reference as JSON (lists, objects)
          </label>
        )}
        <FieldError id="pg-reference-err" message={errUnder("reference")} />
      </div>
      <fieldset>
        <legend>Options</legend>
        {formable(v.options_schema) && (
          <label className="inline">
            <input type="checkbox" checked={optionsAsJson} onChange={(e) => setOptionsAsJson(e.target.checked)} /> Edit options as JSON
          </label>
        )}
        {optionsAsJson ? (
          <div className="field">
            <label htmlFor="pg-options">Options (JSON object)</label>
            <textarea id="pg-options" rows={4} className="mono" value={optionsJson} onChange={(e) => setOptionsJson(e.target.value)} aria-describedby={optionErrorsElsewhere ? "pg-options-err" : undefined} />
          </div>
        ) : optionKeys.length === 0 ? (
          <p className="muted">This verifier has no options.</p>
        ) : (
          <div className="options">
            {optionKeys.map((k) => (
              <OptionField key={k} name={k} s={props[k]} value={values[k]} error={errUnder(`options.${k}`)} onChange={(x) => setValues({ ...values, [k]: x })} />
            ))}
          </div>
        )}
        <FieldError id="pg-options-err" message={optionErrorsElsewhere} />
      </fieldset>
      <FieldError id="pg-err" message={errors[""] ?? errors.verifier ?? errors.prompt} />
      <div className="row actions">
        <button type="submit" className="primary" disabled={busy}>{busy ? "Scoring…" : "Score"}</button>
      </div>
      <div aria-live="polite">
        {result && (
          <article className={`result ${result.status}`} aria-label="Playground result">
            <h3>
              Reward <Reward value={result.reward} text={result.reward === null ? "—" : String(result.reward)} testId="pg-reward" />
              <span className="badge">{result.status}</span> <span className="muted small">{result.elapsed_ms.toFixed(1)} ms</span>
            </h3>
            <p className="reason">{result.reason}</p>
            <details open>
              <summary>Details</summary>
              <pre className="mono">{JSON.stringify(result.details, null, 2)}</pre>
            </details>
          </article>
        )}
      </div>
    </form>
  );
}

function OptionField({ name, s, value, error, onChange }: { name: string; s: JsonSchema; value: string | boolean; error?: string; onChange: (v: string | boolean) => void }) {
  const w = widgetOf(s);
  const id = `pg-opt-${name}`;
  const describedBy = [s.description ? `${id}-help` : "", error ? `${id}-err` : ""].filter(Boolean).join(" ") || undefined;
  const help = s.description ? <p id={`${id}-help`} className="muted small">{s.description}{s.default !== undefined ? ` (default ${JSON.stringify(s.default)})` : ""}</p> : null;
  if (w.kind === "boolean") {
    return (
      <div className="field">
        <label className="inline" htmlFor={id}>
          <input id={id} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} aria-describedby={describedBy} /> {name}
        </label>
        {help}
        <FieldError id={`${id}-err`} message={error} />
      </div>
    );
  }
  return (
    <div className="field">
      <label htmlFor={id}>{name}{w.kind === "json" && <span className="muted"> (JSON)</span>}</label>
      {w.kind === "enum" ? (
        <select id={id} value={String(value)} onChange={(e) => onChange(e.target.value)} aria-describedby={describedBy}>
          <option value="">(not set)</option>
          {w.values.map((x) => <option key={JSON.stringify(x)} value={JSON.stringify(x)}>{String(x)}</option>)}
        </select>
      ) : w.kind === "number" ? (
        <input id={id} type="number" step={w.integer ? 1 : "any"} min={s.minimum} max={s.maximum} value={String(value)} onChange={(e) => onChange(e.target.value)} aria-describedby={describedBy} />
      ) : w.kind === "string" ? (
        <input id={id} value={String(value)} onChange={(e) => onChange(e.target.value)} aria-describedby={describedBy} />
      ) : (
        <textarea id={id} rows={2} className="mono" value={String(value)} onChange={(e) => onChange(e.target.value)} aria-describedby={describedBy} />
      )}
      {help}
      <FieldError id={`${id}-err`} message={error} />
    </div>
  );
}

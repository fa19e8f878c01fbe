/**
 * Scores several responses with the draft as it is now (unsaved edits included: the criteria go
 * inline as each item's reference) through POST /reward/batch, and after an edit shows the new
 * reward beside the previous run's.
 */
import { useState } from "react";
import { errorsOf, scoreBatch, type Criterion, type FieldErrors, type RewardResult } from "./api";
import { contentKey, criteriaOf, typeOf, weightLabel, type Draft } from "./rubric";
import { FieldError } from "./FieldError";
import { Reward } from "./Reward";

interface Run {
  results: RewardResult[];
  /** The rubric content the run scored with. */
  rubric: string;
  criteria: Criterion[];
}

interface CriterionDetail {
  id: string;
  weight?: number;
  kind?: string;
  satisfied?: boolean;
  reason?: string;
  error?: string;
  votes?: unknown;
}

let responseKey = 1;

export function TryIt({ draft, onCriteriaErrors }: { draft: Draft; onCriteriaErrors: (e: FieldErrors) => void }) {
  const [prompt, setPrompt] = useState("");
  const [referenceAnswer, setReferenceAnswer] = useState("");
  const [aggregation, setAggregation] = useState<"weighted" | "holistic">("weighted");
  const [responses, setResponses] = useState<{ key: number; text: string }[]>([{ key: responseKey++, text: "" }, { key: responseKey++, text: "" }]);
  const [runs, setRuns] = useState<{ current?: Run; previous?: Run }>({});
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<FieldErrors>({});

  const criteria = criteriaOf(draft);
  const now = contentKey({ ...draft, criteria });
  const stale = runs.current !== undefined && runs.current.rubric !== now;

  async function score() {
    // An empty response would cost judge calls to learn nothing: say what to do instead.
    const empty = responses.findIndex((r) => r.text.trim() === "");
    if (empty >= 0) {
      setErrors({ response: `Response ${empty + 1} is empty: write the response to score, or remove it.` });
      document.getElementById(`try-resp-${responses[empty].key}`)?.focus();
      return;
    }
    setBusy(true);
    setErrors({});
    const reference = { criteria, ...(referenceAnswer ? { reference_answer: referenceAnswer } : {}) };
    try {
      const results = await scoreBatch(
        responses.map((r, i) => ({ id: `response-${i + 1}`, verifier: "rubric", prompt, response: r.text, reference, options: { aggregation } })),
        120_000,
      );
      // "Before" is the last run that scored something: a run the server refused compares with nothing.
      const scored = (run?: Run) => run?.results.some((r) => r.status === "ok");
      setRuns((old) => ({ current: { results, rubric: now, criteria }, previous: scored(old.current) ? old.current : old.previous }));
      // A rubric the server refuses (duplicate ids, no positive weight...) is the editor's problem: say so there too.
      const bad = results.find((r) => r.status === "invalid" && typeof r.details?.field === "string" && (r.details.field as string).startsWith("reference.criteria"));
      if (bad) {
        // "at reference/criteria/1/id: ..." names the row and the input.
        const m = /reference\/criteria\/(\d+)(?:\/(\w+))?/.exec(bad.reason);
        onCriteriaErrors({ [m ? `criteria.${m[1]}${m[2] ? `.${m[2]}` : ""}` : "criteria"]: bad.reason });
      } else onCriteriaErrors({});
    } catch (err) {
      const e = errorsOf(err);
      // A 400 names items.N.<field>: show it by the field of the pane.
      const mapped: FieldErrors = {};
      for (const [f, m] of Object.entries(e)) mapped[f.replace(/^items\.\d+\./, "")] = m;
      setErrors(mapped);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="panel tryit" aria-labelledby="tryit-h">
      <h2 id="tryit-h">Try it</h2>
      <p className="muted">Scores each response with the rubric as it is in the editor, saved or not.</p>
      <form onSubmit={(e) => { e.preventDefault(); void score(); }}>
        <div className="field">
          <label htmlFor="try-prompt">Prompt</label>
          <textarea id="try-prompt" rows={2} value={prompt} onChange={(e) => setPrompt(e.target.value)} required aria-describedby={errors.prompt ? "try-prompt-err" : undefined} />
          <FieldError id="try-prompt-err" message={errors.prompt} />
        </div>
        <div className="field">
          <label htmlFor="try-ref">Reference answer <span className="muted">(optional)</span></label>
          <textarea id="try-ref" rows={2} value={referenceAnswer} onChange={(e) => setReferenceAnswer(e.target.value)} aria-describedby={errors.reference ? "try-ref-err" : undefined} />
          <FieldError id="try-ref-err" message={errors.reference} />
        </div>
        <div className="field narrow">
          <label htmlFor="try-agg">Aggregation</label>
          <select id="try-agg" value={aggregation} onChange={(e) => setAggregation(e.target.value as "weighted" | "holistic")}>
            <option value="weighted">weighted (one verdict per criterion)</option>
            <option value="holistic">holistic (one 0–10 score)</option>
          </select>
        </div>
        <fieldset>
          <legend>Responses</legend>
          <ol className="responses">
            {responses.map((r, i) => (
              <li key={r.key}>
                <label htmlFor={`try-resp-${r.key}`}>Response {i + 1}</label>
                <textarea id={`try-resp-${r.key}`} rows={3} value={r.text} aria-invalid={errors.response && r.text.trim() === "" ? true : undefined} aria-describedby={errors.response && r.text.trim() === "" ? "try-err" : undefined} onChange={(e) => setResponses(responses.map((x) => (x.key === r.key ? { ...x, text: e.target.value } : x)))} />
                <button type="button" className="danger" disabled={responses.length === 1} onClick={() => setResponses(responses.filter((x) => x.key !== r.key))} aria-label={`Remove response ${i + 1}`}>Remove</button>
              </li>
            ))}
          </ol>
          <button type="button" onClick={() => setResponses([...responses, { key: responseKey++, text: "" }])}>Add response</button>
        </fieldset>
        <FieldError id="try-err" message={errors[""] ?? errors.response ?? errors.items} />
        <div className="row actions">
          <button type="submit" className="primary" disabled={busy}>{busy ? "Scoring…" : runs.current ? "Score again" : "Score responses"}</button>
          {stale && <span className="badge">rubric edited since the last run</span>}
        </div>
      </form>
      <div aria-live="polite">
        {runs.current && <Results run={runs.current} previous={runs.previous} />}
      </div>
    </section>
  );
}

const fmt = (x: number | null | undefined) => (x === null || x === undefined ? "—" : x.toFixed(3).replace(/\.?0+$/, "") || "0");

function Results({ run, previous }: { run: Run; previous?: Run }) {
  return (
    <div className="results">
      <h3>Results</h3>
      {run.results.map((r, i) => {
        const before = previous?.results[i];
        const crits = (r.details?.criteria as CriterionDetail[] | undefined) ?? [];
        const delta = before && before.reward !== null && r.reward !== null ? r.reward - before.reward : undefined;
        return (
          <article key={i} className={`result ${r.status}`} aria-label={`Response ${i + 1} result`}>
            <h4>
              Response {i + 1}: reward <Reward value={r.reward} text={fmt(r.reward)} testId={`reward-${i + 1}`} />
              {before && (
                <span className="was" data-testid={`was-${i + 1}`}>
                  {" "}(was {fmt(before.reward)}{delta !== undefined && delta !== 0 ? `, ${delta > 0 ? "+" : ""}${fmt(delta)}` : delta === 0 ? ", unchanged" : ""})
                </span>
              )}
              {r.status !== "ok" && <span className="badge">{r.status}</span>}
            </h4>
            <p className="reason">{r.reason}</p>
            {crits.length > 0 && (
              <table className="verdicts">
                <thead>
                  <tr><th scope="col">Criterion</th><th scope="col">Weight</th><th scope="col">Verdict</th><th scope="col">Judge's reason</th></tr>
                </thead>
                <tbody>
                  {crits.map((c) => {
                    const desc = run.criteria.find((x) => x.id === c.id);
                    return (
                      <tr key={c.id} data-criterion={c.id}>
                        <th scope="row" title={desc?.description}>{c.id}</th>
                        <td>{desc ? weightLabel(desc) : c.kind === "veto" ? "veto" : String(c.weight ?? "")}</td>
                        <td className="verdict">{verdict(c, desc)}</td>
                        <td className="why">{c.error ?? c.reason ?? ""}</td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )}
            {typeof r.details?.reasoning === "string" && <p className="why"><strong>Judge:</strong> {r.details.reasoning as string}</p>}
          </article>
        );
      })}
    </div>
  );
}

function verdict(c: CriterionDetail, desc?: Criterion): string {
  if (c.error) return "no verdict";
  const t = desc ? typeOf(desc) : c.kind === "veto" ? "veto" : (c.weight ?? 0) < 0 ? "pitfall" : "score";
  if (t === "veto") return c.satisfied ? "passed" : "failed (veto)";
  if (t === "pitfall") return c.satisfied ? "made (pitfall)" : "avoided";
  return c.satisfied ? "met" : "not met";
}

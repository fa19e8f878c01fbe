/** Rubric list with search, the editor, version history with a diff, import/export, and the try-it pane. */
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { errorsOf, rubricsApi, type FieldErrors, type Rubric } from "./api";
import { blankDraft, contentKey, criteriaOf, draftOf, freeId, inputOf, newKey, rubricText, typeOf, withPoints, withType, type Draft, type DraftCriterion, type CriterionType } from "./rubric";
import { SideBySide } from "./Diff";
import { TryIt } from "./TryIt";
import { FieldError } from "./FieldError";

export function RubricsPage() {
  const [list, setList] = useState<Rubric[]>([]);
  const [query, setQuery] = useState("");
  const [listError, setListError] = useState("");
  const [draft, setDraft] = useState<Draft | null>(null);
  /** The stored latest version of the rubric being edited; null for a new (or duplicated) draft. */
  const [saved, setSaved] = useState<Rubric | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [status, setStatus] = useState("");
  const [historyKey, setHistoryKey] = useState(0);
  const titleRef = useRef<HTMLInputElement>(null);

  const refresh = useCallback(async () => {
    try {
      setList(await rubricsApi.list());
      setListError("");
    } catch (err) {
      setListError((err as Error).message);
    }
  }, []);
  useEffect(() => void refresh(), [refresh]);

  const shown = useMemo(() => {
    const q = query.trim().toLowerCase();
    const all = [...list].sort((a, b) => a.id.localeCompare(b.id));
    if (!q) return all;
    return all.filter((r) => [r.id, r.title, r.description ?? "", ...r.criteria.map((c) => c.description)].some((s) => s.toLowerCase().includes(q)));
  }, [list, query]);

  const dirty = draft !== null && (saved === null || contentKey({ ...draft, criteria: criteriaOf(draft) }) !== contentKey(saved));

  function confirmLeave(): boolean {
    return !dirty || window.confirm("Discard the unsaved changes to this rubric?");
  }

  async function open(id: string) {
    if (!confirmLeave()) return;
    try {
      const r = await rubricsApi.get(id);
      setSaved(r);
      setDraft(draftOf(r));
      setErrors({});
      setStatus(`Opened ${r.id} (version ${r.version}).`);
    } catch (err) {
      setErrors(errorsOf(err));
    }
  }

  function startNew() {
    if (!confirmLeave()) return;
    setSaved(null);
    setDraft(blankDraft());
    setErrors({});
    setStatus("New rubric: not saved yet.");
    setTimeout(() => document.getElementById("rubric-id")?.focus());
  }

  async function save() {
    if (!draft) return;
    try {
      const r = saved ? await rubricsApi.save(saved.id, inputOf(draft, false), saved.version) : await rubricsApi.create(inputOf(draft, true));
      const changed = !saved || r.version !== saved.version;
      setSaved(r);
      setDraft({ ...draftOf(r), criteria: draft.criteria.map((c, i) => ({ ...r.criteria[i], kind: r.criteria[i].kind ?? "score", key: c.key })) });
      setErrors({});
      setStatus(changed ? `Saved ${r.id} as version ${r.version}.` : `No changes: ${r.id} stays at version ${r.version}.`);
      setHistoryKey((k) => k + 1);
      await refresh();
    } catch (err) {
      setErrors(errorsOf(err));
      setStatus("");
    }
  }

  function duplicate() {
    if (!draft) return;
    const taken = new Set(list.map((r) => r.id));
    let id = `${draft.id || "rubric"}-copy`;
    for (let i = 2; taken.has(id); i++) id = `${draft.id || "rubric"}-copy${i}`;
    setSaved(null);
    setDraft({ ...draft, id, title: `${draft.title} (copy)`, criteria: draft.criteria.map((c) => ({ ...c, key: newKey() })) });
    setErrors({});
    setStatus(`Duplicate as ${id}: not saved yet.`);
    setTimeout(() => titleRef.current?.focus());
  }

  async function remove() {
    if (!saved || !window.confirm(`Delete the rubric ${saved.id}? Its version numbers stay reserved.`)) return;
    try {
      await rubricsApi.remove(saved.id);
      setStatus(`Deleted ${saved.id}.`);
      setSaved(null);
      setDraft(null);
      await refresh();
    } catch (err) {
      setErrors(errorsOf(err));
    }
  }

  async function exportJson() {
    if (!saved) return;
    try {
      const doc = await rubricsApi.exportOne(saved.id);
      const url = URL.createObjectURL(new Blob([JSON.stringify(doc, null, 2)], { type: "application/json" }));
      const a = document.createElement("a");
      a.href = url;
      a.download = `${saved.id}.rubric.json`;
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      setStatus(`Exported ${saved.id} with all its versions.`);
    } catch (err) {
      setErrors(errorsOf(err));
    }
  }

  async function importFile(file: File) {
    try {
      let doc: unknown;
      try {
        doc = JSON.parse(await file.text());
      } catch (err) {
        throw new Error(`${file.name} is not JSON: ${(err as Error).message}`);
      }
      const res = await rubricsApi.importDoc(doc);
      setStatus(`Imported ${file.name}: ${JSON.stringify(res.imported)}`);
      setListError("");
      await refresh();
    } catch (err) {
      setListError((err as Error).message);
    }
  }

  async function restore(v: Rubric) {
    if (!saved) return;
    if (dirty && !window.confirm("Restoring replaces your unsaved changes. Go on?")) return;
    try {
      const r = await rubricsApi.save(saved.id, inputOf(draftOf(v), false), saved.version);
      setSaved(r);
      setDraft(draftOf(r));
      setErrors({});
      setStatus(r.version === saved.version ? `Version ${v.version} is the same as the latest; nothing to restore.` : `Restored version ${v.version} as version ${r.version}.`);
      setHistoryKey((k) => k + 1);
      await refresh();
    } catch (err) {
      setErrors(errorsOf(err));
    }
  }

  return (
    <div className="rubrics">
      <aside className="panel list" aria-labelledby="list-h">
        <h2 id="list-h">Rubrics</h2>
        <label htmlFor="search">Search</label>
        <input id="search" type="search" value={query} onChange={(e) => setQuery(e.target.value)} placeholder="id, title or criterion" />
        <div className="row">
          <button type="button" onClick={startNew}>New rubric</button>
          <label className="button file">
            Import JSON
            <input type="file" accept="application/json,.json" onChange={(e) => { const f = e.target.files?.[0]; e.target.value = ""; if (f) void importFile(f); }} />
          </label>
        </div>
        {listError && <p role="alert" className="error">{listError}</p>}
        <ul aria-label="Stored rubrics">
          {shown.map((r) => (
            <li key={r.id}>
              <button type="button" className="link" aria-current={saved?.id === r.id ? "true" : undefined} onClick={() => void open(r.id)}>
                <span className="rid">{r.id}</span> <span className="muted">v{r.version}</span>
                <br />
                <span className="rtitle">{r.title}</span>
              </button>
            </li>
          ))}
        </ul>
        {shown.length === 0 && <p className="muted">{list.length ? "No rubric matches." : "No rubrics yet."}</p>}
      </aside>

      <div className="work">
        <p role="status" className="status">{status}</p>
        {errors[""] && <p role="alert" className="error">{errors[""]}</p>}
        {draft ? (
          <>
            <Editor draft={draft} setDraft={setDraft} saved={saved} errors={errors} titleRef={titleRef} dirty={dirty}
              onSave={save} onDuplicate={duplicate} onDelete={remove} onExport={exportJson} />
            <TryIt draft={draft} onCriteriaErrors={(e) => setErrors((old) => ({ ...withoutCriteria(old), ...e }))} />
            {saved && <History key={`${saved.id}-${historyKey}`} id={saved.id} draft={draft} onRestore={restore} />}
          </>
        ) : (
          <section className="panel">
            <h2>No rubric open</h2>
            <p>Pick a rubric from the list, or start a new one.</p>
          </section>
        )}
      </div>
    </div>
  );
}

/** Errors other than the criteria's (a try-it run replaces those). */
const withoutCriteria = (e: FieldErrors) => Object.fromEntries(Object.entries(e).filter(([k]) => !k.startsWith("criteria")));

interface EditorProps {
  draft: Draft;
  setDraft: (d: Draft) => void;
  saved: Rubric | null;
  errors: FieldErrors;
  titleRef: React.RefObject<HTMLInputElement | null>;
  dirty: boolean;
  onSave: () => void;
  onDuplicate: () => void;
  onDelete: () => void;
  onExport: () => void;
}

function Editor({ draft, setDraft, saved, errors, titleRef, dirty, onSave, onDuplicate, onDelete, onExport }: EditorProps) {
  const setCriterion = (i: number, c: DraftCriterion) => setDraft({ ...draft, criteria: draft.criteria.map((x, k) => (k === i ? c : x)) });
  const move = (i: number, by: number) => {
    const cs = [...draft.criteria];
    const [c] = cs.splice(i, 1);
    cs.splice(i + by, 0, c);
    setDraft({ ...draft, criteria: cs });
    // Keep the keyboard on the moved row's button.
    setTimeout(() => document.getElementById(`crit-${c.key}-${by < 0 ? "up" : "down"}`)?.focus());
  };
  const add = () => {
    const c: DraftCriterion = { id: freeId(draft.criteria), description: "", weight: 1, kind: "score", key: newKey() };
    setDraft({ ...draft, criteria: [...draft.criteria, c] });
    setTimeout(() => document.getElementById(`crit-${c.key}-desc`)?.focus());
  };
  return (
    <section className="panel editor" aria-labelledby="editor-h">
      <h2 id="editor-h">
        {saved ? <>Edit <code>{saved.id}</code> <span className="muted">latest v{saved.version}</span></> : "New rubric"}
        {dirty && <span className="badge">unsaved</span>}
      </h2>
      <form onSubmit={(e) => { e.preventDefault(); onSave(); }}>
        <div className="grid2">
          <div className="field">
            <label htmlFor="rubric-id">Id</label>
            <input id="rubric-id" value={draft.id} readOnly={saved !== null} onChange={(e) => setDraft({ ...draft, id: e.target.value })}
              placeholder="capital-answer (blank: a random id)" aria-invalid={!!errors.id || undefined} aria-describedby={errors.id ? "err-id" : undefined} />
            <FieldError id="err-id" message={errors.id} />
          </div>
          <div className="field">
            <label htmlFor="rubric-title">Title</label>
            <input id="rubric-title" ref={titleRef} value={draft.title} onChange={(e) => setDraft({ ...draft, title: e.target.value })}
              aria-invalid={!!errors.title || undefined} aria-describedby={errors.title ? "err-title" : undefined} />
            <FieldError id="err-title" message={errors.title} />
          </div>
        </div>
        <div className="field">
          <label htmlFor="rubric-desc">Description</label>
          <textarea id="rubric-desc" rows={2} value={draft.description} onChange={(e) => setDraft({ ...draft, description: e.target.value })}
            aria-invalid={!!errors.description || undefined} aria-describedby={errors.description ? "err-description" : undefined} />
          <FieldError id="err-description" message={errors.description} />
        </div>
        <fieldset className="criteria">
          <legend>Criteria</legend>
          <FieldError id="err-criteria" message={errors.criteria} />
          <ol>
            {draft.criteria.map((c, i) => (
              <CriterionRow key={c.key} c={c} i={i} n={draft.criteria.length} errors={errors}
                onChange={(x) => setCriterion(i, x)} onMove={(by) => move(i, by)}
                onRemove={() => setDraft({ ...draft, criteria: draft.criteria.filter((_, k) => k !== i) })} />
            ))}
          </ol>
          <button type="button" onClick={add}>Add criterion</button>
        </fieldset>
        <div className="row actions">
          <button type="submit" className="primary">{saved ? "Save new version" : "Create rubric"}</button>
          <button type="button" onClick={onDuplicate}>Duplicate</button>
          <button type="button" onClick={onExport} disabled={!saved}>Export JSON</button>
          <button type="button" className="danger" onClick={onDelete} disabled={!saved}>Delete</button>
        </div>
      </form>
    </section>
  );
}

const HELP: Record<CriterionType, string> = {
  score: "Adds its weight when the judge finds it met.",
  pitfall: "A mistake: its penalty is subtracted when the response makes it (a negative weight).",
  veto: "A gate: when not met the reward is 0, whatever else is met.",
};

function CriterionRow({ c, i, n, errors, onChange, onMove, onRemove }: {
  c: DraftCriterion; i: number; n: number; errors: FieldErrors;
  onChange: (c: DraftCriterion) => void; onMove: (by: number) => void; onRemove: () => void;
}) {
  const base = `crit-${c.key}`;
  const err = (f: string) => errors[`criteria.${i}.${f}`];
  const rowErr = errors[`criteria.${i}`];
  const t = typeOf(c);
  return (
    <li className={`criterion ${t}`} aria-label={`Criterion ${i + 1}: ${c.id}`}>
      <div className="crit-head">
        <div className="field">
          <label htmlFor={`${base}-id`}>Criterion id</label>
          <input id={`${base}-id`} value={c.id} onChange={(e) => onChange({ ...c, id: e.target.value })} aria-invalid={!!err("id") || undefined} aria-describedby={err("id") ? `${base}-id-err` : undefined} />
          <FieldError id={`${base}-id-err`} message={err("id")} />
        </div>
        <div className="field">
          <label htmlFor={`${base}-type`}>Type</label>
          <select id={`${base}-type`} value={t} onChange={(e) => onChange(withType(c, e.target.value as CriterionType))}>
            <option value="score">Score</option>
            <option value="pitfall">Pitfall (−)</option>
            <option value="veto">Veto</option>
          </select>
        </div>
        <div className="field narrow">
          <label htmlFor={`${base}-weight`}>{t === "pitfall" ? "Penalty" : "Weight"}</label>
          <input id={`${base}-weight`} type="number" min={0} max={1000} step="any" disabled={t === "veto"} value={t === "veto" ? "" : Math.abs(c.weight)}
            onChange={(e) => onChange(withPoints(c, Number(e.target.value)))} aria-invalid={!!err("weight") || undefined} aria-describedby={err("weight") ? `${base}-weight-err` : undefined} />
          <FieldError id={`${base}-weight-err`} message={err("weight") ?? err("kind")} />
        </div>
      </div>
      <p className="muted small crit-help">{HELP[t]}</p>
      <div className="field">
        <label htmlFor={`${base}-desc`}>Description</label>
        <textarea id={`${base}-desc`} rows={2} value={c.description} onChange={(e) => onChange({ ...c, description: e.target.value })}
          placeholder="One checkable statement about the response" aria-invalid={!!err("description") || undefined} aria-describedby={err("description") ? `${base}-desc-err` : undefined} />
        <FieldError id={`${base}-desc-err`} message={err("description") ?? rowErr} />
      </div>
      <div className="row crit-actions">
        <button type="button" id={`${base}-up`} onClick={() => onMove(-1)} disabled={i === 0} aria-label={`Move ${c.id} up`}>↑ Up</button>
        <button type="button" id={`${base}-down`} onClick={() => onMove(1)} disabled={i === n - 1} aria-label={`Move ${c.id} down`}>↓ Down</button>
        <button type="button" className="danger" onClick={onRemove} disabled={n === 1} aria-label={`Remove ${c.id}`}>Remove</button>
      </div>
    </li>
  );
}

function History({ id, draft, onRestore }: { id: string; draft: Draft; onRestore: (v: Rubric) => void }) {
  const [versions, setVersions] = useState<Rubric[]>([]);
  const [error, setError] = useState("");
  const [left, setLeft] = useState("");
  const [right, setRight] = useState("");
  useEffect(() => {
    rubricsApi.versions(id).then(
      (vs) => {
        setVersions(vs);
        const last = vs[vs.length - 1]?.version;
        setLeft(String(vs.length > 1 ? vs[vs.length - 2].version : last));
        setRight(String(last));
      },
      (err) => setError((err as Error).message),
    );
  }, [id]);
  const textOf = (v: string) => {
    if (v === "draft") return rubricText({ ...draft, criteria: criteriaOf(draft) });
    const r = versions.find((x) => String(x.version) === v);
    return r ? rubricText(r) : "";
  };
  const nameOf = (v: string) => (v === "draft" ? "draft (unsaved)" : `version ${v}`);
  const latest = versions[versions.length - 1]?.version;
  const options = (
    <>
      {versions.map((v) => <option key={v.version} value={String(v.version)}>v{v.version}: {v.title}</option>)}
      <option value="draft">draft (unsaved)</option>
    </>
  );
  return (
    <section className="panel history" aria-labelledby="history-h">
      <h2 id="history-h">Version history</h2>
      {error && <p role="alert" className="error">{error}</p>}
      <table className="versions">
        <thead><tr><th scope="col">Version</th><th scope="col">Saved</th><th scope="col">Criteria</th><th scope="col"><span className="sr-only">Action</span></th></tr></thead>
        <tbody>
          {[...versions].reverse().map((v) => (
            <tr key={v.version}>
              <td>v{v.version}{v.version === latest && <span className="muted"> (latest)</span>}</td>
              <td>{new Date(v.created_at).toLocaleString()}</td>
              <td>{v.criteria.length}</td>
              <td>{v.version !== latest && <button type="button" onClick={() => onRestore(v)} aria-label={`Restore version ${v.version}`}>Restore</button>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="grid2">
        <div className="field">
          <label htmlFor="diff-left">Compare</label>
          <select id="diff-left" value={left} onChange={(e) => setLeft(e.target.value)}>{options}</select>
        </div>
        <div className="field">
          <label htmlFor="diff-right">with</label>
          <select id="diff-right" value={right} onChange={(e) => setRight(e.target.value)}>{options}</select>
        </div>
      </div>
      {left && right && <SideBySide a={textOf(left)} b={textOf(right)} leftTitle={nameOf(left)} rightTitle={nameOf(right)} />}
    </section>
  );
}

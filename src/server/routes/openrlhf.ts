/**
 * OpenRLHF remote reward (`--remote_rm_url http://host:8787/get_reward`).
 * OpenRLHF posts `{query, prompts, labels}` where each query is prompt + response joined by the
 * chat template, and reads `{rewards, scores, extra_logs}`. The verifier and reference come from
 * the label: a JSON label `{"verifier": …, "reference": …, "options": …}`, or a plain string
 * reference with the verifier named by `?verifier=`. OpenRLHF needs numbers, so unscored items
 * (reward null) become `?null_reward=` (default 0) and are flagged per query in extra_logs, whose
 * entries are all per-query lists of numbers, as OpenRLHF's update_samples_with_rewards needs.
 *
 * A verifier name Assay does not have (`?verifier=mathh`, or a label naming one) is a mistake
 * that would score every such query 0 for the whole run, so the request is answered 400 naming
 * the nearest verifier, never 200 with zeros. OpenRLHF's client (openrlhf/utils/remote_rm_utils.py,
 * request_api_wrapper) calls raise_for_status(), logs "Request error, please check: 400 Client
 * Error …" on each of its tries (5, a second apart) and then raises "Request error for 5 times …
 * Please check the API server.", which stops the trainer; our reply's `error` says what to fix.
 */
import { Router } from "express";
import type { RewardResult, Wire } from "../../core/types.js";
import { HttpError } from "../errors.js";
import { didYouMean, nearest } from "../../core/nearest.js";
import { OPENAPI } from "../../core/contract.js";
import { clientGone, type Caller, type RouteDeps } from "../http.js";

/**
 * How OpenRLHF waits for /get_reward: 180 s a try (aiohttp `ClientTimeout(total=180)` in
 * openrlhf/utils/agent.py `SingleTurnAgentExecutor._fetch_rewards_via_http`, v0.9.1 to v0.11.0;
 * `requests.post(..., timeout=180)` in openrlhf/utils/remote_rm_utils.py `request_api_wrapper`
 * up to v0.9.0), five tries one second apart whatever the error, then the sample has no reward
 * (v0.11.0's experience maker then fails on it). A 429 therefore buys one second, so a request
 * behind a sandbox (or SQL) backlog is held in the queue for as long as this allows instead of
 * refused at ASSAY_SANDBOX_MAX_WAIT_MS; one that goes unanswered that long is given up (its
 * unstarted items leave the queue) and OpenRLHF's next try queues afresh.
 */
export const OPENRLHF_CALLER: Caller = { name: "OpenRLHF's client", waitsMs: 180_000 };

/**
 * A special token a decoded query may hold before the prompt starts: left padding, a BOS the
 * tokenizer added (`<pad>`, `<s>`, `<|endoftext|>`, `<|begin_of_text|>`, `<｜begin▁of▁sentence｜>`).
 */
const LEAD_TOKEN = /^(?:<\|[A-Za-z0-9_.:-]{1,40}\|>|<｜[^｜<>]{1,40}｜>|<\/?s>|<pad>|<unk>|<eos>|<bos>)/;
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x2581;

/**
 * Where the prompt ends in an OpenRLHF query, or -1 where the query does not begin with it. The
 * query is the tokens of prompt and response decoded together (skip_special_tokens=False), so it
 * may begin with left padding or a BOS token the prompt string lacks, and the decode may space
 * the prompt differently (`<s> [INST]` for `<s>[INST]`, SentencePiece's ▁). So the prompt is
 * matched from the query's start, whitespace aside, after any special tokens it does not itself
 * begin with. Never searched for further in: a prompt found later is not where the response
 * starts (a response that repeats the prompt keeps its whole text), and a search would cost query
 * × prompt time. Linear: each step moves along the query or the prompt.
 */
export function promptEnd(query: string, prompt: string): number {
  if (query.startsWith(prompt)) return prompt.length;
  let i = 0;
  let j = 0;
  let started = false;
  for (;;) {
    while (j < prompt.length && isSpace(prompt.charCodeAt(j))) j++;
    if (j >= prompt.length) return i;
    while (i < query.length && isSpace(query.charCodeAt(i))) i++;
    if (i >= query.length) return -1;
    if (!started) {
      const lead = LEAD_TOKEN.exec(query.slice(i, i + 48));
      if (lead && !prompt.startsWith(lead[0], j)) {
        i += lead[0].length;
        continue;
      }
    }
    if (query[i] !== prompt[j]) return -1;
    started = true;
    i++;
    j++;
  }
}

/**
 * The response part of an OpenRLHF query (the text after its prompt: promptEnd), less the
 * end-of-sequence tokens it ends with; null where a prompt is given and the query does not
 * begin with it: grading the whole query would grade the prompt's text (a worked example in it,
 * an option letter) as the model's answer.
 */
export function responseOf(query: string, prompt: string | undefined): string | null {
  if (!prompt) return stripEndTokens(query);
  const end = promptEnd(query, prompt);
  return end < 0 ? null : stripEndTokens(query.slice(end));
}

// One end-of-sequence or padding token as chat templates spell them: <|im_end|>, <|endoftext|>,
// <|eot_id|>, </s>, <eos>, <pad>, <end_of_turn>, <｜end▁of▁sentence｜>.
const END_TOKEN = /(?:<\|[A-Za-z0-9_.:-]{1,40}\|>|<｜[^｜<>]{1,40}｜>|<\/s>|<eos>|<pad>|<end_of_turn>)$/;

/**
 * OpenRLHF decodes queries with skip_special_tokens=False, so a response ends with the model's
 * end-of-sequence token (and, in older versions, padding). Those are not part of the answer:
 * "4<|im_end|>" must match "4". Strips a trailing run of such tokens (and the whitespace between
 * them); text without one is returned unchanged. Linear: each step looks at a bounded tail.
 */
export function stripEndTokens(text: string): string {
  let end = text.length;
  let stripped = false;
  for (;;) {
    let e = end;
    while (e > 0 && /\s/.test(text[e - 1]!)) e--;
    const m = END_TOKEN.exec(text.slice(Math.max(0, e - 48), e));
    if (!m) break;
    end = e - m[0].length;
    stripped = true;
  }
  return stripped ? text.slice(0, end) : text;
}

/**
 * A number as a JSON float: `1` is written `1.0`. OpenRLHF builds `torch.tensor(rewards)` from the
 * parsed reply, and Python's json reads `1` as an int, so an all-integer batch (every reward 0
 * or 1, the usual case) becomes an int64 tensor, and its group baseline's `rewards.std(-1)`
 * raises "std and var only support floating point". JSON.stringify cannot write `1.0`.
 */
export function jsonFloat(n: number): string {
  // Integers below 1e21 print without an exponent; "1e+21" and "0.5" already read as floats.
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return (Object.is(n, -0) ? "0" : String(n)) + ".0";
  return JSON.stringify(n); // "null" for NaN/Infinity, as JSON.stringify itself writes them
}

const floatArray = (xs: readonly number[]) => "[" + xs.map(jsonFloat).join(",") + "]";

/**
 * The whole /get_reward reply, with every number OpenRLHF turns into a tensor (rewards, scores,
 * each extra_logs list) written as a float. Linear in the reply's size.
 */
export function openrlhfJson(reply: Wire["GetRewardResponse"]): string {
  const logs = Object.entries(reply.extra_logs).map(([k, v]) => `${JSON.stringify(k)}:${floatArray(v)}`);
  let out = `{"rewards":${floatArray(reply.rewards)},"scores":${floatArray(reply.scores)},"extra_logs":{${logs.join(",")}}`;
  if (reply.results !== undefined) out += `,"results":${JSON.stringify(reply.results)}`;
  return out + "}";
}

/** What a label object may hold: an item's fields (openapi.yaml's RewardItem); its verifier, reference and options are read, the rest comes from the request. */
const LABEL_KEYS = Object.keys((OPENAPI.components.schemas.RewardItem as { properties: Record<string, unknown> }).properties);
/** The keys a label object is recognised by; a reference object's key near one of them is taken for it misspelt. */
const LABEL_OWN = ["verifier", "reference", "options"];

function itemFor(label: unknown, defaultVerifier: string | undefined, prompt: string | undefined, response: string, i: number) {
  let spec: Record<string, unknown> | null = null;
  if (label && typeof label === "object" && !Array.isArray(label)) spec = label as Record<string, unknown>;
  else if (typeof label === "string" && label.trimStart().startsWith("{")) {
    try {
      const parsed = JSON.parse(label);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) spec = parsed;
    } catch {
      /* not JSON: a plain reference string */
    }
  }
  const base = { id: i, prompt, response };
  // A label object is a dataset's column: a key misspelt there is misspelt in every row, and
  // read as a reference (or left out) it trained on zeros or on the defaults without a word.
  if (spec && (typeof spec.verifier === "string" || "reference" in spec)) {
    for (const k of Object.keys(spec)) {
      if (!LABEL_KEYS.includes(k)) throw new HttpError(400, `label ${i}: unknown key ${JSON.stringify(k.slice(0, 64))}${didYouMean(k, LABEL_KEYS)}; a label object holds ${LABEL_OWN.join(", ")} (and may hold an item's other fields, which the request gives)`, "labels");
    }
  } else if (spec) {
    // a reference object for ?verifier= (code's {inputs, outputs}, say), unless a key is one of
    // the label's own, misspelt ({"referense": …})
    for (const k of Object.keys(spec)) {
      const meant = nearest(k, LABEL_OWN);
      if (meant !== undefined) throw new HttpError(400, `label ${i}: key ${JSON.stringify(k.slice(0, 64))}; did you mean ${meant}? (a label object holds ${LABEL_OWN.join(", ")})`, "labels");
    }
  }
  if (spec && typeof spec.verifier === "string") {
    return { ...base, verifier: spec.verifier, reference: spec.reference, options: spec.options };
  }
  // {"reference": …, "options": …} with the verifier named by ?verifier=, as an object or as
  // its JSON text alike (a reference that is itself an object, such as sql's, has no such key)
  if (spec && "reference" in spec) return { ...base, verifier: defaultVerifier ?? "", reference: spec.reference, options: spec.options };
  return { ...base, verifier: defaultVerifier ?? "", reference: label ?? undefined, options: undefined };
}

export function openrlhfRoutes({ runtime, body: opening, admit }: RouteDeps): Router {
  const { scorer, config } = runtime;
  const r = Router();
  r.post("/get_reward", opening("GetRewardRequest"), async (req, res) => {
    const body = req.body as Wire["GetRewardRequest"];
    const n = body.query.length;
    if (body.prompts && body.prompts.length !== n) throw new HttpError(400, `prompts has ${body.prompts.length} entries but query has ${n}; send one prompt per query`, "prompts");
    if (body.labels && body.labels.length !== n) throw new HttpError(400, `labels has ${body.labels.length} entries but query has ${n}; send one label per query`, "labels");
    if (n > config.maxBatch) throw new HttpError(413, `${n} queries is over the limit of ${config.maxBatch}; lower the micro batch size (or raise ASSAY_MAX_BATCH)`, "query");
    // each parameter once, as written: a repeated one (an array here) or `0x10` is a URL to fix
    for (const k of ["verifier", "null_reward"] as const) {
      if (req.query[k] !== undefined && typeof req.query[k] !== "string") throw new HttpError(400, `?${k}= is given more than once (or in brackets); give it once`, k);
    }
    const verifier = req.query.verifier as string | undefined;
    const nullRewardText = req.query.null_reward as string | undefined;
    if (nullRewardText !== undefined && !/^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/.test(nullRewardText)) throw new HttpError(400, "null_reward must be a decimal number, e.g. ?null_reward=0", "null_reward");
    const nullRewardRaw = nullRewardText === undefined ? 0 : Number(nullRewardText);
    if (!Number.isFinite(nullRewardRaw)) throw new HttpError(400, "null_reward must be a number, e.g. ?null_reward=0", "null_reward");
    // a query that does not begin with its prompt is not scored: it comes back invalid (and
    // null_reward, flagged in assay_invalid), never graded with the prompt's text in it
    const unmatched = new Set<number>();
    const items = body.query.map((q, i) => {
      const prompt = body.prompts?.[i];
      const response = responseOf(q, prompt);
      if (response === null) unmatched.add(i);
      const item = itemFor(body.labels?.[i], verifier, prompt, response ?? "", i);
      if (!item.verifier) {
        throw new HttpError(400, `label ${i} names no verifier: send labels as {"verifier": …, "reference": …} or add ?verifier=NAME to the URL`, "labels");
      }
      return item;
    });
    if (verifier !== undefined) {
      const unknown = runtime.registry.unknownVerifier(verifier);
      if (unknown) throw new HttpError(400, `?verifier=: ${unknown}; fix the --remote_rm_url`, "verifier");
    }
    for (const item of items) {
      if (item.verifier !== verifier) {
        const unknown = runtime.registry.unknownVerifier(item.verifier);
        if (unknown) throw new HttpError(400, `label ${item.id}: ${unknown}; fix the dataset's label (or its verifier column)`, "labels");
      }
      // options that do not fit are a column's mistake too: invalid on every row, each reward
      // null_reward (0) with only extra_logs to say so
      const wrong = item.options === undefined ? undefined : runtime.registry.optionsProblem(item.verifier, item.options);
      if (wrong) throw new HttpError(400, `label ${item.id}: ${wrong}; fix the dataset's label`, "labels");
    }
    const release = admit(n, items, OPENRLHF_CALLER);
    try {
      const scored = await scorer.scoreBatch(unmatched.size ? items.filter((x) => !unmatched.has(x.id)) : items, { signal: clientGone(req, res) });
      let k = 0;
      const results: RewardResult[] = unmatched.size
        ? items.map((item) => (unmatched.has(item.id)
          ? { id: item.id, verifier: item.verifier, reward: null, status: "invalid", reason: "the query does not begin with its prompt (left padding, special tokens and spacing aside), so the response cannot be told from the prompt: send the prompt exactly as it was given to the model", details: {}, elapsed_ms: 0 }
          : scored[k++]))
        : scored;
      const rewards = results.map((x) => (x.reward === null ? nullRewardRaw : x.reward));
      // OpenRLHF concatenates each extra_logs entry across requests and splits it per sample
      // (torch.cat(...).split(sizes)), so every entry is a list with one number per query: a
      // scalar such as a fraction would break its concatenation. Its logger averages them.
      const reply: Wire["GetRewardResponse"] = {
        rewards,
        scores: rewards,
        extra_logs: {
          assay_unscored: results.map((x) => (x.reward === null ? 1 : 0)),
          assay_invalid: results.map((x) => (x.status === "invalid" ? 1 : 0)),
        },
        results,
      };
      res.type("application/json").send(openrlhfJson(reply));
    } finally {
      release();
    }
  });
  return r;
}

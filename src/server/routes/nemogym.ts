/**
 * NeMo-Gym's resources-server surface, so NeMo-RL (through NeMo-Gym) can use Assay as an
 * environment's verifier. Request and response shapes follow NeMo-Gym's own pydantic models
 * (NVIDIA-NeMo/Gym, nemo_gym/base_resources_server.py): `BaseVerifyRequest` carries
 * `responses_create_params` and `response` (a Responses-API object) plus the dataset row's own
 * fields; `BaseVerifyResponse` is that request with a float `reward`, and `mask_sample`,
 * `failure_kind`, `failure_reason` for a reward that is not a valid measurement.
 * `ResourcesSeedSessionRequest`/`Response`, `ResourcesCloseSessionRequest`/`Response`, and
 * `AggregateMetricsRequest` -> `AggregateMetrics` (nemo_gym/config_types.py) likewise.
 * Seeding and closing echo the session id; a rollout's tool calls reach one Assay code-interpreter
 * session: `/seed_session` sets the cookie `assay_session` (a token, bound to nothing yet), and
 * `POST /stateful_python_code_exec` (`{"code": ...}`) runs the code in the Python session bound
 * to the token it carries (the cookie, or the seed's `resources_session_id` in the body), made on
 * the first call. NeMo-Gym's agent sends the seed's cookies with every tool call and `/verify`
 * (NVIDIA-NeMo/Gym, responses_api_agents/simple_agent/app.py, `SimpleAgent.run` and
 * `.responses`: each function call is POSTed to `/{name}` with its arguments as the body and the
 * resources server's cookies), so its later calls reach the same interpreter. `/close_session`
 * ends it.
 *
 * A row naming a verifier Assay does not have is answered 400 naming the nearest one, not a
 * masked sample: a misspelt verifier column would otherwise mask every row of the run without
 * a word, while an HTTP error fails the agent's call to /verify, where the person running it sees it.
 */
import { Router } from "express";
import type { RewardResult } from "../../core/types.js";
import { HttpError } from "../errors.js";
import { clientLeft, type Caller, type RouteDeps } from "../http.js";
import { createHash, randomBytes } from "node:crypto";
import { callerOf } from "../auth.js";
import { sessionHttpError, sessionService } from "./sessions.js";

/** The cookie `/seed_session` sets: the rollout's token. */
export const NEMO_GYM_COOKIE = "assay_session";
/** Most rollouts remembered at once (token -> session id); the oldest are forgotten first. */
const MAX_ROLLOUTS = 100_000;

function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const i = part.indexOf("=");
    if (i > 0 && part.slice(0, i).trim() === name) return decodeURIComponent(part.slice(i + 1).trim());
  }
  return undefined;
}

/**
 * Who calls /verify: the resources server NeMo-Gym starts (clients/python/assay_client/nemo_gym.py),
 * which waits FORWARD_TIMEOUT_S (900 s) for Assay and retries a 429 or 503 within it. NeMo-Gym's
 * own client behind it waits without a timeout (nemo_gym/server_utils.py `set_global_aiohttp_client`:
 * `ClientTimeout()`) and turns any error status into a failed rollout (the agent's
 * `raise_for_status`), so a request behind a sandbox backlog is held in the queue for as long as
 * the proxy waits instead of refused at ASSAY_SANDBOX_MAX_WAIT_MS.
 */
export const NEMO_GYM_CALLER: Caller = { name: "the NeMo-Gym resources server (assay_client.nemo_gym)", waitsMs: 900_000 };

/** NeMo-Gym's TASK_INDEX_KEY_NAME (nemo_gym/global_config.py). */
export const TASK_INDEX_KEY = "_ng_task_index";

type Json = Record<string, unknown>;
const isObj = (x: unknown): x is Json => !!x && typeof x === "object" && !Array.isArray(x);

/**
 * The completion: every `output_text` part of the response's `message` items, in order, joined
 * (the OpenAI SDK's `Response.output_text`). Reasoning items and tool calls are not the answer.
 * Linear in the response's size.
 */
export function outputText(response: unknown): string {
  const out: string[] = [];
  const items = isObj(response) && Array.isArray(response.output) ? response.output : [];
  for (const item of items) {
    if (!isObj(item) || item.type !== "message" || !Array.isArray(item.content)) continue;
    for (const part of item.content) if (isObj(part) && part.type === "output_text" && typeof part.text === "string") out.push(part.text);
  }
  return out.join("");
}

/** The question: the last user message of `responses_create_params.input` (a string or messages). */
export function promptText(params: unknown): string | undefined {
  const input = isObj(params) ? params.input : undefined;
  if (typeof input === "string") return input;
  if (!Array.isArray(input)) return undefined;
  for (let i = input.length - 1; i >= 0; i--) {
    const m = input[i];
    if (!isObj(m) || m.role !== "user") continue;
    if (typeof m.content === "string") return m.content;
    if (Array.isArray(m.content)) {
      return m.content.map((p) => (isObj(p) && typeof p.text === "string" ? p.text : "")).join("");
    }
  }
  return undefined;
}

/**
 * NeMo-Gym's fields for a reward that is not a valid measurement of the policy. The mask goes
 * where each reader looks: NeMo-RL (NVIDIA-NeMo/RL, since 4372db1, after v0.7.0:
 * nemo_rl/experience/rollouts.py `_extract_mask_sample_flags`, and rollout_manager.py
 * `_result_to_completion`) reads `full_result["instance_config"]["mask_sample"]`, where
 * `full_result` is this reply; NeMo-Gym's own servers send, and /aggregate_metrics here reads,
 * the top-level `mask_sample`, kept for them (NeMo-RL up to v0.7.0 reads neither). A row's own
 * `instance_config` is kept, with `mask_sample` set in it.
 */
function verdict(r: RewardResult, instanceConfig?: unknown) {
  if (r.reward !== null) return { reward: r.reward };
  return {
    reward: 0.0,
    mask_sample: true,
    instance_config: { ...(isObj(instanceConfig) ? instanceConfig : {}), mask_sample: true },
    failure_kind: r.status === "invalid" ? "assay:invalid_item" : "assay:unscored",
    failure_reason: r.reason,
  };
}

function stats(rewards: number[]) {
  const n = rewards.length;
  if (!n) return { count: 0 };
  let sum = 0, min = Infinity, max = -Infinity;
  for (const x of rewards) {
    sum += x;
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const mean = sum / n;
  let sq = 0;
  for (const x of rewards) sq += (x - mean) ** 2;
  return { count: n, "mean/reward": mean, "std/reward": n > 1 ? Math.sqrt(sq / (n - 1)) : 0, "min/reward": min, "max/reward": max };
}

/** AggregateMetrics from verify responses; masked samples are left out of every score. */
export function aggregate(responses: unknown[]) {
  const byTask = new Map<unknown, number[]>();
  const all: number[] = [];
  let masked = 0;
  for (const r of responses) {
    if (!isObj(r)) continue;
    if (r.mask_sample === true) {
      masked++;
      continue;
    }
    if (typeof r.reward !== "number" || !Number.isFinite(r.reward)) continue;
    all.push(r.reward);
    const task = r[TASK_INDEX_KEY] ?? null;
    let list = byTask.get(task);
    if (!list) byTask.set(task, (list = []));
    list.push(r.reward);
  }
  const agent = { ...stats(all), "assay/masked": masked, "assay/masked_fraction": responses.length ? masked / responses.length : 0 };
  return {
    group_level_metrics: [...byTask.entries()].map(([task, rs]) => ({ [TASK_INDEX_KEY]: task, ...stats(rs) })),
    agent_metrics: agent,
    key_metrics: "mean/reward" in agent ? { "mean/reward": agent["mean/reward"] } : {},
  };
}

export function nemoGymRoutes({ runtime, body: opening, admit }: RouteDeps): Router {
  const { scorer } = runtime;
  const r = Router();

  /** Rollout token -> its Assay session id (once the first tool call made it). */
  const rollouts = new Map<string, string | null>();
  const remember = (token: string, id: string | null) => {
    rollouts.delete(token);
    rollouts.set(token, id);
    if (rollouts.size > MAX_ROLLOUTS) rollouts.delete(rollouts.keys().next().value!);
  };
  /**
   * A rollout's key in `rollouts`: its token under the caller's API key, so that another key
   * that learns (or guesses) a resources_session_id reaches none of its sessions.
   */
  const keyOf = (req: import("express").Request, token: string) => `${callerOf(req, runtime.config.apiKeys) ?? ""} ${token}`;
  const tokenOf = (req: import("express").Request): string | undefined => {
    const b = req.body as Json | undefined;
    const token = cookieOf(req.headers.cookie, NEMO_GYM_COOKIE) ?? (b && typeof b.resources_session_id === "string" ? `rs:${b.resources_session_id}` : undefined);
    return token === undefined ? undefined : keyOf(req, token);
  };

  r.post("/seed_session", opening("NemoGymSeedSessionRequest"), (req, res) => {
    const b = req.body as Json;
    const token = typeof b.resources_session_id === "string" ? `rs:${b.resources_session_id}` : `ng:${randomBytes(12).toString("hex")}`;
    remember(keyOf(req, token), null);
    res.cookie(NEMO_GYM_COOKIE, token, { httpOnly: true, path: "/", sameSite: "strict" });
    res.json(typeof b.resources_session_id === "string" ? { resources_session_id: b.resources_session_id } : {});
  });

  r.post("/stateful_python_code_exec", opening("NemoGymPythonExec"), async (req, res) => {
    const token = tokenOf(req);
    if (!token || !rollouts.has(token)) throw new HttpError(400, `no seeded session: call /seed_session first and send back its \`${NEMO_GYM_COOKIE}\` cookie (or its resources_session_id)`);
    const svc = await sessionService(runtime);
    const release = admit(1);
    try {
      let id = rollouts.get(token) ?? null;
      if (!id) {
        try {
          // the label names the rollout by a digest: the token itself is the rollout's secret
          const label = createHash("sha256").update(token).digest("hex").slice(0, 16);
          id = (await svc.create({ language: "python", labels: { nemo_gym: label }, owner: callerOf(req, runtime.config.apiKeys) })).id;
        } catch (e) {
          throw sessionHttpError(e, runtime.config.retryAfterS);
        }
        remember(token, id);
      }
      const x = await svc.exec(id, { code: String((req.body as Json).code) });
      res.json({ status: x.status, stdout: x.stdout, stderr: x.stderr, value: x.value, error: x.error, session_id: id });
    } finally {
      release();
    }
  });

  r.post("/close_session", opening("NemoGymCloseSessionRequest"), async (req, res) => {
    const token = tokenOf(req);
    const id = token ? rollouts.get(token) : undefined;
    if (token) rollouts.delete(token);
    if (id) await (await runtime.services.sessions()).sessions.close(id).catch(() => {});
    res.json({ resources_session_id: (req.body as Json).resources_session_id });
  });

  r.post("/verify", opening("NemoGymVerifyRequest"), async (req, res) => {
    const b = req.body as Json;
    const item = {
      verifier: typeof b.verifier === "string" ? b.verifier : "",
      prompt: promptText(b.responses_create_params),
      response: outputText(b.response),
      reference: b.reference,
      options: isObj(b.options) ? b.options : undefined,
    };
    const unknown = item.verifier ? runtime.registry.unknownVerifier(item.verifier) : undefined;
    if (unknown) throw new HttpError(400, `${unknown}; fix the dataset's verifier column`, "verifier");
    const release = admit(1, [item], NEMO_GYM_CALLER);
    try {
      const result = await scorer.score(item, { signal: clientLeft(req, res) });
      res.json({ ...b, ...verdict(result, b.instance_config), assay: result });
    } finally {
      release();
    }
  });

  r.post("/aggregate_metrics", opening("NemoGymAggregateMetricsRequest"), (req, res) => {
    res.json(aggregate((req.body as { verify_responses: unknown[] }).verify_responses));
  });
  return r;
}

/** The Assay API as the app calls it: JSON in and out, the API key from sessionStorage as a bearer token. */

export interface Criterion {
  id: string;
  description: string;
  weight: number;
  kind?: "score" | "veto";
}

export interface Rubric {
  id: string;
  version: number;
  title: string;
  description?: string;
  criteria: Criterion[];
  created_at: string;
}

export interface RewardItem {
  id?: string;
  verifier: string;
  prompt?: string;
  response: string;
  reference?: unknown;
  options?: Record<string, unknown>;
}

export interface RewardResult {
  id?: string | number | null;
  verifier: string;
  reward: number | null;
  status: "ok" | "error" | "invalid";
  reason: string;
  details: Record<string, unknown>;
  elapsed_ms: number;
}

export interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  [k: string]: unknown;
}

export interface VerifierInfo {
  name: string;
  description: string;
  reference_schema: JsonSchema;
  options_schema: JsonSchema;
}

/** A failed call: the server's message and, for a 400, the field it names (dotted: "criteria.0.weight"). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

const KEY = "assay.apiKey";

export const apiKey = {
  get: (): string => sessionStorage.getItem(KEY) ?? "",
  set(key: string) {
    if (key) sessionStorage.setItem(KEY, key);
    else sessionStorage.removeItem(KEY);
  },
};

export async function api<T>(method: "GET" | "POST" | "PUT" | "DELETE", path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...extra };
  if (body !== undefined) headers["content-type"] = "application/json";
  const key = apiKey.get();
  if (key) headers.authorization = `Bearer ${key}`;
  let res: Response;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, `cannot reach the server: ${(err as Error).message}`);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let data: any;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!res.ok) {
    const message = typeof data?.error === "string" ? data.error : `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, message, typeof data?.field === "string" ? data.field : undefined);
  }
  return data as T;
}

export const rubricsApi = {
  list: () => api<{ rubrics: Rubric[] }>("GET", "/rubrics").then((r) => r.rubrics),
  get: (id: string) => api<Rubric>("GET", `/rubrics/${encodeURIComponent(id)}`),
  create: (input: RubricInput) => api<Rubric>("POST", "/rubrics", input),
  /** Saves over `from` (the version the editor loaded) only: a 412 ApiError when someone saved since. */
  save: (id: string, input: RubricInput, from: number) => api<Rubric>("PUT", `/rubrics/${encodeURIComponent(id)}`, input, { "if-match": `"${from}"` }),
  remove: (id: string) => api<void>("DELETE", `/rubrics/${encodeURIComponent(id)}`),
  versions: (id: string) => api<{ versions: Rubric[] }>("GET", `/rubrics/${encodeURIComponent(id)}/versions`).then((r) => r.versions),
  exportOne: (id: string) => api<unknown>("GET", `/rubrics/${encodeURIComponent(id)}/export`),
  importDoc: (doc: unknown) => api<{ imported: unknown }>("POST", "/rubrics/import", doc),
};

export interface RubricInput {
  id?: string;
  title: string;
  description?: string;
  criteria: Criterion[];
}

export const scoreBatch = (items: RewardItem[], deadline_ms?: number) =>
  api<{ results: RewardResult[] }>("POST", "/reward/batch", deadline_ms ? { items, deadline_ms } : { items }).then((r) => r.results);

export const listVerifiers = () => api<{ verifiers: VerifierInfo[] }>("GET", "/verifiers").then((r) => r.verifiers);

/** Errors by field, for showing each next to its input. "" holds what names no field. */
export type FieldErrors = Record<string, string>;

export function errorsOf(err: unknown, prefix = ""): FieldErrors {
  if (err instanceof ApiError) {
    const f = err.field && err.field.startsWith(prefix) ? err.field.slice(prefix.length) : "";
    return { [f]: err.message };
  }
  return { "": err instanceof Error ? err.message : String(err) };
}

/**
 * The one seam between the service and its verifiers.
 *
 * A verifier is a name, one TypeBox declaration for its `reference` and one for its `options`,
 * and an async `verify`. Each declaration is at once the JSON Schema the registry validates with
 * (and GET /verifiers publishes), the TypeScript type `verify` sees, and the defaults: the
 * registry fills every option's `default` before `verify` runs, so a verifier never re-checks a
 * shape or writes `?? 4000`. A verifier knows nothing about HTTP.
 *
 * Declare an option that has a default WITHOUT `Type.Optional` (verify always sees a value; the
 * published schema does not list it as required) and one without a default WITH `Type.Optional`.
 */
import type { Static, TObject, TSchema } from "@sinclair/typebox";
import type { Logger } from "pino";
import type { Outcome, RewardResult } from "./types.js";
import type { Services } from "./services.js";

/** The item as `verify` sees it: shape-checked, reference validated, options defaulted. */
export interface VerifyItem<Ref = unknown, Opt = Record<string, unknown>> {
  id?: string | number | null;
  verifier: string;
  prompt?: string;
  response: string;
  reference: Ref;
  options: Opt;
}

export interface VerifyContext {
  /** Absolute deadline, epoch milliseconds. */
  deadline: number;
  /** Aborted when the deadline passes or the client goes away. */
  signal: AbortSignal;
  log: Logger;
  services: Services;
  /**
   * Scores another item through the same registry and checks, with this item's abort signal
   * (combinations, presets). The part gets the deadline it would get alone, and this item's
   * clock stops while it runs; a deadline the caller asked for bounds it instead (what is left
   * of it). Never rejects: a part that is invalid,
   * errs or runs out of time comes back as a RewardResult saying so. Nested calls past
   * ASSAY_COMPOSE_MAX_DEPTH come back invalid. The scorer always gives it; a context built by
   * hand (a test calling verify directly) may not.
   */
  scorePart?(part: PartItem): Promise<RewardResult>;
  /**
   * Waits for `wait` without its time counting against the deadline: the clock stops while any
   * such wait is pending (a run queued for a sandbox slot, a cold pool starting), so an item's
   * deadline covers its own work, not its place in a queue shared with other items or the host's
   * load. `counted(result)`: the ms of the wait that were the item's own work after all (a
   * sandbox run's wall time less its wait for a CPU), charged to the deadline when it resolves
   * (overlapping waits' own time once). The scorer always gives it; a context built by hand may not.
   */
  unclocked?<T>(wait: Promise<T>, counted?: (v: T) => number): Promise<T>;
}

/** An item scored as part of another: the wire item's fields, unvalidated. */
export interface PartItem {
  verifier: string;
  response: string;
  prompt?: string;
  reference?: unknown;
  options?: Record<string, unknown>;
  deadline_ms?: number;
}

export interface VerifierInitContext {
  log: Logger;
  services: Services;
}

export interface Verifier<R extends TSchema = TSchema, O extends TObject = TObject> {
  name: string;
  /** One line for GET /verifiers. */
  description: string;
  /** What `reference` may be. `Type.Unknown()` accepts anything (or nothing). */
  reference: R;
  /**
   * When true, the verifier also answers every name `<name>:<rest>` (e.g. `preset:r1-math`,
   * `custom:my-check`) that is not itself registered; it reads `<rest>` from `item.verifier`.
   * This is how stored, user-made verifiers are resolved without the HTTP layer knowing them.
   */
  namespace?: boolean;
  /** The options object: properties with a `default` are filled in before `verify`. */
  options: O;
  /** Optional start-up work (worker pools, warm caches). Called once before the first verify. */
  init?(ctx: VerifierInitContext): Promise<void>;
  /** Optional shutdown (close pools). */
  close?(): Promise<void>;
  /**
   * Optional: the most time this item can take by its own limits (tests x per-test limit +
   * compile, say), ms. The scorer extends the item's deadline to it, up to ASSAY_MAX_DEADLINE_MS,
   * so the verifier's limits end a slow program (reward 0) before the deadline could end the
   * item (reward null). A verifier whose budget passes the cap must shrink its limits to fit.
   */
  budgetMs?(item: VerifyItem<Static<R>, Static<O>>): number;
  /**
   * Optional: its items run programs in the shared sandbox (services.sandbox). Admission then
   * refuses a request with 429 when the sandbox's backlog is longer than
   * ASSAY_SANDBOX_MAX_WAIT_MS, rather than queueing it behind work it would wait on.
   */
  usesSandbox?: boolean;
  /**
   * Optional: its items run queries on the shared SQL engines (services.sql). Admission then
   * refuses a request with 429 when the SQL backlog is longer than ASSAY_SQL_MAX_WAIT_MS.
   */
  usesSql?: boolean;
  /**
   * Optional, for verifiers that score other verifiers' items (combine, calibrated): the part
   * items in this item's raw, unvalidated `reference` (only `verifier` is read), so admission sees
   * a sandboxed (or SQL) part inside a composed item. Must not throw on any input.
   */
  partsOf?(reference: unknown): readonly unknown[];
  /**
   * Optional, for namespace verifiers whose definitions are stored (preset:<name>): why the
   * definition `content` stored as `name` could never score an item (its field and a reason), or
   * undefined. The store's routes ask it before saving, so a typo is a 400 at save, not every
   * item of a run coming back invalid. `known` answers why a verifier name names nothing here,
   * and why options do not fit a named verifier.
   */
  checkStored?(name: string, content: unknown, known: KnownVerifiers): { field: string; message: string } | undefined;
  /**
   * Scores one checked item. An `async` function is the usual form; a verifier that can answer
   * without waiting may return the Outcome itself (exact on a short answer), which the scorer
   * uses at once, without a promise or a deadline entry for the item.
   */
  verify(item: VerifyItem<Static<R>, Static<O>>, ctx: VerifyContext): Outcome | Promise<Outcome>;
}

/** What a verifier may ask of the registry about other verifiers (checkStored). */
export interface KnownVerifiers {
  /** Why `name` names no verifier here, or undefined when it names one. */
  unknownVerifier(name: string): string | undefined;
  /** Why `options` do not fit verifier `name`'s options, or undefined when they do (or it names none). */
  optionsProblem(name: string, options: unknown): string | undefined;
}

/** Identity at run time; at compile time it infers `verify`'s item type from the declarations. */
export function defineVerifier<R extends TSchema, O extends TObject>(v: Verifier<R, O>): Verifier<R, O> {
  return v;
}

/** Any verifier, whatever its declarations (what the registry holds). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyVerifier = Verifier<any, any>;

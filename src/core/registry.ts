/**
 * Holds the verifiers, validates each item's reference and options against their declarations,
 * and fills option defaults, so `verify` sees a checked, complete item.
 */
import type { ValidateFunction } from "ajv";
import type { RewardItem } from "./types.js";
import type { AnyVerifier, VerifierInitContext, VerifyItem } from "./verifier.js";
import { newAjv, describeErrors, publicSchema, type JSONSchema } from "./schema.js";
import { didYouMean } from "./nearest.js";

interface Entry {
  verifier: AnyVerifier;
  validateReference: ValidateFunction;
  /** Validates and fills defaults in place. */
  validateOptions: ValidateFunction;
  /** Options whose declaration gives null a meaning of its own (format's answer_tag): kept. */
  nullMeans: ReadonlySet<string>;
  /**
   * The options an item that sets none gets (its declaration's defaults), when every one is a
   * primitive: such an item gets a copy of these, without running the validator. Undefined when
   * no options is not valid, or a default is an object (a copy would share it).
   */
  defaults?: Readonly<Record<string, unknown>>;
  info: VerifierInfo;
}

export interface VerifierInfo {
  name: string;
  description: string;
  reference_schema: JSONSchema;
  options_schema: JSONSchema;
}

const NAME = /^[a-z][a-z0-9_.-]*$/;
/** The most keys an item's options may have (each verifier declares a few dozen at most). */
const MAX_OPTION_KEYS = 256;

/**
 * An item's options as its verifier gets them (a copy, defaults filled in), or why they do not
 * fit its declaration. An option set to null means "the default": HF datasets fills every key of
 * a struct column in every row, None where a row did not set it, so null must not make the item
 * invalid. (An option whose declaration accepts null, such as format's answer_tag, keeps its null.)
 */
function checkedOptions(entry: Entry, given: Record<string, unknown> | undefined): Record<string, unknown> | string {
  // No verifier declares this many; copying and checking 400K keys held the event loop ~1.7 s.
  const keys = given ? Object.keys(given).length : 0;
  if (keys > MAX_OPTION_KEYS) return `options has ${keys} keys; no verifier declares more than ${MAX_OPTION_KEYS}`;
  const options: Record<string, unknown> = {};
  // defined, not assigned: `__proto__` would set the copy's prototype (its options unchecked)
  if (given) for (const [k, v] of Object.entries(given)) if (v !== null || entry.nullMeans.has(k)) Object.defineProperty(options, k, { value: v, enumerable: true, writable: true, configurable: true });
  return entry.validateOptions(options) ? options : describeErrors(entry.validateOptions.errors, "options");
}

export class Registry {
  private readonly entries = new Map<string, Entry>();
  private readonly ajv = newAjv();
  private readonly ajvDefaults = newAjv({ useDefaults: true });
  private readonly initialised = new Map<string, Promise<void>>();
  private readonly ready = new Set<string>();

  register(verifier: AnyVerifier): this {
    if (!NAME.test(verifier.name)) {
      throw new Error(`verifier name ${JSON.stringify(verifier.name)} must be lower-case letters, digits, _ . -`);
    }
    if (this.entries.has(verifier.name)) throw new Error(`verifier ${verifier.name} registered twice`);
    if ((verifier.options as JSONSchema)?.type !== "object") {
      throw new Error(`verifier ${verifier.name}: options must be declared with Type.Object(...)`);
    }
    const validateOptions = this.ajvDefaults.compile(verifier.options);
    const defaults: Record<string, unknown> = {};
    const plain = validateOptions(defaults) && Object.values(defaults).every((v) => v === null || typeof v !== "object");
    this.entries.set(verifier.name, {
      verifier,
      validateReference: this.ajv.compile(verifier.reference),
      validateOptions,
      defaults: plain ? Object.freeze(defaults) : undefined,
      nullMeans: this.nullAccepting(verifier.options as JSONSchema),
      info: {
        name: verifier.name,
        description: verifier.description,
        reference_schema: publicSchema(verifier.reference),
        options_schema: publicSchema(verifier.options),
      },
    });
    return this;
  }

  private nullAccepting(options: JSONSchema): Set<string> {
    const props = (options.properties ?? {}) as Record<string, JSONSchema>;
    return new Set(Object.keys(props).filter((k) => this.ajv.validate(props[k]!, null)));
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()].sort();
  }

  list(): VerifierInfo[] {
    return this.names().map((name) => this.entries.get(name)!.info);
  }

  /** The verifier that answers `name` (a `ns:rest` name included), without checking an item. */
  verifierOf(name: string): AnyVerifier | undefined {
    return (this.entries.get(name) ?? this.namespaceOf(name))?.verifier;
  }

  /**
   * Looks up the item's verifier, checks reference and options, and fills option defaults.
   * Returns the verifier with the item as `verify` sees it, or a reason the item is invalid.
   */
  resolve(item: RewardItem): { verifier: AnyVerifier; item: VerifyItem } | { invalid: string; field: string } {
    const entry = this.entries.get(item.verifier) ?? this.namespaceOf(item.verifier);
    if (!entry) return { invalid: this.unknownVerifier(item.verifier)!, field: "verifier" };
    let reference = item.reference;
    if (!entry.validateReference(reference)) {
      const errors = entry.validateReference.errors;
      // A dataset column of numbers (72, numpy's int64 72) where the verifier declares a string:
      // the number's decimal string is what the column meant. Tried only after the item as sent
      // failed, so a verifier that declares numbers still gets them as numbers.
      const asText = numbersAsStrings(reference);
      if (asText === reference || !entry.validateReference(asText)) {
        return { invalid: describeErrors(errors, "reference"), field: "reference" };
      }
      reference = asText;
    }
    // A copy, so the defaults filled in never show through to the caller's object (checkedOptions).
    if (item.options === undefined && entry.defaults) {
      return { verifier: entry.verifier, item: { id: item.id, verifier: item.verifier, prompt: item.prompt, response: item.response, reference, options: { ...entry.defaults } } };
    }
    const options = checkedOptions(entry, item.options);
    if (typeof options === "string") return { invalid: options, field: "options" };
    return { verifier: entry.verifier, item: { id: item.id, verifier: item.verifier, prompt: item.prompt, response: item.response, reference, options } };
  }

  /** Why `options` do not fit verifier `name`'s declared options (as resolve reads them), or undefined. */
  optionsProblem(name: string, options: unknown): string | undefined {
    const entry = this.entries.get(name) ?? this.namespaceOf(name);
    if (!entry || options === undefined) return undefined;
    if (!options || typeof options !== "object" || Array.isArray(options)) return "options must be an object";
    const checked = checkedOptions(entry, options as Record<string, unknown>);
    return typeof checked === "string" ? checked : undefined;
  }

  /**
   * Why `content`, stored under the namespace verifier `namespace` as `name` (a preset), could
   * never score an item (the verifier's checkStored), or undefined.
   */
  storedProblem(namespace: string, name: string, content: unknown): { field: string; message: string } | undefined {
    return this.entries.get(namespace)?.verifier.checkStored?.(name, content, this);
  }

  /**
   * Why `name` names no verifier here ("unknown verifier "mathh"; did you mean math? known: …"),
   * or undefined when it names one (a `ns:rest` name of a namespace verifier included).
   */
  unknownVerifier(name: string): string | undefined {
    if (this.verifierOf(name)) return undefined;
    const shown = JSON.stringify(name.length > 64 ? name.slice(0, 64) + "…" : name);
    return `unknown verifier ${shown}${didYouMean(name, this.names())}; known: ${this.names().join(", ")}`;
  }

  /** `ns:rest` names go to verifier `ns` when it declares `namespace: true`. */
  private namespaceOf(name: string): Entry | undefined {
    const colon = name.indexOf(":");
    if (colon <= 0) return undefined;
    const entry = this.entries.get(name.slice(0, colon));
    return entry?.verifier.namespace ? entry : undefined;
  }

  /**
   * Runs a verifier's init once. Returns a promise while init is pending (or failed), and
   * undefined once it has succeeded, so the hot path awaits nothing. A failed init is retried
   * by the next item.
   */
  ensureInit(verifier: AnyVerifier, ctx: VerifierInitContext): Promise<void> | undefined {
    if (!verifier.init || this.ready.has(verifier.name)) return undefined;
    let p = this.initialised.get(verifier.name);
    if (!p) {
      p = verifier.init(ctx).then(
        () => void this.ready.add(verifier.name),
        (err) => {
          this.initialised.delete(verifier.name);
          throw err;
        },
      );
      this.initialised.set(verifier.name, p);
    }
    return p;
  }

  /**
   * Starts every verifier's init now instead of on its first item (a worker pool takes a second
   * or more to come up): one promise per verifier that has an init, by name. A failure is logged
   * and retried by the first item, as ensureInit does.
   */
  initAll(ctx: VerifierInitContext): { name: string; done: Promise<void> }[] {
    return [...this.entries.values()].filter(({ verifier }) => verifier.init).map(({ verifier }) => ({
      name: verifier.name,
      done: Promise.resolve(this.ensureInit(verifier, ctx)).catch((err) => {
        ctx.log.warn({ err, verifier: verifier.name }, `verifier ${verifier.name}: init failed; the first item will retry it`);
        throw err;
      }),
    }));
  }

  /** initAll, waited for; never rejects (failures are logged). */
  async warmUp(ctx: VerifierInitContext): Promise<void> {
    await Promise.allSettled(this.initAll(ctx).map((x) => x.done));
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.entries.values()].map((e) => e.verifier.close?.()));
  }
}

/**
 * `x` with every finite number replaced by its decimal string (`72` -> "72"), in arrays and
 * objects too; `x` itself (the same object) when it holds no number. Bounded by the input's size
 * (the request's JSON depth is capped before it gets here).
 */
export function numbersAsStrings(x: unknown): unknown {
  if (typeof x === "number") return Number.isFinite(x) ? String(x) : x;
  if (Array.isArray(x)) {
    let changed = false;
    const out = x.map((v) => {
      const w = numbersAsStrings(v);
      if (w !== v) changed = true;
      return w;
    });
    return changed ? out : x;
  }
  if (x && typeof x === "object") {
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(x)) {
      const w = numbersAsStrings(v);
      if (w !== v) changed = true;
      out[k] = w;
    }
    return changed ? out : x;
  }
  return x;
}

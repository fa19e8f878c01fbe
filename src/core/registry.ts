/** Holds the verifiers and validates each item's reference/options against their schemas. */
import type { ValidateFunction } from "ajv";
import type { JSONSchema, RewardItem, Verifier, VerifierInitContext } from "./types.js";
import { newAjv, describeErrors } from "./schema.js";

interface Entry {
  verifier: Verifier;
  validateReference: ValidateFunction;
  validateOptions: ValidateFunction;
}

export interface VerifierInfo {
  name: string;
  description: string;
  reference_schema: JSONSchema;
  options_schema: JSONSchema;
}

export class Registry {
  private readonly entries = new Map<string, Entry>();
  private readonly ajv = newAjv();
  private readonly initialised = new Map<string, Promise<void>>();
  private readonly ready = new Set<string>();

  register(verifier: Verifier): this {
    if (!/^[a-z][a-z0-9_.-]*$/.test(verifier.name)) {
      throw new Error(`verifier name ${JSON.stringify(verifier.name)} must be lower-case letters, digits, _ . -`);
    }
    if (this.entries.has(verifier.name)) throw new Error(`verifier ${verifier.name} registered twice`);
    this.entries.set(verifier.name, {
      verifier,
      validateReference: this.ajv.compile(verifier.referenceSchema),
      validateOptions: this.ajv.compile({ type: "object", ...verifier.optionsSchema }),
    });
    return this;
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  names(): string[] {
    return [...this.entries.keys()].sort();
  }

  list(): VerifierInfo[] {
    return this.names().map((name) => {
      const { verifier: v } = this.entries.get(name)!;
      return {
        name: v.name,
        description: v.description,
        reference_schema: v.referenceSchema,
        options_schema: { type: "object", ...v.optionsSchema },
      };
    });
  }

  /**
   * Looks up the item's verifier and checks reference and options.
   * Returns the verifier, or a reason the item is invalid (naming the field).
   */
  resolve(item: RewardItem): { verifier: Verifier } | { invalid: string; field: string } {
    const entry = this.entries.get(item.verifier);
    if (!entry) {
      return { invalid: `unknown verifier ${JSON.stringify(item.verifier)}; known: ${this.names().join(", ")}`, field: "verifier" };
    }
    if (!entry.validateReference(item.reference)) {
      return { invalid: describeErrors(entry.validateReference.errors, "reference"), field: "reference" };
    }
    if (!entry.validateOptions(item.options ?? {})) {
      return { invalid: describeErrors(entry.validateOptions.errors, "options"), field: "options" };
    }
    return { verifier: entry.verifier };
  }

  /**
   * Runs a verifier's init once. Returns a promise while init is pending (or failed), and
   * undefined once it has succeeded, so the hot path awaits nothing. A failed init is retried
   * by the next item.
   */
  ensureInit(verifier: Verifier, ctx: VerifierInitContext): Promise<void> | undefined {
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
   * or more to come up). Failures are logged and retried by the first item, as ensureInit does.
   */
  async warmUp(ctx: VerifierInitContext): Promise<void> {
    await Promise.all(
      [...this.entries.values()].map(async ({ verifier }) => {
        try {
          await this.ensureInit(verifier, ctx);
        } catch (err) {
          ctx.log.warn({ err, verifier: verifier.name }, `verifier ${verifier.name}: init failed; the first item will retry it`);
        }
      }),
    );
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.entries.values()].map((e) => e.verifier.close?.()));
  }
}

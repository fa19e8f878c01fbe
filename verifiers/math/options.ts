/** The math verifier's options, declared once: JSON schema, TypeScript type and defaults. */
import { Type, type Static } from "@sinclair/typebox";

const Source = Type.Union([Type.Literal("boxed"), Type.Literal("phrase"), Type.Literal("latex"), Type.Literal("plain")]);

export const MathOptionsSchema = Type.Object(
  {
    precision: Type.Optional(Type.Integer({ minimum: 0, maximum: 15, description: "decimal places to which decimal answers are compared; unset compares exactly" })),
    extract: Type.Array(Source, {
      minItems: 1,
      uniqueItems: true,
      default: ["boxed", "phrase", "latex", "plain"],
      description: "where to look for the answer, in order",
    }),
    strip_think: Type.Boolean({ default: true, description: "ignore everything before the last </think>" }),
    allow_set_relation: Type.Boolean({ default: false, description: "a reference interval (x ∈ [a, b]) also accepts an inequality (a ≤ x ≤ b)" }),
    seed: Type.Integer({ minimum: 0, maximum: 4294967295, default: 1, description: "seed of the numeric test's random points" }),
    decimal_comma: Type.Boolean({ default: false, description: "a lone plain number with one comma (1,22) is a decimal; otherwise 5,1 is the list 5, 1" }),
    appeal: Type.Optional(Type.Boolean({ description: "ask the LLM judge about a rejection the rules could not prove (unset: ASSAY_MATH_APPEAL)" })),
  },
  { additionalProperties: false },
);

/** Options as grading sees them: every default filled in. */
export type MathOptions = Static<typeof MathOptionsSchema>;

/** The options the schema gives a default, and that default (read from the schema: its one source). */
const DEFAULTS: [key: string, value: unknown][] = Object.entries(MathOptionsSchema.properties)
  .filter(([, s]) => "default" in s)
  .map(([k, s]) => [k, (s as { default: unknown }).default]);

/**
 * Fills the schema's defaults into options given directly to grade() (tests, the conformance
 * runner, the benches); items through the registry arrive filled already, and filling twice
 * changes nothing. It runs once an item, so it does not call TypeBox's `Value.Default`, which
 * walks the schema (its union of literals included) and cost ~22 µs a call, a third of an
 * ordinary answer's grading: options filled already are returned as they are, others get the
 * missing defaults (arrays copied), as `Value.Default` would fill them (options.test.ts checks
 * the two agree).
 */
export function resolveOptions(o: Partial<MathOptions> = {}): MathOptions {
  const given = o as Record<string, unknown>;
  if (DEFAULTS.every(([k]) => given[k] !== undefined)) return o as MathOptions;
  const out: Record<string, unknown> = {};
  for (const [k, d] of DEFAULTS) out[k] = Array.isArray(d) ? [...d] : d;
  for (const k of Object.keys(given)) if (given[k] !== undefined || !(k in out)) out[k] = given[k];
  return out as MathOptions;
}

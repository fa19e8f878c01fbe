import type { Verifier } from "../../src/core/types.js";
export const exact: Verifier<string | string[], { case_sensitive?: boolean }> = {
  name: "exact",
  description: "placeholder",
  referenceSchema: { type: "string" },
  optionsSchema: {},
  async verify(item) {
    return { reward: item.response === item.reference ? 1 : 0, reason: "x" };
  },
};

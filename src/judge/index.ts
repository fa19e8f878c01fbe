/** The shared LLM judge: `new Judge(settings, {cache}).ask(question) -> Verdict`. See README.md. */
export { Judge, JudgeContextExceeded, headOf, retryAfter, wellFormed, type JudgeDeps } from "./client.js";
export { parseJsonReply } from "./parse.js";
export { judgeMetrics, type JudgeMetrics } from "./metrics.js";
export * from "./types.js";

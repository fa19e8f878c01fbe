/** Judge verdicts by (model, prompt template version, inputs): re-scoring the same item costs no call. */
import type { Sql } from "./sql.js";

export interface CachedVerdict {
  value: unknown;
  usage: { input_tokens: number; output_tokens: number };
  mode: string;
}

export class JudgeCache {
  constructor(private readonly db: Sql) {}

  async get(key: string): Promise<CachedVerdict | undefined> {
    const row = await this.db.get<{ verdict: string }>("SELECT verdict FROM judge_cache WHERE key = ?", [key]);
    return row ? (JSON.parse(row.verdict) as CachedVerdict) : undefined;
  }

  async put(key: string, model: string, template: string, verdict: CachedVerdict): Promise<void> {
    await this.db.run(
      `INSERT INTO judge_cache (key, model, template, verdict, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET model = excluded.model, template = excluded.template, verdict = excluded.verdict, created_at = excluded.created_at`,
      [key, model, template, JSON.stringify(verdict), new Date().toISOString()],
    );
  }

  async size(): Promise<number> {
    return (await this.db.get<{ n: number }>("SELECT count(*) AS n FROM judge_cache"))!.n;
  }
}

/** HTTP errors with a JSON body `{error, field?}` that says what to change. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
  body(): { error: string; field?: string } {
    return this.field ? { error: this.message, field: this.field } : { error: this.message };
  }
}

/** Pulls the field name out of a contract message like "at /items/3/response: must be string". */
export function fieldOf(reason: string): string | undefined {
  const m = /^at (\S+):/.exec(reason);
  return m ? m[1].replace(/^\//, "").replaceAll("/", ".") || undefined : undefined;
}

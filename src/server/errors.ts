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
  /** The JSON response body. (Not named `body`: body-parser assigns that on errors it wraps.) */
  payload(): { error: string; field?: string } {
    return this.field ? { error: this.message, field: this.field } : { error: this.message };
  }
}

export { fieldOf } from "../core/schema.js";

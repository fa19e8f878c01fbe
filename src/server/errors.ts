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
  payload(): object {
    return this.field ? { error: this.message, field: this.field } : { error: this.message };
  }
}

/**
 * Any error a route or its opening raised, as the HttpError the client gets: body-parser's
 * typed errors say what to change, another 4xx keeps its status, anything else is a 500 that
 * names the request id.
 */
export function toHttpError(err: unknown, maxBodyBytes: number): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { type?: string; status?: number; message?: string; expose?: boolean };
  switch (e?.type) {
    case "entity.too.large":
      return new HttpError(413, `request body is over the limit of ${maxBodyBytes} bytes; send smaller batches (or raise ASSAY_MAX_BODY)`);
    case "entity.parse.failed":
      return new HttpError(400, `request body is not valid JSON: ${e.message}`);
    case "encoding.unsupported":
    case "charset.unsupported":
      return new HttpError(415, `unsupported body encoding: ${e.message}; send UTF-8 JSON`);
    case "request.aborted":
      return new HttpError(400, "request aborted by the client");
  }
  if (typeof e?.status === "number" && e.status >= 400 && e.status < 500) {
    return new HttpError(e.status, e.expose && e.message ? e.message : "bad request");
  }
  return new HttpError(500, "internal error; the request id in X-Request-Id finds it in the server log");
}

export { fieldOf } from "../core/schema.js";

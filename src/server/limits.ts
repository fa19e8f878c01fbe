/**
 * The global in-flight cap. Work over the cap is refused at once with 429 and Retry-After, so
 * the server never holds a queue that grows without end; the client backs off and retries.
 */
import { HttpError } from "./errors.js";

export class InflightLimiter {
  inflight = 0;
  constructor(readonly max: number) {}

  /** Reserves `n` items or throws 429. Returns the release function (idempotent). */
  acquire(n: number, retryAfterS: number): () => void {
    if (n > this.max) {
      throw new HttpError(413, `${n} items can never fit under the in-flight limit of ${this.max}; split the batch (or raise ASSAY_MAX_INFLIGHT)`, "items");
    }
    if (this.inflight + n > this.max) {
      throw new HttpError(
        429,
        `server busy: ${this.inflight} items in flight, ${n} more would pass the limit of ${this.max}; retry after ${retryAfterS}s (or raise ASSAY_MAX_INFLIGHT)`,
        undefined,
        { "Retry-After": String(retryAfterS) },
      );
    }
    this.inflight += n;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inflight -= n;
    };
  }
}

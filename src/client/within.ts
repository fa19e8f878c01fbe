/**
 * One HTTP exchange (request, answer and the reading of its body) within a deadline that holds
 * the process open while it waits.
 *
 * Why not `fetch(url, { signal: AbortSignal.timeout(ms) })`: Node 20's fetch (undici) never settles
 * when the peer closes the connection before reading the request, and the socket it then waits on
 * does not hold the event loop. A load balancer, or docker-proxy in front of a container whose
 * server is not listening yet, does exactly that. AbortSignal.timeout's timer does not hold the loop
 * either, so a program whose only work was that fetch ends mid-await with exit code 0 and no word:
 * `assay score --server` "finished" without a result, a readiness probe "passed" nothing. Here the
 * deadline is an ordinary timer, which holds the loop, and it aborts the exchange with an error that
 * names the URL and the time waited (tests/fetch-within.test.ts shows both behaviours).
 */

export class ExchangeTimeout extends Error {
  constructor(readonly url: string, readonly ms: number) {
    super(`no answer from ${url} within ${ms} ms`);
    this.name = "ExchangeTimeout";
  }
}

/**
 * Sends the request and runs `read` on the answer, both within `ms`. The caller's own
 * `init.signal` still aborts it. `f` is the fetch to use (a client's injected one).
 */
export async function fetchWithin<T>(url: string, init: RequestInit, ms: number, read: (res: Response) => Promise<T>, f: typeof fetch = fetch): Promise<T> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(new ExchangeTimeout(url, ms)), ms);
  const outer = init.signal;
  const passOn = () => ac.abort(outer!.reason);
  if (outer?.aborted) passOn();
  else outer?.addEventListener("abort", passOn, { once: true });
  try {
    return await read(await f(url, { ...init, signal: ac.signal }));
  } catch (err) {
    // fetch rejects with the abort reason itself, or with an AbortError carrying it: name ours.
    if (ac.signal.reason instanceof ExchangeTimeout) throw ac.signal.reason;
    throw err;
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener("abort", passOn);
  }
}

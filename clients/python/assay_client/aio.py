"""`AsyncAssay`: an asyncio client for Assay that batches by itself. Needs aiohttp (the `async` extra).

    async with AsyncAssay("http://127.0.0.1:8787") as assay:
        r = await assay.reward({"verifier": "math", "response": "\\boxed{4}", "reference": "4"})

- One connection pool (an aiohttp session per event loop), `concurrency` requests in flight at most.
- Micro-batching: concurrent `await reward(item)` / `await score(item)` calls are coalesced into
  `/reward/batch` requests: a batch leaves when `max_batch` items are waiting or `batch_window_ms`
  after its first item arrived, whichever is first. Each awaiter gets its own item's result, in any
  order; an item the server calls invalid raises AssayError for its awaiter only, exactly as the
  blocking client's `reward(item)` does, and its neighbours are scored as usual. An item JSON
  cannot encode raises TypeError from its own await (it is encoded when queued).
- Same null/mask semantics as `AssayClient`: `reward` is None where the server answered
  `reward: null` (the item could not be scored; trainers mask it).
- 429, 503 (and 500/502/504, connection errors) are retried, waiting what `Retry-After` asks, but
  never past the call's deadline (`deadline=` seconds, default `timeout`): a wait that would end
  after it raises AssayDeadlineError at once instead of sleeping. The wait for a free connection
  slot counts against the deadline too. A batch answered 413 (over the server's body limit) is
  halved and each half sent again; one item over it alone raises.
- Cancellation really cancels: an await cancelled before its batch leaves is taken out of the
  batch; once every awaiter of a batch in flight is cancelled, its HTTP request is aborted (the
  server sees the connection close and stops scoring it).

Why aiohttp: the standard library has no asyncio HTTP client, and `AsyncAssayClient` (client.py)
runs each exchange in a worker thread, which at thousands of awaits is the thread-per-call load
this client exists to avoid. aiohttp is asyncio-native (cancelling a task aborts its request),
pools keep-alive connections with a hard limit, and is already in the environment of the trainers
this client serves (verl, AReaL, SkyRL depend on it); httpx would work too but adds anyio and
httpcore layers in the hot path for nothing this client uses.
"""
from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

from .client import (
    RETRY_STATUSES,
    UNHEALTHY_STATUSES,
    AssayError,
    Item,
    Result,
    RetryPolicy,
    _Base,
    _chunks,
    _decode,
    _error_for,
    _score_halving,
    _Replicas,
    _urls,
    encode_json,
    own_result,
    wire_item,
)

__all__ = ["AsyncAssay", "AssayDeadlineError"]


class AssayDeadlineError(AssayError, asyncio.TimeoutError):
    """The call's deadline passed before Assay answered (or a retry would have waited past it)."""


def _aiohttp():
    try:
        import aiohttp
    except ImportError as e:  # pragma: no cover - exercised only without the extra
        raise ImportError("AsyncAssay needs aiohttp: pip install 'assay-client[async]'") from e
    return aiohttp


def invalid_error(result: Result) -> AssayError:
    """What `POST /reward` answers for an invalid item (HTTP 400 naming the field), for the same
    item scored inside a batch."""
    details = result.get("details") or {}
    field_name = details.get("field") if isinstance(details, dict) else None
    return AssayError(f"Assay answered HTTP 400: {result.get('reason')}", 400, field_name)


@dataclass
class _Pending:
    item: Dict[str, Any]  # the caller's item
    body: bytes  # as sent: its JSON (`wire_item`), encoded when queued so a bad item fails alone
    future: "asyncio.Future[Result]"
    deadline: float  # time.monotonic() by which its awaiter stops waiting
    batch: Optional[List["_Pending"]] = None  # set when its batch leaves
    task: Optional["asyncio.Future[None]"] = None  # the request task carrying that batch


@dataclass
class _LoopState:
    """Everything bound to one event loop: the session, the waiting items, the request gate."""

    session: Any
    gate: asyncio.Semaphore
    queue: List[_Pending] = field(default_factory=list)
    timer: Optional[asyncio.TimerHandle] = None
    tasks: set = field(default_factory=set)
    keeper: Any = None


async def _close_at_shutdown(session: Any) -> Any:
    try:
        yield
    finally:
        if not session.closed:
            await session.close()


class AsyncAssay:
    """asyncio client with one connection pool and micro-batching of single-item awaits.

    `batch_window_ms`: how long the first waiting item waits for company (0 = until the loop's
    current callbacks have run, which still coalesces a `gather`). `max_batch`: most items in one
    coalesced request (the server's ASSAY_MAX_BATCH, default 4096, is the ceiling).
    `micro_batch=False` sends each single-item call as its own `POST /reward`.
    `concurrency`: most HTTP requests in flight at once (the pool's size).
    `chunk_size`: how `reward_batch(items)` splits a large explicit batch.
    """

    def __init__(
        self,
        url: Union[None, str, Sequence[str]] = None,
        api_key: Optional[str] = None,
        timeout: float = 120.0,
        *,
        batch_window_ms: float = 5.0,
        max_batch: int = 512,
        micro_batch: bool = True,
        concurrency: int = 8,
        chunk_size: int = 1024,
        retry: Optional[RetryPolicy] = None,
    ):
        if max_batch < 1 or chunk_size < 1 or concurrency < 1:
            raise ValueError("max_batch, chunk_size and concurrency must each be at least 1")
        if batch_window_ms < 0:
            raise ValueError("batch_window_ms must be 0 or more")
        # The same URL / key resolution as the blocking client (ASSAY_URL, ASSAY_API_KEY), one
        # server or several (a list, or comma-separated): health-aware round robin over them.
        self.urls = _urls(url)
        self.url = ",".join(self.urls)
        self._replicas = _Replicas(self.urls)
        self.api_key = api_key if api_key is not None else os.environ.get("ASSAY_API_KEY")
        self.timeout = timeout
        self.batch_window = batch_window_ms / 1000.0
        self.max_batch = max_batch
        self.micro_batch = micro_batch
        self.concurrency = concurrency
        self.chunk_size = chunk_size
        self.retry = retry or RetryPolicy()
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            self.headers["Authorization"] = f"Bearer {self.api_key}"
        self._states: Dict[asyncio.AbstractEventLoop, _LoopState] = {}
        #: Requests sent, by path (what the micro-batcher turned the awaits into).
        self.requests: Dict[str, int] = {}

    # Picklable (Ray actors, multiprocessing): sessions and queues are rebuilt on the other side.
    def __getstate__(self) -> Dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_states", "_replicas")}

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._states = {}
        self._replicas = _Replicas(self.urls)

    # -- the pool ---------------------------------------------------------------------------
    def _state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        st = self._states.get(loop)
        if st is None:
            for old in [lp for lp in self._states if lp.is_closed()]:
                del self._states[old]  # a finished asyncio.run(): its session died with its loop
            aiohttp = _aiohttp()
            connector = aiohttp.TCPConnector(limit=self.concurrency, limit_per_host=self.concurrency)
            session = aiohttp.ClientSession(connector=connector, headers=self.headers)
            st = self._states[loop] = _LoopState(session, asyncio.Semaphore(self.concurrency))
            # Closed with its loop: asyncio.run (and anything calling loop.shutdown_asyncgens())
            # finalises live async generators while the loop still runs, so a client shared across
            # several asyncio.run calls leaves no unclosed session behind.
            st.keeper = _close_at_shutdown(session)
            loop.create_task(st.keeper.__anext__())
        return st

    async def aclose(self) -> None:
        """Closes this loop's pool; awaits still waiting in it fail with AssayError."""
        loop = asyncio.get_running_loop()
        st = self._states.pop(loop, None)
        if st is None:
            return
        if st.timer is not None:
            st.timer.cancel()
        for p in st.queue:
            if not p.future.done():
                p.future.set_exception(AssayError("AsyncAssay was closed before this item was sent"))
        st.queue.clear()
        for t in list(st.tasks):
            t.cancel()
        await st.session.close()

    async def __aenter__(self) -> "AsyncAssay":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()

    # -- one HTTP exchange, retried inside a deadline ----------------------------------------
    def _deadline(self, deadline: Optional[float]) -> float:
        return time.monotonic() + (self.timeout if deadline is None else deadline)

    async def _send(self, method: str, path: str, payload: Any, until: float) -> Any:
        aiohttp = _aiohttp()
        st = self._state()
        body = payload if payload is None or isinstance(payload, bytes) else encode_json(payload)
        attempt = 0
        tried: List[int] = []
        while True:
            left = until - time.monotonic()
            if left <= 0:
                raise AssayDeadlineError(f"no answer from Assay at {self.url}{path} within the deadline "
                                         f"({attempt} tries); pass a longer deadline= or timeout=, or lower the load")
            i = self._replicas.pick(tried)
            base = self._replicas.urls[i]
            retry_after = None
            try:
                # The wait for a free slot counts against the deadline too: the request's own
                # timeout starts only once it has one. (A free slot needs no wait_for and its task.)
                if st.gate.locked():
                    await asyncio.wait_for(st.gate.acquire(), left)
                else:
                    await st.gate.acquire()
                try:
                    left = until - time.monotonic()
                    if left <= 0:
                        raise asyncio.TimeoutError
                    self.requests[path] = self.requests.get(path, 0) + 1
                    async with st.session.request(method, base + path, data=body,
                                                  timeout=aiohttp.ClientTimeout(total=left)) as resp:
                        status = resp.status
                        data = await resp.read()
                        retry_after = resp.headers.get("Retry-After")
                finally:
                    st.gate.release()
            except asyncio.TimeoutError as e:
                raise AssayDeadlineError(f"no answer from Assay at {base}{path} within the deadline; "
                                         "pass a longer deadline= or timeout=, or lower the load") from e
            except aiohttp.ClientError as e:
                self._replicas.failed(i)
                if attempt >= self.retry.max_retries:
                    raise AssayError(f"cannot reach Assay at {self.url} after {attempt + 1} tries: {e}") from e
                await self._next_try(tried, i, self.retry.delay(attempt), until, path, f"connection error {e}")
                attempt += 1
                continue
            if status in UNHEALTHY_STATUSES:
                self._replicas.failed(i)
            else:
                self._replicas.ok(i)
            if status in RETRY_STATUSES and attempt < self.retry.max_retries:
                await self._next_try(tried, i, self.retry.delay(attempt, retry_after), until, path, f"HTTP {status}")
                attempt += 1
                continue
            decoded = _decode(status, data)
            if status >= 400:
                raise _error_for(status, decoded)
            return decoded

    async def _next_try(self, tried: List[int], i: int, delay: float, until: float, path: str, why: str) -> None:
        """After a failed try on replica i: at once on another healthy replica not yet tried, else after `delay`."""
        tried.append(i)
        if self._replicas.healthy_untried(tried):
            return
        del tried[:]
        await self._wait(delay, until, path, why)

    async def _wait(self, delay: float, until: float, path: str, why: str) -> None:
        if time.monotonic() + delay > until:
            raise AssayDeadlineError(f"Assay at {self.url}{path} answered {why} and asked to retry in {delay:.2f}s, "
                                     "after this call's deadline; pass a longer deadline= or timeout=, or lower the load")
        await asyncio.sleep(delay)

    # -- single items, micro-batched ----------------------------------------------------------
    async def score(self, item: Item, *, deadline: Optional[float] = None, allow_invalid: bool = False) -> Result:
        """The full result for one item ({reward, status, reason, details, ...}). An item the server
        calls invalid raises AssayError naming the field (HTTP 400, as `POST /reward` answers), or,
        with `allow_invalid=True`, comes back as a result with status "invalid" and reward None
        (as in a batch: what adapters that must hand every sample a number want)."""
        until = self._deadline(deadline)
        if not self.micro_batch:
            if allow_invalid:
                return (await self.score_batch([item], deadline=deadline))[0]
            return own_result(item, await self._send("POST", "/reward", wire_item(item), until))
        st = self._state()
        loop = asyncio.get_running_loop()
        own = dict(item)
        # Encoded now, not with its batch: an item that cannot be (an object JSON does not know)
        # raises here, for its own caller, instead of failing every neighbour of its batch.
        p = _Pending(own, encode_json(wire_item(own)), loop.create_future(), until)
        st.queue.append(p)
        if len(st.queue) >= self.max_batch:
            self._flush(st)
        elif st.timer is None:
            st.timer = loop.call_later(self.batch_window, self._flush, st)
        # Without deadline= every item's deadline is `timeout` from its call, which the batch
        # request's own timeout (the latest deadline of its items) enforces; a shorter deadline
        # gets its own timer. (No asyncio.wait_for per item: at thousands of awaits on a busy
        # host, its extra task and callbacks were half of the client's CPU time.)
        timer = loop.call_later(deadline, self._expire, p) if deadline is not None else None
        try:
            result = await p.future
        finally:
            if timer is not None:
                timer.cancel()
            if not p.future.done():
                p.future.cancel()
            if p.future.cancelled() or isinstance(p.future.exception(), AssayDeadlineError):
                self._forget(st, p)
        if result.get("status") == "invalid" and not allow_invalid:
            raise invalid_error(result)
        return result

    async def reward(self, item: Item, *, deadline: Optional[float] = None, allow_invalid: bool = False) -> Optional[float]:
        """The reward for one item, or None when the server could not score it."""
        return (await self.score(item, deadline=deadline, allow_invalid=allow_invalid)).get("reward")

    @staticmethod
    def _expire(p: _Pending) -> None:
        if not p.future.done():
            p.future.set_exception(AssayDeadlineError("no answer from Assay within the deadline; pass a longer "
                                                      "deadline= or timeout=, or lower the load"))

    @staticmethod
    def _forget(st: _LoopState, p: _Pending) -> None:
        """An await that gave up (cancelled, or past its deadline): out of the queue if its batch
        has not left yet; else, once no awaiter of its batch is waiting, the request is aborted."""
        if p.task is None:
            try:
                st.queue.remove(p)
            except ValueError:
                pass
        elif not p.task.done() and all(q.future.done() for q in p.batch or ()):
            p.task.cancel()

    def _flush(self, st: _LoopState) -> None:
        if st.timer is not None:
            st.timer.cancel()
            st.timer = None
        while st.queue:
            batch, st.queue[:] = st.queue[:self.max_batch], st.queue[self.max_batch:]
            task = asyncio.ensure_future(self._run_batch(batch))
            st.tasks.add(task)
            task.add_done_callback(st.tasks.discard)
            for p in batch:
                p.batch, p.task = batch, task

    async def _run_batch(self, batch: List[_Pending]) -> None:
        live = [p for p in batch if not p.future.done()]
        if not live:
            return
        try:
            body = await self._send("POST", "/reward/batch", b'{"items":[' + b",".join(p.body for p in live) + b"]}",
                                    max(p.deadline for p in live))
            results = _Base._check_results([p.item for p in live], body)
        except asyncio.CancelledError:
            # Every awaiter gave up (nothing left to tell), or aclose() stopped the pool.
            for p in live:
                if not p.future.done():
                    p.future.set_exception(AssayError("AsyncAssay was closed while this item was being scored"))
            raise
        except AssayError as e:
            if e.status in (400, 413) and len(live) > 1:
                # The request as a whole was refused (one item the batch schema rejects, or a body
                # over the size limit): halve it, so only the item at fault fails.
                half = len(live) // 2
                await asyncio.gather(self._run_batch(live[:half]), self._run_batch(live[half:]))
                return
            if e.status == 400 and len(live) == 1 and not live[0].future.done():
                # What POST /reward answers for this one item, so its error names the field.
                try:
                    live[0].future.set_result(own_result(live[0].item,
                                                         await self._send("POST", "/reward", live[0].body, live[0].deadline)))
                except AssayError as e1:
                    if not live[0].future.done():
                        live[0].future.set_exception(e1)
                return
            for p in live:
                if not p.future.done():
                    p.future.set_exception(e)
            return
        except BaseException as e:  # our machinery: every awaiter hears of it, none hangs
            for p in live:
                if not p.future.done():
                    p.future.set_exception(AssayError(f"scoring a batch failed: {e!r}"))
            return
        for p, r in zip(live, results):
            if not p.future.done():
                p.future.set_result(r)

    # -- explicit batches ---------------------------------------------------------------------
    async def score_batch(self, items: Sequence[Item], *, deadline: Optional[float] = None) -> List[Result]:
        """Full results in input order; chunks of `chunk_size` go out concurrently (at most
        `concurrency` at once). Invalid items come back with status "invalid", as from the server."""
        items = [dict(x) for x in items]
        if not items:
            return []
        until = self._deadline(deadline)

        async def send(chunk: Sequence[Item]) -> Any:
            return await self._send("POST", "/reward/batch", {"items": [wire_item(x) for x in chunk]}, until)

        parts = await asyncio.gather(*(_score_halving(send, c) for c in _chunks(items, self.chunk_size)))
        return [r for part in parts for r in part]

    async def reward_batch(self, items: Sequence[Item], *, deadline: Optional[float] = None) -> List[Optional[float]]:
        """One reward per item, in input order; None where Assay answered `reward: null`."""
        return [r.get("reward") for r in await self.score_batch(items, deadline=deadline)]

    async def health(self) -> Dict[str, Any]:
        return await self._send("GET", "/healthz", None, self._deadline(None))

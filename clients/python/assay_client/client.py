"""HTTP client for the Assay reward server. Standard library only.

`AssayClient.reward_batch(items)` splits a large batch into chunks, sends the chunks
concurrently, retries a chunk on connection errors, 429 (honouring Retry-After) and 5xx with
exponential backoff, and returns one reward per item in input order: a number, or None where
the server answered `reward: null` (the item could not be scored; trainers mask it).
`AsyncAssayClient` has the same methods as coroutines. A chunk answered 413 (over the server's body
limit, ASSAY_MAX_BODY) is halved and each half sent again; one item over the limit alone raises.
An integer id beyond +-(2**53 - 1) goes out as its decimal string (JavaScript cannot hold it
exactly) and its result carries the caller's own integer back.

Several servers (replicas behind no load balancer, or beside one): pass a list of URLs, or a
comma-separated string (`ASSAY_URL=http://a:8787,http://b:8787`). Requests go round robin over the
replicas that are healthy; one that fails to connect or answers 502/503/504 sits out a cool-down
(1 s, doubling with each failure in a row, at most 30 s) and its request goes at once to the next
replica. Every request this client sends is idempotent (scoring changes nothing on the server), so
a batch cut off on one replica is sent whole to another. `deadline=` (seconds, per call) bounds all
tries together: the trainer's step deadline, past which AssayError is raised instead of waiting.
"""
from __future__ import annotations

import asyncio
import http.client
import json
import numbers
import os
import random
import threading
import time
from collections import abc
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

DEFAULT_URL = "http://127.0.0.1:8787"

Item = Mapping[str, Any]
Result = Dict[str, Any]

#: HTTP statuses worth another try: the server is busy or failed, not the request.
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


def _plain(x: Any) -> Any:
    """json.dumps' fallback for what dataset columns hold: numpy scalars (np.int64(72) -> 72) and
    arrays (-> lists), through their own `item()` / `tolist()`, so numpy is never imported here."""
    if hasattr(x, "tolist"):
        return x.tolist()
    if hasattr(x, "item"):
        return x.item()
    raise TypeError(f"Object of type {type(x).__name__} is not JSON serializable")


def encode_json(payload: Any) -> bytes:
    """The request body: JSON, with numpy values from dataset columns written as plain numbers/lists."""
    return json.dumps(payload, default=_plain).encode("utf-8")


#: The largest integer the server (JavaScript) holds exactly. An int id beyond it would come back as
#: another number, so it goes out as its decimal string (and the caller's int is put back in the result).
MAX_SAFE_ID = 2 ** 53 - 1


def wire_id(x: Any) -> Any:
    """The id as sent: an integer id (numpy's too) beyond +-MAX_SAFE_ID as its decimal string."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool) and abs(int(x)) > MAX_SAFE_ID:
        return str(int(x))
    return x


def wire_item(item: "Item") -> Dict[str, Any]:
    """The item as sent (a plain dict, its id through `wire_id`)."""
    d = dict(item)
    if "id" in d:
        d["id"] = wire_id(d["id"])
    return d


def own_result(item: "Item", result: Any) -> Any:
    """The server's result for `item` with the caller's own id back in it, where the id went out as
    a string (`wire_id`) and came back as that string."""
    if isinstance(item, abc.Mapping) and isinstance(result, dict) and "id" in item:
        want = item["id"]
        sent = wire_id(want)
        if sent is not want and result.get("id") == sent:
            result["id"] = want
    return result


class AssayError(Exception):
    """Assay could not be reached, or answered with an error the request caused."""

    def __init__(self, message: str, status: Optional[int] = None, field: Optional[str] = None):
        super().__init__(message)
        self.status = status
        self.field = field


@dataclass
class RetryPolicy:
    """How often and how long to wait before trying a request again.

    Waits `backoff * 2**attempt` seconds (with full jitter, capped at `max_backoff`); a 429 or
    503 with a `Retry-After` header waits what the server asked instead (capped too).
    """

    max_retries: int = 5
    backoff: float = 0.25
    max_backoff: float = 10.0

    def delay(self, attempt: int, retry_after: Optional[str] = None) -> float:
        if retry_after is not None:
            try:
                return min(max(float(retry_after), 0.0), self.max_backoff)
            except ValueError:
                pass  # an HTTP date, or junk: fall back to our own schedule
        return random.uniform(0, min(self.max_backoff, self.backoff * (2 ** attempt)))


#: What a request meets on a keep-alive connection the server closed while it sat idle: the
#: server's FIN (RemoteDisconnected, a ConnectionResetError) or RST (reset, broken pipe).
_STALE_ERRORS = (ConnectionResetError, BrokenPipeError, ConnectionAbortedError)

#: A connection idle this long is closed before reuse: the server (Node's keepAliveTimeout, 65 s
#: on Assay) may be closing it as the request goes out.
IDLE_REUSE_S = 55.0


class _Transport:
    """One keep-alive connection per thread to one Assay server. A request that finds the reused
    connection closed by the server (idle past its keep-alive timeout) is sent once more at once,
    on a fresh connection: the replica is healthy and no retry is spent on it."""

    def __init__(self, url: str, api_key: Optional[str], timeout: float):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"Assay URL must look like http://host:port, got {url!r}")
        self.https = parts.scheme == "https"
        self.host = parts.hostname
        self.port = parts.port or (443 if self.https else 80)
        self.base = parts.path.rstrip("/")
        self.timeout = timeout
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPConnection:
        conn = getattr(self._local, "conn", None)
        if conn is not None and time.monotonic() - getattr(self._local, "used", 0.0) > IDLE_REUSE_S:
            self.close()
            conn = None
        if conn is None:
            cls = http.client.HTTPSConnection if self.https else http.client.HTTPConnection
            conn = cls(self.host, self.port, timeout=self.timeout)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def request(self, method: str, path: str, body: Optional[bytes],
                timeout: Optional[float] = None) -> Tuple[int, Mapping[str, str], bytes]:
        """One HTTP exchange, its socket waits bounded by `timeout` (seconds; default the client's).
        Raises OSError (socket.timeout among them) / http.client.HTTPException when it fails."""
        conn = self._connection()
        reused = conn.sock is not None
        try:
            return self._exchange(conn, method, path, body, timeout)
        except _STALE_ERRORS:
            self.close()  # never reuse a connection in an unknown state
            if not reused:
                raise
        except BaseException:
            self.close()
            raise
        # The server closed the idle connection: every request here is idempotent, so send it
        # again on a fresh one; a failure there is the replica's.
        try:
            return self._exchange(self._connection(), method, path, body, timeout)
        except BaseException:
            self.close()
            raise

    def _exchange(self, conn: http.client.HTTPConnection, method: str, path: str, body: Optional[bytes],
                  timeout: Optional[float]) -> Tuple[int, Mapping[str, str], bytes]:
        t = self.timeout if timeout is None else min(self.timeout, timeout)
        conn.timeout = t
        if conn.sock is not None:
            conn.sock.settimeout(t)
        conn.request(method, self.base + path, body=body, headers=self.headers)
        resp = conn.getresponse()
        data = resp.read()
        headers = {k.lower(): v for k, v in resp.getheaders()}
        self._local.used = time.monotonic()
        if resp.will_close:
            self.close()
        return resp.status, headers, data


def _url_from_env(url: Optional[str]) -> str:
    return (url or os.environ.get("ASSAY_URL") or DEFAULT_URL).rstrip("/")


def _urls(url: Union[None, str, Sequence[str]]) -> List[str]:
    """The servers: a list of URLs, or one string of comma-separated ones (default ASSAY_URL)."""
    raw = [url] if url is None or isinstance(url, str) else list(url)
    out = [u.strip().rstrip("/") for x in raw for u in _url_from_env(x).split(",") if u.strip()]
    if not out:
        raise ValueError("no Assay URL given: pass url= (one, a list, or comma-separated), or set ASSAY_URL")
    return out


class _Replicas:
    """Health-aware round robin over one or more servers, shared by every thread of a client.

    `pick` gives the next replica in turn that is not cooling down (and not already tried for
    this request); when every one is, the one that comes back first. `failed` puts a replica in a
    cool-down of `cooldown * 2**(failures in a row - 1)` seconds (at most `max_cooldown`); `ok`
    ends it."""

    def __init__(self, urls: Sequence[str], cooldown: float = 1.0, max_cooldown: float = 30.0):
        self.urls = list(urls)
        self.cooldown = cooldown
        self.max_cooldown = max_cooldown
        self._lock = threading.Lock()
        self._next = 0
        self._down_until = [0.0] * len(self.urls)
        self._failures = [0] * len(self.urls)

    def pick(self, avoid: Sequence[int] = ()) -> int:
        n = len(self.urls)
        with self._lock:
            start = self._next
            self._next = (self._next + 1) % n
            order = [(start + k) % n for k in range(n)]
            now = time.monotonic()
            fresh = [i for i in order if i not in avoid] or order
            healthy = [i for i in fresh if self._down_until[i] <= now]
            return healthy[0] if healthy else min(fresh, key=lambda i: self._down_until[i])

    def healthy_untried(self, tried: Sequence[int]) -> bool:
        now = time.monotonic()
        with self._lock:
            return any(i not in tried and self._down_until[i] <= now for i in range(len(self.urls)))

    def failed(self, i: int) -> None:
        with self._lock:
            self._failures[i] += 1
            wait = min(self.max_cooldown, self.cooldown * (2 ** (self._failures[i] - 1)))
            self._down_until[i] = time.monotonic() + wait

    def ok(self, i: int) -> None:
        with self._lock:
            self._failures[i] = 0
            self._down_until[i] = 0.0

    def down(self) -> List[str]:
        """The replicas cooling down now."""
        now = time.monotonic()
        with self._lock:
            return [u for u, t in zip(self.urls, self._down_until) if t > now]


def _chunks(items: Sequence[Item], size: int) -> List[Sequence[Item]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def _decode(status: int, data: bytes) -> Any:
    try:
        return json.loads(data.decode("utf-8")) if data else None
    except ValueError as e:
        raise AssayError(f"Assay answered HTTP {status} with a body that is not JSON: {data[:200]!r}", status) from e


def _error_for(status: int, body: Any) -> AssayError:
    if isinstance(body, dict) and "error" in body:
        return AssayError(f"Assay answered HTTP {status}: {body['error']}", status, body.get("field"))
    return AssayError(f"Assay answered HTTP {status}: {str(body)[:200]}", status)


_CONNECTION_ERRORS = (OSError, http.client.HTTPException)  # OSError covers socket.timeout, refused, reset

#: Answers that say the replica itself is unwell (its proxy or it cannot serve): another gets the request.
UNHEALTHY_STATUSES = frozenset({502, 503, 504})


class _Base:
    def __init__(
        self,
        url: Union[None, str, Sequence[str]] = None,
        api_key: Optional[str] = None,
        timeout: float = 120.0,
        *,
        chunk_size: int = 256,
        concurrency: int = 4,
        retry: Optional[RetryPolicy] = None,
        deadline: Optional[float] = None,
    ):
        if chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if deadline is not None and deadline <= 0:
            raise ValueError("deadline must be a positive number of seconds (or None)")
        self.urls = _urls(url)
        self.url = ",".join(self.urls)  # accepted back as url= (adapters pass it on)
        self.api_key = api_key if api_key is not None else os.environ.get("ASSAY_API_KEY")
        self.timeout = timeout
        self.chunk_size = chunk_size
        self.concurrency = concurrency
        self.retry = retry or RetryPolicy()
        self.deadline = deadline
        self._replicas = _Replicas(self.urls)
        self._transports = [_Transport(u, self.api_key, timeout) for u in self.urls]

    # Picklable (Ray, multiprocessing): connections, locks and pools are rebuilt on the other side.
    def __getstate__(self) -> Dict[str, Any]:
        state = {k: v for k, v in self.__dict__.items() if k not in ("_replicas", "_transports", "_pool", "_pool_lock")}
        return state

    def __setstate__(self, state: Dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._replicas = _Replicas(self.urls)
        self._transports = [_Transport(u, self.api_key, self.timeout) for u in self.urls]
        if isinstance(self, AssayClient):
            self._pool = None
            self._pool_lock = threading.Lock()

    def _until(self, deadline: Optional[float]) -> Optional[float]:
        d = deadline if deadline is not None else self.deadline
        return None if d is None else time.monotonic() + d

    def _left(self, until: Optional[float], attempt: int) -> Optional[float]:
        """What is left of the deadline for the next exchange (None: no deadline); AssayError once
        none is left. The exchange's own socket waits are bounded by it, so a slow server cannot
        hold a call past its deadline (it could, by the transport's 120 s timeout, per try)."""
        if until is None:
            return None
        left = until - time.monotonic()
        if left <= 0:
            raise AssayError(f"no answer from Assay ({self.url}) within the deadline after {attempt} tries; "
                             f"raise deadline= or add replicas")
        return left

    def _plan(self, attempt: int, tried: List[int], i: int, until: Optional[float], delay: float, why: str) -> float:
        """After a failed try on replica i: the wait before the next (none if another healthy
        replica has not been tried), or AssayError when the retries or the deadline are spent."""
        tried.append(i)
        if attempt >= self.retry.max_retries:
            raise AssayError(f"cannot reach Assay at {self.url} after {attempt + 1} tries; the last: {why}")
        if self._replicas.healthy_untried(tried):
            return 0.0
        del tried[:]
        if until is not None and time.monotonic() + delay > until:
            raise AssayError(f"no answer from Assay ({self.url}) within the deadline after {attempt + 1} tries "
                             f"(the last: {why}); raise deadline= or add replicas")
        return delay

    def _exchange_outcome(self, i: int, attempt: int, tried: List[int], until: Optional[float],
                          exchange: Any) -> Tuple[bool, Any, float]:
        """(done, body, wait) for one try on replica i: an exchange, or the exception it raised."""
        if isinstance(exchange, BaseException):
            self._replicas.failed(i)
            return False, None, self._plan(attempt, tried, i, until, self.retry.delay(attempt),
                                           f"{self._replicas.urls[i]}: {exchange}")
        status, headers, _ = exchange
        if status in UNHEALTHY_STATUSES:
            self._replicas.failed(i)
        else:
            self._replicas.ok(i)
        if status in RETRY_STATUSES and attempt < self.retry.max_retries:
            delay = self.retry.delay(attempt, headers.get("retry-after"))
            return False, None, self._plan(attempt, tried, i, until, delay, f"{self._replicas.urls[i]}: HTTP {status}")
        done, body, _ = self._outcome(attempt, exchange)
        return done, body, 0.0

    def _outcome(self, attempt: int, exchange: Tuple[int, Mapping[str, str], bytes]) -> Tuple[bool, Any, float]:
        """Interprets one HTTP answer: (done, body, delay before the next try). Raises when final."""
        status, headers, data = exchange
        if status in RETRY_STATUSES and attempt < self.retry.max_retries:
            return False, None, self.retry.delay(attempt, headers.get("retry-after"))
        body = _decode(status, data)
        if status >= 400:
            raise _error_for(status, body)
        return True, body, 0.0

    @staticmethod
    def _check_results(chunk: Sequence[Item], body: Any) -> List[Result]:
        """The results of a batch, checked against the caller's items: one per item, and each
        carrying its item's id (compared as sent, `wire_id`; the caller's own id is put back)."""
        results = body.get("results") if isinstance(body, dict) else None
        if not isinstance(results, list) or len(results) != len(chunk):
            raise AssayError(f"Assay answered a batch of {len(chunk)} with {len(results) if isinstance(results, list) else 'no'} results")
        # Rewards are taken by position: an item that carries an id must get its own result back
        # there, or every reward of the batch could belong to another rollout.
        for k, (item, r) in enumerate(zip(chunk, results)):
            want = wire_id(item.get("id")) if isinstance(item, abc.Mapping) else None
            if want is None:
                continue
            got = r.get("id") if isinstance(r, dict) else None
            if got is None and _invalid_id(r):
                continue  # the server refused this id (it echoes none): the item fails alone, as invalid
            if got != want:
                raise AssayError(f"Assay's result {k} of a batch of {len(chunk)} carries id {got!r}, not the item's "
                                 f"{want!r}: the results are not the items' in order, so none is used")
            own_result(item, r)
        return results


def _invalid_id(r: Any) -> bool:
    """A result that says the item's id itself was refused (status invalid, details.field "id")."""
    if not isinstance(r, dict) or r.get("status") != "invalid":
        return False
    details = r.get("details")
    return isinstance(details, dict) and details.get("field") == "id"


def _halves(chunk: Sequence[Item]) -> Tuple[Sequence[Item], Sequence[Item]]:
    half = len(chunk) // 2
    return chunk[:half], chunk[half:]


async def _score_halving(send: Callable[[Sequence[Item]], Awaitable[Any]], chunk: Sequence[Item]) -> List[Result]:
    """`send(chunk)`'s results, checked against the chunk; a chunk of more than one item answered
    413 (over the server's body limit) is halved, each half on its own (the async clients' batches)."""
    try:
        body = await send(chunk)
    except AssayError as e:
        if e.status == 413 and len(chunk) > 1:
            a, b = await asyncio.gather(*(_score_halving(send, half) for half in _halves(chunk)))
            return a + b
        raise
    return _Base._check_results(chunk, body)


class AssayClient(_Base):
    """Blocking client. Thread-safe: each thread keeps its own keep-alive connection."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._pool: Optional[ThreadPoolExecutor] = None
        self._pool_lock = threading.Lock()

    def _send(self, method: str, path: str, payload: Any = None, until: Optional[float] = None) -> Any:
        body = None if payload is None else encode_json(payload)
        until = until if until is not None else self._until(None)
        tried: List[int] = []
        attempt = 0
        while True:
            i = self._replicas.pick(tried)
            left = self._left(until, attempt)
            try:
                exchange: Any = self._transports[i].request(method, path, body, left)
            except _CONNECTION_ERRORS as e:
                exchange = e
            done, value, delay = self._exchange_outcome(i, attempt, tried, until, exchange)
            if done:
                return value
            time.sleep(delay)
            attempt += 1

    # -- one item ---------------------------------------------------------------------------
    def score(self, item: Item) -> Result:
        """The full result for one item ({reward, status, reason, details, ...}).
        A malformed item raises AssayError naming the field."""
        return own_result(item, self._send("POST", "/reward", wire_item(item)))

    def reward(self, item: Item) -> Optional[float]:
        """The reward for one item, or None when the server could not score it."""
        return self.score(item).get("reward")

    # -- many items -------------------------------------------------------------------------
    def _score_chunk(self, chunk: Sequence[Item], until: Optional[float] = None) -> List[Result]:
        try:
            body = self._send("POST", "/reward/batch", {"items": [wire_item(x) for x in chunk]}, until)
        except AssayError as e:
            if e.status == 413 and len(chunk) > 1:
                # Over the server's body limit (ASSAY_MAX_BODY, 8 MB by default): each half on its own.
                first, second = _halves(chunk)
                return self._score_chunk(first, until) + self._score_chunk(second, until)
            raise
        return self._check_results(chunk, body)

    def score_batch(self, items: Sequence[Item], *, deadline: Optional[float] = None) -> List[Result]:
        """Full results in input order. Chunks of `chunk_size` go out `concurrency` at a time,
        spread over the replicas; `deadline` (seconds, default the client's) bounds the whole call."""
        items = list(items)
        until = self._until(deadline)
        chunks = _chunks(items, self.chunk_size)
        if len(chunks) <= 1:
            return self._score_chunk(items, until) if items else []
        parts = list(self._executor().map(lambda c: self._score_chunk(c, until), chunks))  # map keeps chunk order
        return [r for part in parts for r in part]

    def _executor(self) -> ThreadPoolExecutor:
        # One pool for the client's life, so its threads' keep-alive connections are reused
        # from one batch to the next.
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="assay")
            return self._pool

    def reward_batch(self, items: Sequence[Item], *, deadline: Optional[float] = None) -> List[Optional[float]]:
        """One reward per item, in input order; None where Assay answered `reward: null`."""
        return [r.get("reward") for r in self.score_batch(items, deadline=deadline)]

    # -- the rest of the API ----------------------------------------------------------------
    def get_reward(self, query: Sequence[str], prompts: Optional[Sequence[str]] = None,
                   labels: Optional[Sequence[Any]] = None, *, verifier: Optional[str] = None,
                   null_reward: Optional[float] = None) -> Dict[str, Any]:
        """OpenRLHF's remote-reward route: {query, prompts, labels} -> {rewards, scores, extra_logs}."""
        params = []
        if verifier:
            params.append(f"verifier={verifier}")
        if null_reward is not None:
            params.append(f"null_reward={null_reward}")
        path = "/get_reward" + ("?" + "&".join(params) if params else "")
        payload: Dict[str, Any] = {"query": list(query)}
        if prompts is not None:
            payload["prompts"] = list(prompts)
        if labels is not None:
            payload["labels"] = list(labels)
        return self._send("POST", path, payload)

    def verifiers(self) -> List[Dict[str, Any]]:
        body = self._send("GET", "/verifiers")
        return body.get("verifiers", body) if isinstance(body, dict) else body

    def health(self) -> Dict[str, Any]:
        return self._send("GET", "/healthz")

    def close(self) -> None:
        """Closes this thread's connection and the chunk pool (with its threads' connections)."""
        for t in self._transports:
            t.close()
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)

    def __enter__(self) -> "AssayClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncAssayClient(_Base):
    """asyncio client with the same behaviour. Chunks, concurrency and backoff run on the event
    loop; each HTTP exchange runs in a worker thread (the standard library has no async HTTP
    client), so awaiting a batch never blocks the loop."""

    async def _send(self, method: str, path: str, payload: Any = None, until: Optional[float] = None) -> Any:
        body = None if payload is None else encode_json(payload)
        until = until if until is not None else self._until(None)
        tried: List[int] = []
        attempt = 0
        while True:
            i = self._replicas.pick(tried)
            left = self._left(until, attempt)
            try:
                exchange: Any = await asyncio.to_thread(self._transports[i].request, method, path, body, left)
            except _CONNECTION_ERRORS as e:
                exchange = e
            done, value, delay = self._exchange_outcome(i, attempt, tried, until, exchange)
            if done:
                return value
            await asyncio.sleep(delay)
            attempt += 1

    async def score(self, item: Item) -> Result:
        return own_result(item, await self._send("POST", "/reward", wire_item(item)))

    async def reward(self, item: Item) -> Optional[float]:
        return (await self.score(item)).get("reward")

    async def score_batch(self, items: Sequence[Item], *, deadline: Optional[float] = None) -> List[Result]:
        items = list(items)
        if not items:
            return []
        gate = asyncio.Semaphore(self.concurrency)
        until = self._until(deadline)

        async def send(chunk: Sequence[Item]) -> Any:
            async with gate:
                return await self._send("POST", "/reward/batch", {"items": [wire_item(x) for x in chunk]}, until)

        parts = await asyncio.gather(*(_score_halving(send, c) for c in _chunks(items, self.chunk_size)))
        return [r for part in parts for r in part]

    async def reward_batch(self, items: Sequence[Item], *, deadline: Optional[float] = None) -> List[Optional[float]]:
        return [r.get("reward") for r in await self.score_batch(items, deadline=deadline)]

    async def health(self) -> Dict[str, Any]:
        return await self._send("GET", "/healthz")

    def close(self) -> None:
        for t in self._transports:
            t.close()

    async def __aenter__(self) -> "AsyncAssayClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.close()

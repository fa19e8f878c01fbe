"""AsyncAssay: micro-batching against the live server (requests counted by the server's own
/metrics), cancellation and retries against the scripted fake, and the blocking client's results."""
from __future__ import annotations

import asyncio
import json
import pickle
import re
import time
import urllib.request

import pytest

from assay_client import AssayClient, AssayError, RetryPolicy
from assay_client.aio import AssayDeadlineError, AsyncAssay
from test_client import exact_items

FAST = RetryPolicy(max_retries=3, backoff=0.01, max_backoff=5.0)


def batch_requests_served(url: str) -> int:
    """POST /reward/batch requests the server has answered, from its Prometheus counter."""
    text = urllib.request.urlopen(url + "/metrics", timeout=10).read().decode()
    total = 0
    for line in text.splitlines():
        if line.startswith("assay_http_requests_total{") and 'route="/reward/batch"' in line and 'method="POST"' in line:
            total += int(float(line.rsplit(" ", 1)[1]))
    return total


def outcome(fn, item):
    """A reward, or the error's (status, field): what a trainer would see for the item."""
    try:
        return fn(item)
    except AssayError as e:
        return ("error", e.status, e.field)


def mixed_items(n: int):
    """exact_items (right, wrong, null for an unknown verifier) plus, every 11th, an item the server
    calls invalid (a reference that is not a string)."""
    items = exact_items(n)
    for i in range(5, n, 11):
        items[i] = {"id": i, "verifier": "exact", "response": "x", "reference": {"not": "a string"}}
    return items


# ---- live server ------------------------------------------------------------------------------

def test_2000_concurrent_single_awaits_become_a_few_batches_each_with_its_own_result(assay_url):
    items = mixed_items(2000)
    sync = AssayClient(assay_url, chunk_size=512)
    full = sync.score_batch(items)
    # What the blocking client's reward(item) gives: the reward, or (for an invalid item) the 400 naming its field.
    want = [("error", 400, r["details"]["field"]) if r["status"] == "invalid" else r["reward"] for r in full]
    assert {1, 0, ("error", 400, "reference"), ("error", 400, "verifier")} <= set(want), set(want)
    assert [outcome(sync.reward, items[i]) for i in range(0, 2000, 50)] == want[::50]

    async def main():
        async with AsyncAssay(assay_url, batch_window_ms=5, max_batch=512) as a:
            async def one(it):
                try:
                    return await a.reward(it)
                except AssayError as e:
                    return ("error", e.status, e.field)

            before = batch_requests_served(assay_url)
            got = await asyncio.gather(*(one(it) for it in items))
            return got, batch_requests_served(assay_url) - before, dict(a.requests)

    got, served, sent = asyncio.run(main())
    assert got == want  # every awaiter its own item's result; invalid ones fail alone, as with the sync client
    # 2000 / 512: 4 batches at least; a few dozen at most on a loaded machine (5 ms windows).
    assert 4 <= served <= 40, served
    assert sent.get("/reward", 0) == 0
    assert sent["/reward/batch"] == served


def test_sync_and_async_clients_give_identical_results(assay_url):
    items = exact_items(300) + [{"verifier": "math", "response": "so \\boxed{72}", "reference": "72"},
                                {"verifier": "math", "response": "\\boxed{71}", "reference": "72"}]
    sync = AssayClient(assay_url, chunk_size=64)
    want_batch = sync.reward_batch(items)
    want_full = [{k: r[k] for k in ("reward", "status", "reason")} for r in sync.score_batch(items)]

    async def main():
        async with AsyncAssay(assay_url, chunk_size=64) as a:
            batch = await a.reward_batch(items)
            full = await a.score_batch(items)
            singles = await asyncio.gather(*(a.score(it) for it in items), return_exceptions=True)
            return batch, full, singles

    batch, full, singles = asyncio.run(main())
    assert batch == want_batch and None in batch and 1 in batch and 0 in batch
    assert [{k: r[k] for k in ("reward", "status", "reason")} for r in full] == want_full
    def seen(r):
        if isinstance(r, AssayError):
            return ("error", r.status, r.field, str(r))
        return {k: r[k] for k in ("reward", "status", "reason")}

    want_singles = []
    for it in items:
        try:
            want_singles.append(seen(sync.score(it)))
        except AssayError as e:
            want_singles.append(seen(e))
    assert [seen(r) for r in singles] == want_singles
    assert sum(isinstance(r, AssayError) for r in singles) == sum(r is None for r in batch)


def test_an_invalid_item_fails_its_own_await_only(assay_url):
    async def main():
        async with AsyncAssay(assay_url, batch_window_ms=20) as a:
            return await asyncio.gather(
                a.reward({"verifier": "exact", "response": "Paris", "reference": "paris"}),
                a.reward({"verifier": "exact", "response": "x", "reference": {"not": "a string"}}),
                a.reward({"verifier": "exact", "response": "Lyon", "reference": "paris"}),
                return_exceptions=True)

    good, bad, wrong = asyncio.run(main())
    assert good == 1 and wrong == 0
    with pytest.raises(AssayError) as sync_err:
        AssayClient(assay_url).reward({"verifier": "exact", "response": "x", "reference": {"not": "a string"}})
    assert isinstance(bad, AssayError) and bad.status == 400 and bad.field == sync_err.value.field
    assert str(bad) == str(sync_err.value)


def test_a_client_survives_pickling_and_a_second_event_loop(assay_url):
    a = AsyncAssay(assay_url)
    item = {"verifier": "exact", "response": "Paris", "reference": "paris"}
    assert asyncio.run(a.reward(item)) == 1
    assert asyncio.run(a.reward(item)) == 1  # a new loop: a new pool, not the dead loop's
    b = pickle.loads(pickle.dumps(a))
    assert asyncio.run(b.reward(item)) == 1


# ---- the scripted fake --------------------------------------------------------------------------

def items_of(fake):
    return [[it["response"] for it in r["body"]["items"]] for r in fake.requests if r["path"] == "/reward/batch"]


def test_the_size_cap_splits_and_results_keep_their_awaiters(fake_assay):
    fake = fake_assay(delay=0.05)

    async def main():
        async with AsyncAssay(fake.url, batch_window_ms=1000, max_batch=100, retry=FAST) as a:
            return await asyncio.gather(*(a.reward({"verifier": "v", "response": "x" * (i % 37)}) for i in range(250)))

    got = asyncio.run(main())
    assert got == [float(i % 37) for i in range(250)]
    assert sorted(len(b) for b in items_of(fake)) == [50, 100, 100]


def test_the_window_gathers_awaits_that_arrive_apart(fake_assay):
    fake = fake_assay()

    async def main():
        async with AsyncAssay(fake.url, batch_window_ms=300, retry=FAST) as a:
            first = asyncio.ensure_future(a.reward({"verifier": "v", "response": "ab"}))
            await asyncio.sleep(0.05)
            second = asyncio.ensure_future(a.reward({"verifier": "v", "response": "abc"}))
            return await first, await second

    assert asyncio.run(main()) == (2.0, 3.0)
    assert items_of(fake) == [["ab", "abc"]]


def test_awaits_cancelled_before_the_batch_leaves_are_not_sent(fake_assay):
    fake = fake_assay()

    async def main():
        async with AsyncAssay(fake.url, batch_window_ms=200, retry=FAST) as a:
            tasks = [asyncio.ensure_future(a.reward({"verifier": "v", "response": "r" * i})) for i in range(10)]
            await asyncio.sleep(0.02)
            for t in tasks[:3]:
                t.cancel()
            return await asyncio.gather(*tasks[3:]), [t.cancelled() for t in tasks[:3]]

    got, cancelled = asyncio.run(main())
    assert got == [float(i) for i in range(3, 10)] and cancelled == [True] * 3
    assert items_of(fake) == [["r" * i for i in range(3, 10)]]


def test_awaits_cancelled_in_flight_do_not_poison_their_batch(fake_assay):
    fake = fake_assay(delay=0.3)

    async def main():
        async with AsyncAssay(fake.url, batch_window_ms=0, retry=FAST) as a:
            tasks = [asyncio.ensure_future(a.reward({"verifier": "v", "response": "r" * i})) for i in range(10)]
            await asyncio.sleep(0.1)  # the batch is at the server
            for t in tasks[::2]:
                t.cancel()
            rest = await asyncio.gather(*tasks[1::2])
            return rest, [t.cancelled() for t in tasks[::2]]

    rest, cancelled = asyncio.run(main())
    assert rest == [float(i) for i in range(1, 10, 2)] and all(cancelled)
    assert len(items_of(fake)) == 1


def test_a_batch_whose_awaits_are_all_cancelled_is_aborted(fake_assay):
    fake = fake_assay(delay=3.0)

    async def main():
        a = AsyncAssay(fake.url, batch_window_ms=0, retry=FAST)
        tasks = [asyncio.ensure_future(a.reward({"verifier": "v", "response": "x"})) for _ in range(5)]
        await asyncio.sleep(0.2)
        st = a._state()
        assert len(st.tasks) == 1 and len(fake.requests) == 1
        t0 = time.monotonic()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(0.05)
        left, waited = len(st.tasks), time.monotonic() - t0  # the request task is gone, not waiting 3 s
        await a.aclose()
        return left, waited

    left, waited = asyncio.run(main())
    assert left == 0 and waited < 2.0


def test_429_then_200_waits_what_retry_after_asks(fake_assay):
    busy = json.dumps({"error": "busy"}).encode()
    fake = fake_assay([(429, {"Retry-After": "0.5"}, busy), (503, {"Retry-After": "0.3"}, busy)])

    async def main():
        async with AsyncAssay(fake.url, retry=FAST) as a:
            return await a.reward({"verifier": "v", "response": "four"}, deadline=10)

    assert asyncio.run(main()) == 4.0
    at = [r["at"] for r in fake.requests]
    assert len(at) == 3 and at[1] - at[0] >= 0.45 and at[2] - at[1] >= 0.25


def test_a_retry_after_past_the_deadline_fails_at_once_instead_of_sleeping(fake_assay):
    fake = fake_assay([(503, {"Retry-After": "30"}, json.dumps({"error": "draining"}).encode())])
    fast = RetryPolicy(max_retries=3, backoff=0.01, max_backoff=60)

    async def main():
        async with AsyncAssay(fake.url, retry=fast) as a:
            t0 = time.monotonic()
            with pytest.raises(AssayDeadlineError, match="deadline"):
                await a.reward({"verifier": "v", "response": "x"}, deadline=2)
            with pytest.raises(asyncio.TimeoutError):  # it is a TimeoutError too
                await a.score_batch([{"verifier": "v", "response": "x"}], deadline=0.0)
            return time.monotonic() - t0

    assert asyncio.run(main()) < 1.5
    assert len(fake.requests) == 1


def test_a_slow_server_fails_the_await_at_its_deadline(fake_assay):
    fake = fake_assay(delay=3.0)

    async def main():
        async with AsyncAssay(fake.url, retry=FAST) as a:
            t0 = time.monotonic()
            with pytest.raises(AssayDeadlineError):
                await a.reward({"verifier": "v", "response": "x"}, deadline=0.5)
            waited = time.monotonic() - t0
            await asyncio.sleep(0.05)
            return waited, len(a._state().tasks)

    waited, requests_left = asyncio.run(main())
    assert waited < 2.0 and requests_left == 0  # the request whose only awaiter gave up is aborted


def test_nulls_stay_none_and_a_refused_batch_fails_every_awaiter_with_the_servers_words(fake_assay):
    fake = fake_assay([(401, {}, json.dumps({"error": "missing API key; send Authorization: Bearer <key>"}).encode())])

    async def main():
        async with AsyncAssay(fake.url, retry=FAST, batch_window_ms=20) as a:
            refused = await asyncio.gather(a.reward({"response": "a"}), a.reward({"response": "b"}), return_exceptions=True)
            nulls = await asyncio.gather(a.reward({"response": "ab", "null": True}), a.reward({"response": "ab"}))
            return refused, nulls

    refused, nulls = asyncio.run(main())
    assert all(isinstance(e, AssayError) and e.status == 401 and "Bearer" in str(e) for e in refused)
    assert nulls == [None, 2.0]


def test_without_micro_batching_each_call_is_its_own_request(fake_assay):
    fake = fake_assay()

    async def main():
        async with AsyncAssay(fake.url, micro_batch=False, retry=FAST) as a:
            return await asyncio.gather(*(a.reward({"verifier": "v", "response": "r" * i}) for i in range(5)))

    assert asyncio.run(main()) == [float(i) for i in range(5)]
    assert sorted(r["path"] for r in fake.requests) == ["/reward"] * 5


def test_closing_the_client_fails_the_awaits_still_waiting_instead_of_hanging(fake_assay):
    fake = fake_assay()

    async def main():
        a = AsyncAssay(fake.url, batch_window_ms=10_000, retry=FAST)
        waiting = asyncio.ensure_future(a.reward({"verifier": "v", "response": "x"}))
        await asyncio.sleep(0.05)
        await a.aclose()
        with pytest.raises(AssayError, match="closed"):
            await asyncio.wait_for(waiting, 5)

    asyncio.run(main())
    assert fake.requests == []


def test_a_client_shared_across_asyncio_runs_leaves_no_unclosed_session(fake_assay):
    """Adapters keep one client per process; each asyncio.run's session closes with its loop."""
    import subprocess
    import sys
    from pathlib import Path

    fake = fake_assay()
    code = ("import asyncio, gc\nfrom assay_client.aio import AsyncAssay\n"
            f"c = AsyncAssay({fake.url!r})\n"
            "for r in ('ab', 'abc'):\n    print(asyncio.run(c.reward({'verifier': 'v', 'response': r})))\n"
            "gc.collect()\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=Path(__file__).resolve().parents[1],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.split() == ["2.0", "3.0"], out.stderr
    assert "Unclosed" not in out.stderr, out.stderr


# ---- results checked against their items; ids; body limit; the gate and the deadline; bad items --

def test_micro_batched_results_whose_ids_are_not_the_items_are_refused(fake_assay):
    swapped = {"results": [{"id": "b", "reward": 1.0, "status": "ok"}, {"id": "a", "reward": 0.0, "status": "ok"}]}
    fake = fake_assay([(200, {}, json.dumps(swapped).encode())])

    async def main():
        async with AsyncAssay(fake.url, batch_window_ms=50, retry=FAST) as a:
            return await asyncio.gather(a.reward({"id": "a", "verifier": "v", "response": "x"}),
                                        a.reward({"id": "b", "verifier": "v", "response": "y"}),
                                        return_exceptions=True)

    got = asyncio.run(main())
    assert len(items_of(fake)) == 1
    assert all(isinstance(e, AssayError) and "carries id 'b', not the item's 'a'" in str(e) for e in got), got


def test_micro_batched_ids_the_server_refuses_fail_alone_and_big_ints_are_the_callers(fake_assay):
    fake = fake_assay()
    big = 2 ** 60

    async def main():
        async with AsyncAssay(fake.url, batch_window_ms=50, retry=FAST) as a:
            singles = await asyncio.gather(a.score({"id": 1, "verifier": "v", "response": "a"}),
                                           a.score({"id": [1], "verifier": "v", "response": "bb"}),
                                           a.score({"id": big, "verifier": "v", "response": "ccc"}),
                                           return_exceptions=True)
            batch = await a.score_batch([{"id": big, "verifier": "v", "response": "dd"},
                                         {"id": {"no": 1}, "verifier": "v", "response": "e"}])
            return singles, batch

    (one, bad, third), batch = asyncio.run(main())
    assert one["id"] == 1 and one["reward"] == 1.0
    assert isinstance(bad, AssayError) and bad.status == 400 and bad.field == "id"
    assert third["id"] == big and third["reward"] == 3.0
    assert batch[0]["id"] == big and batch[0]["reward"] == 2.0
    assert batch[1]["status"] == "invalid" and batch[1]["details"]["field"] == "id"
    assert fake.requests[0]["body"]["items"][2]["id"] == str(big)


def test_explicit_batches_over_the_body_limit_are_halved(fake_assay):
    fake = fake_assay(max_body=50_000)
    items = [{"id": i, "verifier": "v", "response": "r" * 4_000} for i in range(40)]

    async def main():
        async with AsyncAssay(fake.url, retry=FAST) as a:
            return await a.reward_batch(items)

    assert asyncio.run(main()) == [4000.0] * 40
    ok = [r for r in fake.requests if r["status"] is None]
    assert sorted(it["id"] for r in ok for it in r["body"]["items"]) == list(range(40))  # each item once
    assert all(r["length"] <= 50_000 for r in ok) and any(r["status"] == 413 for r in fake.requests)


def test_waiting_for_a_connection_slot_counts_against_the_deadline(fake_assay):
    fake = fake_assay(delay=1.5)

    async def main():
        async with AsyncAssay(fake.url, concurrency=1, retry=FAST) as a:
            busy = asyncio.ensure_future(a.score_batch([{"verifier": "v", "response": "ab"}], deadline=10))
            await asyncio.sleep(0.1)  # it holds the only slot now
            t0 = time.monotonic()
            with pytest.raises(AssayDeadlineError):
                await a.score_batch([{"verifier": "v", "response": "x"}], deadline=0.3)
            waited = time.monotonic() - t0
            return waited, await busy

    waited, first = asyncio.run(main())
    assert waited < 1.0, waited  # not the 1.5 s the slot was busy, plus the 0.3 s
    assert first[0]["reward"] == 2.0
    assert len(fake.requests) == 1  # the late one was never sent


def test_an_item_json_cannot_encode_fails_its_own_await_only(fake_assay):
    fake = fake_assay()

    async def main():
        async with AsyncAssay(fake.url, batch_window_ms=50, retry=FAST) as a:
            return await asyncio.gather(a.reward({"verifier": "v", "response": "ab"}),
                                        a.reward({"verifier": "v", "response": "x", "options": {"k": object()}}),
                                        a.reward({"verifier": "v", "response": "abc"}),
                                        return_exceptions=True)

    good, bad, also_good = asyncio.run(main())
    assert (good, also_good) == (2.0, 3.0)
    assert isinstance(bad, TypeError) and "not JSON serializable" in str(bad)
    assert items_of(fake) == [["ab", "abc"]]

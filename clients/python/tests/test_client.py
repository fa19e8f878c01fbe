"""AssayClient and AsyncAssayClient against the live server, and retries against a scripted fake."""
from __future__ import annotations

import asyncio
import json
import time

import pytest

from assay_client import AssayClient, AssayError, AsyncAssayClient, RetryPolicy
from conftest import free_port

FAST = RetryPolicy(max_retries=3, backoff=0.01, max_backoff=2.0)


def exact_items(n: int):
    """Even items answer right (reward 1), odd ones wrong (reward 0); every 7th is malformed (null)."""
    items = []
    for i in range(n):
        if i % 7 == 3:
            items.append({"id": i, "verifier": "no-such-verifier", "response": "x"})
        else:
            items.append({"id": i, "verifier": "exact", "response": f"answer {i}",
                          "reference": f"answer {i}" if i % 2 == 0 else "something else"})
    return items


def expected(i: int):
    return None if i % 7 == 3 else (1.0 if i % 2 == 0 else 0.0)


# ---- live server ------------------------------------------------------------------------------

def test_reward_one_item(assay_url):
    c = AssayClient(assay_url)
    assert c.reward({"verifier": "exact", "response": " Paris ", "reference": "paris"}) == 1
    assert c.reward({"verifier": "exact", "response": "Lyon", "reference": "paris"}) == 0
    full = c.score({"id": "q", "verifier": "exact", "response": "Lyon", "reference": "paris"})
    assert full["id"] == "q" and full["status"] == "ok" and full["reason"]


def test_the_readme_shows_what_the_client_returns(assay_url):
    """README.md's `c.reward(...)   # 1` line, run: the value and its Python type (an int for a JSON 1)."""
    import re
    from pathlib import Path
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    m = re.search(r"^c\.reward\((\{.*\})\)\s+# (\S+)$", readme, re.M)
    assert m, "README.md has the c.reward(...) example"
    assert repr(AssayClient(assay_url).reward(json.loads(m.group(1)))) == m.group(2)


def test_a_malformed_single_item_raises_and_names_the_field(assay_url):
    with pytest.raises(AssayError) as e:
        AssayClient(assay_url).reward({"verifier": "exact", "response": "x", "reference": {"not": "a string"}})
    assert e.value.status == 400 and e.value.field


def test_batch_keeps_order_over_concurrent_chunks_and_gives_none_for_nulls(assay_url):
    items = exact_items(1000)
    c = AssayClient(assay_url, chunk_size=37, concurrency=4)
    results = c.score_batch(items)
    assert [r["id"] for r in results] == list(range(1000))
    assert c.reward_batch(items) == [expected(i) for i in range(1000)]
    assert c.reward_batch([]) == []


def test_async_client_keeps_order_and_nulls(assay_url):
    items = exact_items(300)

    async def run():
        async with AsyncAssayClient(assay_url, chunk_size=16, concurrency=3) as c:
            one = await c.reward(items[0])
            many = await c.reward_batch(items)
            return one, many

    one, many = asyncio.run(run())
    assert one == 1.0
    assert many == [expected(i) for i in range(300)]


def test_url_and_key_from_the_environment(monkeypatch, fake_assay):
    fake = fake_assay()
    monkeypatch.setenv("ASSAY_URL", fake.url)
    monkeypatch.setenv("ASSAY_API_KEY", "sekrit")
    assert AssayClient().reward_batch([{"verifier": "v", "response": "abc"}]) == [3.0]
    assert fake.requests[0]["headers"]["Authorization"] == "Bearer sekrit"


# ---- retries, against a scripted fake ---------------------------------------------------------

def test_retries_5xx_then_succeeds(fake_assay):
    fake = fake_assay([(503, {}, b'{"error":"busy"}'), (502, {}, b"bad gateway"), (500, {}, b"{}")])
    c = AssayClient(fake.url, retry=FAST)
    assert c.reward_batch([{"verifier": "v", "response": "abcd"}, {"verifier": "v", "response": "", "null": True}]) == [4.0, None]
    assert len(fake.requests) == 4


def test_429_waits_as_long_as_retry_after_says(fake_assay):
    fake = fake_assay([(429, {"Retry-After": "1"}, b'{"error":"too many items in flight"}')])
    c = AssayClient(fake.url, retry=RetryPolicy(max_retries=3, backoff=0.001, max_backoff=5))
    t0 = time.monotonic()
    assert c.reward_batch([{"verifier": "v", "response": "ab"}]) == [2.0]
    waited = fake.requests[1]["at"] - fake.requests[0]["at"]
    assert 0.9 <= waited < 3, waited
    assert time.monotonic() - t0 < 4


def test_dropped_connections_are_retried(fake_assay):
    fake = fake_assay([(0, {}, None), (0, {}, None)])
    assert AssayClient(fake.url, retry=FAST).reward_batch([{"verifier": "v", "response": "xyz"}]) == [3.0]
    assert len(fake.requests) == 3


def test_a_refused_connection_gives_up_with_a_clear_error():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(AssayError, match="cannot reach Assay"):
        AssayClient(url, retry=RetryPolicy(max_retries=2, backoff=0.01)).reward_batch([{"verifier": "v", "response": "x"}])


def test_client_errors_are_not_retried(fake_assay):
    fake = fake_assay([(400, {}, json.dumps({"error": "items[0].verifier is required", "field": "verifier"}).encode())])
    with pytest.raises(AssayError) as e:
        AssayClient(fake.url, retry=FAST).reward_batch([{"response": "x"}])
    assert e.value.status == 400 and e.value.field == "verifier" and "verifier is required" in str(e.value)
    assert len(fake.requests) == 1


def test_retries_run_out_on_a_server_that_keeps_failing(fake_assay):
    fake = fake_assay([(500, {}, b'{"error":"boom"}')] * 10)
    with pytest.raises(AssayError) as e:
        AssayClient(fake.url, retry=FAST).reward_batch([{"verifier": "v", "response": "x"}])
    assert e.value.status == 500
    assert len(fake.requests) == FAST.max_retries + 1


def test_a_failing_chunk_is_retried_alone_and_order_is_kept(fake_assay):
    # The first request (whichever chunk it is) fails once; only it is sent again.
    fake = fake_assay([(503, {}, b"{}")])
    items = [{"verifier": "v", "response": "x" * i} for i in range(50)]
    c = AssayClient(fake.url, chunk_size=10, concurrency=3, retry=FAST)
    assert c.reward_batch(items) == [float(i) for i in range(50)]
    assert len(fake.requests) == 6
    assert sorted(len(r["body"]["items"]) for r in fake.requests) == [10] * 6


def test_results_whose_ids_are_not_the_items_are_refused_not_used(fake_assay):
    # Rewards are taken by position; results for other items (or in another order) used to be
    # paid to whichever rollout sat at that position.
    swapped = {"results": [{"id": "b", "reward": 1.0, "status": "ok"}, {"id": "a", "reward": 0.0, "status": "ok"}]}
    fake = fake_assay([(200, {}, json.dumps(swapped).encode())])
    items = [{"id": "a", "verifier": "v", "response": "x"}, {"id": "b", "verifier": "v", "response": "y"}]
    with pytest.raises(AssayError, match="carries id 'b', not the item's 'a'"):
        AssayClient(fake.url, retry=FAST).reward_batch(items)
    missing = {"results": [{"reward": 1.0, "status": "ok"}]}
    fake = fake_assay([(200, {}, json.dumps(missing).encode())])
    with pytest.raises(AssayError, match="carries id None"):
        AssayClient(fake.url, retry=FAST).reward_batch(items[:1])
    fake = fake_assay()  # echoes each item's id: used as before, ids or none
    assert AssayClient(fake.url, retry=FAST).reward_batch(items + [{"verifier": "v", "response": "zzz"}]) == [1.0, 1.0, 3.0]


def test_chunks_go_out_concurrently_up_to_the_limit(fake_assay):
    fake = fake_assay(delay=0.15)
    items = [{"verifier": "v", "response": "x"} for _ in range(80)]
    t0 = time.monotonic()
    assert AssayClient(fake.url, chunk_size=10, concurrency=4).reward_batch(items) == [1.0] * 80
    elapsed = time.monotonic() - t0
    assert 2 <= fake.max_inflight <= 4  # concurrent, and never past the cap
    assert elapsed < 8 * 0.15  # 8 chunks, 4 at a time: about 2 rounds, not 8


def test_async_client_retries_too(fake_assay):
    fake = fake_assay([(503, {"Retry-After": "0"}, b"{}"), (0, {}, None)])

    async def run():
        c = AsyncAssayClient(fake.url, chunk_size=2, concurrency=2, retry=FAST)
        return await c.reward_batch([{"verifier": "v", "response": "a" * i, "null": i == 2} for i in range(5)])

    assert asyncio.run(run()) == [0.0, 1.0, None, 3.0, 4.0]
    assert len(fake.requests) == 5


def test_client_and_trl_reward_survive_pickling(assay_url):
    import pickle

    from assay_client.trl import AssayReward

    c = AssayClient(assay_url, chunk_size=2)
    c.reward_batch(exact_items(5))  # the pool and connections exist now
    c2 = pickle.loads(pickle.dumps(c))
    assert c2.reward_batch(exact_items(5)) == [expected(i) for i in range(5)]
    f = pickle.loads(pickle.dumps(AssayReward(verifier="exact", url=assay_url)))
    assert f(prompts=["q"], completions=["a"], reference=["a"]) == [1.0]
    c.close()
    c2.close()


def test_a_slow_server_fails_a_blocking_call_at_its_deadline(fake_assay):
    """The deadline bounds each exchange's socket waits, not only the pauses between tries: a
    server that takes 3 s fails a 0.5 s call in about 0.5 s (it waited the transport's 120 s)."""
    fake = fake_assay(delay=3.0)
    c = AssayClient(fake.url, retry=FAST)
    t0 = time.monotonic()
    with pytest.raises(AssayError, match="deadline"):
        c.score_batch([{"verifier": "v", "response": "x"}], deadline=0.5)
    assert time.monotonic() - t0 < 2.0

    async def main():
        t = time.monotonic()
        with pytest.raises(AssayError, match="deadline"):
            await AsyncAssayClient(fake.url, retry=FAST).score_batch([{"verifier": "v", "response": "x"}], deadline=0.5)
        return time.monotonic() - t

    assert asyncio.run(main()) < 2.0


# ---- ids the server cannot hold, bodies over its limit, the TRL adapter's deadline ----------------

BIG = 2 ** 60  # beyond 2**53: JavaScript would echo 1152921504606847000


def test_an_id_the_server_refuses_fails_its_item_alone_and_big_int_ids_go_as_strings(fake_assay):
    """The fake answers as the server does: an id it refuses (a list; an int beyond +-(2**53-1))
    comes back invalid with details.field "id" and no id. That fails its own item, not the batch;
    and an int id beyond 2**53 goes out as its decimal string and comes back as the caller's int."""
    fake = fake_assay()
    items = [{"id": 1, "verifier": "v", "response": "a"},
             {"id": BIG, "verifier": "v", "response": "bb"},
             {"id": [7], "verifier": "v", "response": "ccc"},
             {"id": -BIG - 1, "verifier": "v", "response": "dddd"},
             {"id": "s", "verifier": "v", "response": "eeeee"}]
    results = AssayClient(fake.url, retry=FAST).score_batch(items)
    assert [r.get("id") for r in results] == [1, BIG, None, -BIG - 1, "s"]
    assert [r["reward"] for r in results] == [1.0, 2.0, None, 4.0, 5.0]
    assert results[2]["status"] == "invalid" and results[2]["details"]["field"] == "id"
    sent = fake.requests[0]["body"]["items"]
    assert [it["id"] for it in sent] == [1, str(BIG), [7], str(-BIG - 1), "s"]
    assert items[1]["id"] == BIG  # the caller's item is left as it was
    # one item through /reward: the same
    assert AssayClient(fake.url, retry=FAST).score({"id": BIG, "verifier": "v", "response": "xy"})["id"] == BIG

    async def run():
        async with AsyncAssayClient(fake.url, chunk_size=2, retry=FAST) as c:
            return await c.score_batch(items), await c.score({"id": BIG, "verifier": "v", "response": "z"})

    many, one = asyncio.run(run())
    assert [r.get("id") for r in many] == [1, BIG, None, -BIG - 1, "s"] and one["id"] == BIG


def test_big_int_ids_come_back_as_the_callers_from_the_live_server(assay_url):
    item = {"id": BIG, "verifier": "exact", "response": "Paris", "reference": "paris"}
    c = AssayClient(assay_url)
    assert [(r["id"], r["reward"]) for r in c.score_batch([item, dict(item, id=BIG + 1)])] == [(BIG, 1), (BIG + 1, 1)]
    assert c.score(item)["id"] == BIG


def _big_items(n: int, size: int):
    return [{"id": i, "verifier": "v", "response": chr(97 + i % 26) * size} for i in range(n)]


def test_a_chunk_over_the_body_limit_is_halved_until_it_fits(fake_assay):
    fake = fake_assay(max_body=50_000)
    items = _big_items(40, 4_000)  # ~160 KB in one chunk; ~12 items fit under the limit
    want = [4000.0] * 40
    assert AssayClient(fake.url, retry=FAST).reward_batch(items) == want
    ok = [r for r in fake.requests if r["status"] is None]
    assert [it["id"] for r in ok for it in r["body"]["items"]] == list(range(40))  # each item once
    assert all(r["length"] <= 50_000 for r in ok) and any(r["status"] == 413 for r in fake.requests)

    async def run():
        async with AsyncAssayClient(fake.url, chunk_size=30, retry=FAST) as c:
            return await c.reward_batch(items)

    assert asyncio.run(run()) == want
    # a single item over the limit still raises, with the server's words
    with pytest.raises(AssayError) as e:
        AssayClient(fake.url, retry=FAST).reward_batch(_big_items(1, 60_000))
    assert e.value.status == 413


def test_trl_reward_over_the_live_servers_body_limit_is_split():
    """AssayReward of completions whose batch is over ASSAY_MAX_BODY: scored, not HTTP 413."""
    from assay_client.trl import AssayReward
    from conftest import serve_assay

    with serve_assay(ASSAY_MAX_BODY="64kb") as url:
        f = AssayReward(verifier="exact", url=url)
        completions = [("yes " * 1000) if i % 2 else ("no " * 1000) for i in range(64)]  # ~200 KB
        assert f(prompts=["q"] * 64, completions=completions, reference=[("yes " * 1000)] * 64) == \
            [float(i % 2) for i in range(64)]
        with pytest.raises(AssayError) as e:
            f.client.reward_batch([{"verifier": "exact", "response": "x" * 70_000, "reference": "x"}])
        assert e.value.status == 413


def test_trl_as_async_keeps_the_clients_deadline(fake_assay):
    from assay_client.trl import AssayReward

    fake = fake_assay(delay=3.0)
    f = AssayReward(verifier="v", client=AssayClient(fake.url, retry=FAST, deadline=0.5)).as_async()
    t0 = time.monotonic()
    with pytest.raises(AssayError, match="deadline"):
        asyncio.run(f(prompts=["q"], completions=["a"]))
    assert time.monotonic() - t0 < 2.0


def test_ids_of_items_that_are_mappings_but_not_dicts_are_checked_too(fake_assay):
    from types import MappingProxyType

    swapped = {"results": [{"id": "b", "reward": 1.0, "status": "ok"}, {"id": "a", "reward": 0.0, "status": "ok"}]}
    fake = fake_assay([(200, {}, json.dumps(swapped).encode())])
    items = [MappingProxyType({"id": "a", "verifier": "v", "response": "x"}),
             MappingProxyType({"id": "b", "verifier": "v", "response": "y"})]
    with pytest.raises(AssayError, match="carries id 'b', not the item's 'a'"):
        AssayClient(fake.url, retry=FAST).reward_batch(items)
    assert AssayClient(fake.url, retry=FAST).reward_batch(items) == [1.0, 1.0]  # echoed: used

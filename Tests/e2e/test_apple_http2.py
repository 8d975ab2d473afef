"""Calls to Apple over HTTP/2 (issue 15, "memory per call in flight"): the service offers h2 by ALPN,
carries calls at once as streams of one connection (AppleClient's MultiplexGate), still answers every
fault as before (a dropped call is a reset stream, not a closed connection), and falls back to a
connection per call when the server speaks HTTP/1.1 only. The simulator counts verifyReceipt requests
and open connections per protocol (`GET /stats`)."""
from concurrent.futures import ThreadPoolExecutor

import pytest

from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id, wait_until

CONCURRENT = 8  # the test stack's IAP_APPLE_MAX_CALLS
CALLS_PER_ENVIRONMENT = 3  # the service's retry policy


def new_receipt(receipts):
    return receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])


def close_idle_connections(simulator, http2):
    """Sets whether the simulator offers h2; the change closes its idle connections, so the next
    calls make new ones. Then zeroes the counters; returns the connections still open (another
    thread of the service may have connected again meanwhile), from which `max_` counts start.

    Each change closes the connections of the protocol it stops (h2 offered: the service takes no
    HTTP/1.1 connection; not offered: no h2 one), and the simulator counts a connection closed once its
    transport reports it: that protocol's count falling to 0 says the old connections are gone."""
    for offered in (not http2, http2):
        simulator.control(http2=offered)
        stopped = "http1" if offered else "http2"
        wait_until(lambda: simulator.stats()[stopped + "_connections"] == 0, 10,
                   f"the simulator's {stopped} connections closed")
    simulator.reset_stats()
    return simulator.stats()["connections"]


def verify_at_once(api, receipts, count):
    """`count` new receipts posted at once; returns their answers."""
    made = [(new_receipt(receipts), new_user_id()) for _ in range(count)]
    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(lambda pair: api.verify(pair[0], user_id=pair[1]), made))


def delivered_at_once(api, simulator, receipts, count):
    """`count` new receipts posted at once, each answered delivered; returns the simulator's counters."""
    for answer in verify_at_once(api, receipts, count):
        assert_verify_answer(answer, "delivered")
    return simulator.stats()


def test_a_verification_goes_over_http2(api, db, simulator, receipts):
    close_idle_connections(simulator, http2=True)
    receipt = new_receipt(receipts)

    body = assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "delivered")

    stats = simulator.stats()
    assert (stats["http2_requests"], stats["http1_requests"]) == (1, 0), stats
    assert stats["max_http1_connections"] == 0, stats
    [tid] = [t["transaction_id"] for t in body["transactions"]]
    assert db.transaction(tid)["transaction_id"] == tid


def test_calls_at_once_share_one_connection(api, simulator, receipts):
    open_before = close_idle_connections(simulator, http2=True)
    simulator.control(latency_ms=500)  # every call is under way while the others start

    stats = delivered_at_once(api, simulator, receipts, CONCURRENT)

    assert stats["http2_requests"] == CONCURRENT and stats["http1_requests"] == 0, stats
    assert stats["max_inflight"] > 1, f"the calls did not overlap: {stats}"
    new_connections = stats["max_http2_connections"] - open_before
    assert new_connections <= 1, f"{CONCURRENT} calls at once took {new_connections} new connections: {stats}"


def test_a_server_without_http2_gets_a_connection_per_call(api, simulator, receipts):
    close_idle_connections(simulator, http2=False)
    simulator.control(latency_ms=500)

    stats = delivered_at_once(api, simulator, receipts, CONCURRENT)

    assert stats["http1_requests"] == CONCURRENT and stats["http2_requests"] == 0, stats
    assert stats["max_http1_connections"] > 1, f"HTTP/1.1 calls at once must not wait for one connection: {stats}"

    # Back to HTTP/2: the service takes it again on its next connections.
    close_idle_connections(simulator, http2=True)
    assert_verify_answer(api.verify(new_receipt(receipts), user_id=new_user_id()), "delivered")
    stats = delivered_at_once(api, simulator, receipts, 4)
    assert stats["http2_requests"] == 5 and stats["http1_requests"] == 0, stats


HTTP2_FAULTS = {
    "stream reset (dropped call)": {"drop_connection": True, "fail_next": 0},
    "slower than the timeout": {"latency_ms": 2500},  # the test stack's IAP_APPLE_TIMEOUT_MS is 2000
    "Apple unavailable (21005)": {"force_status": 21005, "fail_next": 0},
}


@pytest.mark.parametrize("fault", HTTP2_FAULTS.values(), ids=HTTP2_FAULTS.keys())
def test_faults_over_http2_defer_delivery_until_apple_recovers(api, db, simulator, receipts, fault):
    close_idle_connections(simulator, http2=True)
    receipt, user_id = new_receipt(receipts), new_user_id()
    simulator.control(**fault)

    answers = verify_at_once(api, receipts, 3) + [api.verify(receipt, user_id=user_id)]

    for answer in answers:
        assert_verify_answer(answer, "retry_later")
    stats = simulator.stats()
    assert stats["http2_requests"] >= 4 and stats["http1_requests"] == 0, stats
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE user_id = %s", user_id) == 0

    simulator.reset()
    body = assert_verify_answer(api.verify(receipt, user_id=user_id), "delivered")
    assert [t["state"] for t in body["transactions"]] == ["delivered"]
    assert db.scalar("SELECT COUNT(*) FROM transactions WHERE user_id = %s", user_id) == 1


def test_each_reset_stream_is_one_call_the_retry_policy_counts(api, db, simulator, receipts):
    """libcurl may send a request again by itself; over HTTP/2 as over HTTP/1.1 (test_apple_retry_budget.py)
    every call that reaches Apple must be one the policy counted: 3 per request, one at a time or many."""
    delivered_at_once(api, simulator, receipts, CONCURRENT)  # connections to reuse
    simulator.control(drop_connection=True, fail_next=0)
    simulator.reset_stats()

    assert_verify_answer(api.verify(new_receipt(receipts), user_id=new_user_id()), "retry_later")
    assert_verify_answer(verify_at_once(api, receipts, 1)[0], "retry_later")
    for answer in verify_at_once(api, receipts, CONCURRENT):
        assert_verify_answer(answer, "retry_later")

    stats = simulator.stats()
    assert stats["production"]["requests"] == CALLS_PER_ENVIRONMENT * (CONCURRENT + 2), stats["production"]
    assert stats["production"]["dropped"] == stats["production"]["requests"]
    assert stats["sandbox"]["requests"] == 0
    assert stats["http2_requests"] == stats["production"]["requests"] and stats["http1_requests"] == 0, stats


def test_a_reset_stream_leaves_the_other_calls_on_the_connection_alone(api, simulator, receipts):
    close_idle_connections(simulator, http2=True)
    simulator.control(latency_ms=700)
    with ThreadPoolExecutor(CONCURRENT) as pool:
        good = [pool.submit(api.verify, new_receipt(receipts), user_id=new_user_id()) for _ in range(CONCURRENT - 1)]
        wait_until(lambda: simulator.stats()["inflight"] >= CONCURRENT - 1, 5, "the calls under way")
        simulator.control(drop_connection=True, fail_next=1)  # the next request's stream is reset
        dropped = pool.submit(api.verify, new_receipt(receipts), user_id=new_user_id())
        answers = [future.result() for future in good] + [dropped.result()]

    for answer in answers:
        assert_verify_answer(answer, "delivered")  # the dropped call was called again, and answered
    stats = simulator.stats()
    assert stats["production"]["dropped"] == 1, stats
    assert stats["http2_requests"] == CONCURRENT + 1 and stats["http1_requests"] == 0, stats

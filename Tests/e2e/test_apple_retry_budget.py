"""The retry policy's bounds, as Apple sees them (issue 10, item 10).

Every call that reaches Apple must be one the retry policy counted: at most 3 per environment, however
the connections in libcurl's pool die. And the policy's retries are spread over the budget
(IAP_APPLE_TIMEOUT_MS, the limit on one receipt's whole conversation with Apple): a passing 21002 burst
is outlived; one that lasts through every retry is `not_paid` (docs/api.md), after calls spread over the budget.
"""
import base64
import hashlib
import os
import time
from concurrent.futures import ThreadPoolExecutor

from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id

CALLS_PER_ENVIRONMENT = 3   # the service's retry policy
WARM_CONNECTIONS = 8        # the test stack's IAP_APPLE_MAX_CALLS: libcurl keeps that many connections
BUDGET_MS = int(os.environ.get("IAP_APPLE_TIMEOUT_MS", "2000"))


def new_receipt(receipts):
    bought = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    return receipts.app_receipt([bought]), bought["transaction_id"]


def receipt_sha256(receipt_data):
    return hashlib.sha256(base64.b64decode(receipt_data)).hexdigest()


def verify_all(api, made):
    with ThreadPoolExecutor(len(made)) as pool:
        return list(pool.map(lambda receipt: api.verify(receipt[0], user_id=new_user_id()), made))


def warm_the_connection_pool(api, simulator, receipts):
    """WARM_CONNECTIONS verifications at once, each answered after 300 ms, over HTTP/1.1 (over HTTP/2 they
    would share one connection: test_apple_http2.py): libcurl opens a connection for each and keeps them
    all alive for the calls that follow. Returns the open connections."""
    simulator.control(http2=False, latency_ms=300)
    for response in verify_all(api, [new_receipt(receipts) for _ in range(WARM_CONNECTIONS)]):
        assert_verify_answer(response, "delivered")
    simulator.control(latency_ms=0)
    return simulator.stats()["http1_connections"]


def test_each_dropped_call_reaches_apple_once_even_on_kept_alive_connections(api, db, simulator, receipts):
    """Apple reads each request and closes the connection without answering. On a reused connection
    libcurl would send the request again by itself, on the next kept-alive connection, up to 5 times per
    call: calls the policy never counted. Each request must reach Apple exactly as often as the policy
    says, one at a time and many at once."""
    for _ in range(3):
        assert warm_the_connection_pool(api, simulator, receipts) >= 4, "libcurl kept no connections to reuse"
        simulator.control(drop_connection=True)
        simulator.reset_stats()
        receipt, tid = new_receipt(receipts)

        assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "retry_later")

        stats = simulator.stats()
        assert stats["production"]["requests"] == CALLS_PER_ENVIRONMENT, \
            f"calls that reached Apple for one request: {stats['production']}"
        assert stats["sandbox"]["requests"] == 0
        assert db.transaction(tid) is None
        simulator.control(drop_connection=False)

    warm_the_connection_pool(api, simulator, receipts)
    simulator.control(drop_connection=True)
    simulator.reset_stats()
    made = [new_receipt(receipts) for _ in range(WARM_CONNECTIONS)]

    for response in verify_all(api, made):
        assert_verify_answer(response, "retry_later")

    assert simulator.stats()["production"]["requests"] == CALLS_PER_ENVIRONMENT * len(made)


def test_a_21002_burst_shorter_than_the_retries_is_outlived(api, db, simulator, receipts):
    """Apple answers 21002 to the first two calls, however long they take, then answers: the third call
    delivers the purchase. Apple saw the calls spread over the budget (the second at least B/16 after the
    first, the third at least B/4 after it), so a burst of 21002 shorter than that is outlived (before the fix
    the three calls came within 0.41 s at any budget)."""
    receipt, tid = new_receipt(receipts)
    simulator.control(force_status=21002, fail_next=CALLS_PER_ENVIRONMENT - 1)

    body = assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "delivered")

    assert body["transactions"][0]["transaction_id"] == tid
    stats = simulator.stats()
    assert stats["production"]["status"] == {"21002": 2, "0": 1}, f"Apple's answers: {stats['production']}"
    assert_spread_over_the_budget(stats["arrived_ms"]["production"])


def test_a_21002_through_every_retry_is_not_paid_after_calls_spread_over_the_budget(api, db, simulator, receipts):
    """A 21002 burst longer than the whole budget: all three calls get 21002 and the answer is not_paid
    (docs/api.md), but only after the retries waited at least B/16 and 3B/16 (before the fix the three calls came
    within 0.41 s at any budget, so a passing fault of a second became a lost purchase)."""
    receipt, tid = new_receipt(receipts)
    simulator.control(force_status=21002)
    started = time.monotonic()

    body = assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "not_paid")

    elapsed_ms = (time.monotonic() - started) * 1000
    assert body["apple_status"] == 21002
    assert simulator.requests_to("production") == CALLS_PER_ENVIRONMENT
    assert elapsed_ms >= BUDGET_MS / 4, f"three calls within {elapsed_ms:.0f} ms: the retries are not spread"
    assert_spread_over_the_budget(simulator.stats()["arrived_ms"]["production"])
    assert db.transaction(tid) is None


def assert_spread_over_the_budget(arrived_ms):
    """Apple's clock at each of one request's three calls: each retry waited at least half its ceiling
    (B/16 after the first failure, 3B/16 after the second) after the answer before, so the calls reached
    Apple at least that far apart, however slow the machine (a slow call only moves the next one later)."""
    assert len(arrived_ms) == CALLS_PER_ENVIRONMENT, arrived_ms
    first, second, third = arrived_ms
    assert second - first >= BUDGET_MS / 16 and third - second >= 3 * BUDGET_MS / 16, \
        f"calls {second - first:.0f} ms and {third - second:.0f} ms apart: the retries are not spread"


def test_the_whole_conversation_ends_within_the_budget(api, simulator, receipts):
    """Apple answers 21005 after 80% of the budget: too little is left for another call, so none is made,
    and the client has its answer within the budget (not 3 calls' worth of waiting)."""
    receipt, _ = new_receipt(receipts)
    simulator.control(force_status=21005, latency_ms=BUDGET_MS * 0.8)
    started = time.monotonic()

    assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "retry_later")

    elapsed_ms = (time.monotonic() - started) * 1000
    assert elapsed_ms < BUDGET_MS + 300, f"answered after {elapsed_ms:.0f} ms, budget {BUDGET_MS} ms"
    assert simulator.requests_to("production") == 1


def test_kept_alive_connections_apple_closed_meanwhile_cost_one_call_at_most(api, db, simulator, receipts):
    """Apple closes idle kept-alive connections (here: the simulator closes them all when its certificate
    changes, and again when it changes back). A pooled connection that looks alive but is closed costs the
    call it carried; the next call of the same request goes on a new connection rather than on the next
    dead one in the pool, so the request is delivered instead of spending every attempt on dead
    connections."""
    for _ in range(3):
        assert warm_the_connection_pool(api, simulator, receipts) >= 4, "libcurl kept no connections to reuse"
        simulator.control(tls="untrusted")
        simulator.control(tls="trusted")
        simulator.reset_stats()
        receipt, tid = new_receipt(receipts)

        assert_verify_answer(api.verify(receipt, user_id=new_user_id()), "delivered")

        assert simulator.stats()["production"]["requests"] <= 2, simulator.stats()["production"]
        assert db.transaction(tid) is not None

"""Each subscription renewal delivered exactly once across a Galera cluster with two iap-fcgi instances
(docs/api.md "Subscriptions"), whichever way it arrives.

A burst of chains, each first delivered to a user (an order, then its SUBSCRIBED); then each chain's next period
reaches the service in every way at the same moment, every one through both instances (instance 1 writes through
node 1, instance 2 through node 2, so the writes race on two nodes and one loses Galera's certification): Apple's
DID_RENEW (the same notification, sent again while the first is being applied), the StoreKit 2 JWS the client
posts, and the client's receipt whose verifyReceipt answer now shows the renewal. A `retry_later` (or a 503 of the
notification route) is posted again, as clients and Apple do. Then, on every node: the renewal is one
`transactions` row delivered to the chain's user with one `delivered` event, the chain's `subscriptions` row is
on the renewal, and the renewal's one real change (the new expiry) made one `subscription_changed` event. The test
prints its figures: requests, first answers, requests posted again, certification failures, transactions run
again.
"""
import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

import fastcgi_client
import notifications
import signed_data
import subscription_notifications
from invariants import Ledger, assert_events_follow_transactions
from test_galera import CERTS, Cluster, LedgerAnswer
from test_subscriptions import PERIOD, Chain, apple_now_shows, ms, receipt_period
from support import PAY_30, new_user_id, placeholders

CHAINS = 24
# The ways each chain's renewal arrives, chain by chain in turn, each posted to every instance at once. Apple's
# notification is applied first when it races a client's verify, so the verifies also race without it.
WAYS = (("notification", "jws", "receipt"), ("jws", "receipt"), ("jws",), ("receipt",))
# A request answered `retry_later` (503) is posted again up to this many times, as a client would.
ATTEMPTS = 10
RETRY_PAUSE_SECONDS = 0.2
# The answers that settle a request: a notification accepted, a verify that delivered the renewal or found it
# delivered already.
SETTLED = {"notification": {"accepted"}, "jws": {"delivered", "already_delivered"},
           "receipt": {"delivered", "already_delivered"}}
NOTIFICATION_ROUTE = "/v1/notifications/apple"


def post(socket_path, route, document):
    """The answer of one FastCGI request, or None when the instance gave none."""
    try:
        return fastcgi_client.request_once(socket_path, "POST", route, body=json.dumps(document).encode())
    except OSError:
        return None


def signed_notification(notification_type, subtype, payload, signed_ms):
    """(signedPayload, notificationUUID) of a notification with the renewal info Apple sends with it."""
    renewal = subscription_notifications.renewal_info_for(notification_type, subtype, payload, signed_ms=signed_ms)
    jws, notification = notifications.signed_notification(
        str(CERTS), notification_type, payload, subtype=subtype, signed_ms=signed_ms, renewal_payload=renewal)
    return jws, notification["notificationUUID"]


class Renewal:
    """A chain delivered to its user, and its next period in each form it reaches the service."""

    def __init__(self, receipts, simulator, socket_path, ways):
        self.chain, self.user, self.ways = Chain(), new_user_id(), ways
        order = post(socket_path, "/v1/orders", {"user_id": self.user, "product_id": PAY_30})
        assert order is not None and order.status == 201, order
        first = self.chain.period(0, token=order.json()["order_id"])
        jws, _ = signed_notification("SUBSCRIBED", "INITIAL_BUY", first, self.chain.start + 1000)
        answer = post(socket_path, NOTIFICATION_ROUTE, {"signedPayload": jws})
        assert answer is not None and answer.status == 200, answer

        renewal = self.chain.period(1)
        self.transaction_id = renewal["transactionId"]
        self.expires_ms = renewal["expiresDate"]
        self.notification, self.notification_uuid = signed_notification(
            "DID_RENEW", None, renewal, self.chain.start + PERIOD + 1000)
        self.jws = signed_data.sign(renewal, str(CERTS))
        # The client's receipt shows period 0; Apple's answer to it now shows the renewal too.
        self.receipt = receipts.app_receipt([receipt_period(receipts, self.chain, 0)])
        apple_now_shows(simulator, self.receipt, receipt_period(receipts, self.chain, 1))

    def request(self, way):
        """(route, body, what the ledger records as the document) of the renewal arriving `way`."""
        if way == "notification":
            return NOTIFICATION_ROUTE, {"signedPayload": self.notification}, None
        if way == "jws":
            return "/v1/transactions/verify", {"signed_transaction": self.jws, "user_id": self.user}, self.jws
        return "/v1/receipts/verify", {"receipt_data": self.receipt, "user_id": self.user,
                                       "transaction_id": self.transaction_id}, self.receipt


class Answers:
    """What the burst's requests were answered: the first answer of each, and the requests posted again."""

    def __init__(self, ledger):
        self.ledger = ledger
        self.first = Counter()      # "way: answer" -> requests
        self.posted_again = 0
        self.unsettled = []         # (way, instance, last answer) of requests never answered for good
        self.lock = threading.Lock()

    def settle(self, socket_path, renewal, way):
        """Posts the renewal `way` until it is answered for good, as the sender would: again after a
        `retry_later` (a 503), at most ATTEMPTS times. Each verify answer goes to the ledger. A request that
        ends without its answer (a notification accepted, a verify delivered or already delivered) is kept in
        `unsettled`."""
        route, body, document = renewal.request(way)
        for attempt in range(ATTEMPTS):
            answer = post(socket_path, route, body)
            if document is not None:
                self.ledger.record(document, answer and LedgerAnswer(answer), renewal.user)
            kind = self.kind(way, answer)
            with self.lock:
                if attempt == 0:
                    self.first[f"{way}: {kind}"] += 1
                else:
                    self.posted_again += 1
            if answer is None or answer.status != 503:
                break
            time.sleep(RETRY_PAUSE_SECONDS)
        if kind not in SETTLED[way]:
            with self.lock:
                self.unsettled.append((way, socket_path, kind))

    @staticmethod
    def kind(way, answer):
        """`connection_error`, a verify answer's status, an error's code, or the HTTP status."""
        if answer is None:
            return "connection_error"
        try:
            body = answer.json()
        except ValueError:
            return f"http_{answer.status}"
        if way == "notification" and answer.status == 200:
            return body.get("status") or "http_200"
        return body.get("status") or (body.get("error") or {}).get("code") or f"http_{answer.status}"


def arrive_at_once(instance_sockets, renewal, answers):
    """The renewal posted in every way through every instance, all released at the same moment."""
    requests = [(socket_path, way) for way in renewal.ways for socket_path in instance_sockets]
    start = threading.Barrier(len(requests))

    def one(socket_path, way):
        start.wait()
        answers.settle(socket_path, renewal, way)
    threads = [threading.Thread(target=one, args=request) for request in requests]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(requests)


def assert_delivered_once(database, renewal):
    chain, transaction_id = renewal.chain, renewal.transaction_id
    rows = database.query("SELECT state, user_id FROM transactions WHERE transaction_id = %s", transaction_id)
    assert rows == [{"state": "delivered", "user_id": renewal.user}], f"{transaction_id}: {rows}"
    assert chain.deliveries(database, 1) == [renewal.user], f"{transaction_id}: delivered events"
    row = chain.row(database)
    assert (row["user_id"], row["status"], row["latest_transaction_id"], row["auto_renew"]) == (
        renewal.user, "active", transaction_id, 1), row
    assert ms(row["expires_at"]) == renewal.expires_ms, row
    changes = database.query(
        "SELECT subscription_status, expires_at, user_id FROM events WHERE original_transaction_id = %s"
        " AND type = 'subscription_changed' ORDER BY event_id", chain.original_id)
    # SUBSCRIBED made the chain active until period 0's end; the renewal moved the expiry, once.
    assert [(c["subscription_status"], ms(c["expires_at"]), c["user_id"]) for c in changes] == [
        ("active", chain.start + PERIOD, renewal.user), ("active", renewal.expires_ms, renewal.user)], changes
    assert database.scalar("SELECT COUNT(*) FROM notifications WHERE notification_uuid = %s",
                           renewal.notification_uuid) == ("notification" in renewal.ways)


@pytest.fixture
def cluster(nodes, run_dir):
    cluster = Cluster(nodes, run_dir)
    cluster.wait_synced()
    return cluster


def test_each_renewal_arriving_every_way_through_both_instances_is_delivered_once(
        cluster, instance_sockets, receipts, simulator):
    renewals = [Renewal(receipts, simulator, instance_sockets[index % len(instance_sockets)], WAYS[index % len(WAYS)])
                for index in range(CHAINS)]
    ledger = Ledger("Galera: each subscription renewal every way through both instances at once")
    answers = Answers(ledger)
    failures_before, retries_before = cluster.certification_failures(), cluster.service_retries()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=CHAINS) as pool:
        requests = sum(pool.map(lambda renewal: arrive_at_once(instance_sockets, renewal, answers), renewals))
    burst_seconds = time.monotonic() - started
    cluster.wait_synced()
    failures = cluster.certification_failures_since(failures_before)
    retries = cluster.service_retries() - retries_before
    print(f"\n{ledger.name}: {CHAINS} chains, {requests} requests in {burst_seconds:.1f} s, {failures} certification "
          f"failures (and brute-force aborts), {retries} database transactions run again, {answers.posted_again} "
          f"requests posted again after retry_later/503, first answers {dict(sorted(answers.first.items()))}")

    assert not answers.unsettled, f"requests left without their answer: {answers.unsettled}"
    # Without Apple's notification, one of the verifies delivered the renewal and said so (never two: ledger.check).
    told = [renewal.transaction_id for renewal in renewals if "notification" not in renewal.ways
            and ledger.delivered[renewal.transaction_id] != 1]
    assert not told, f"renewals no verify answered `delivered`: {told}"
    expected = [renewal.transaction_id for renewal in renewals]
    chains = [renewal.chain.original_id for renewal in renewals]
    subscription_rows = set()
    for node, database in enumerate(cluster.nodes, start=1):
        try:
            ledger.check(database, expected, write_counts=node == 1)
            for renewal in renewals:
                assert_delivered_once(database, renewal)
        except AssertionError as error:
            raise AssertionError(f"on node {node}: {error}") from None
        assert_events_follow_transactions(database, expected)
        subscription_rows.add(tuple(tuple(sorted(row.items())) for row in database.query(
            f"SELECT * FROM subscriptions WHERE original_transaction_id IN ({placeholders(chains)})"
            " ORDER BY original_transaction_id", *chains)))
    assert len(subscription_rows) == 1, "the nodes' subscriptions rows differ"
    cluster.assert_nodes_agree()
    assert failures >= 1, "no certification conflict: the burst did not race"

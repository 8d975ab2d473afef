"""Each subscription renewal delivered exactly once across a Galera cluster with two iap-fcgi instances
(docs/api.md "Subscriptions"), whichever way it arrives.

A burst of chains, each first delivered to a user (an order, then its SUBSCRIBED); then each chain's next period
reaches the service in several ways at the same moment, every one through both instances (instance 1 writes
through node 1, instance 2 through node 2, so the writes race on two nodes and one loses Galera's certification):
Apple's DID_RENEW (the same notification, sent again while the first is being applied), the StoreKit 2 JWS the
client posts, and the client's receipt whose verifyReceipt answer now shows the renewal. The second burst races a
chain nobody here has yet (its SUBSCRIBED named no order) being claimed by its user's first delivery against its
renewal. A `retry_later` (or a 503 of the notification route) is posted again, as clients and Apple do. Then, on
every node: each period is one `transactions` row delivered to the chain's user with one `delivered` event (never
left `unclaimed`), no verify answered `delivered` twice, the chain's `subscriptions` row is on the renewal, and
each real change of it the game sees made one `subscription_changed` event. Each burst prints its figures:
requests, first answers, requests posted again, certification failures, transactions run again.
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
# An unclaimed chain: its user's client posts period 0 ("first") while the renewal arrives.
WAYS_UNCLAIMED = (("first", "notification"), ("first", "jws"), ("first", "receipt"),
                  ("first", "notification", "jws", "receipt"))
# A request answered `retry_later` (503) is posted again up to this many times, as a client would.
ATTEMPTS = 10
RETRY_PAUSE_SECONDS = 0.2
# The answers that settle a request: a notification accepted, a verify that delivered the renewal or found it
# delivered already.
SETTLED = {"notification": {"accepted"}, "jws": {"delivered", "already_delivered"},
           "receipt": {"delivered", "already_delivered"}, "first": {"delivered", "already_delivered"}}
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
    """A chain and its next period in each form it reaches the service. Claimed: period 0 was delivered to the
    chain's user (an order of theirs, then its SUBSCRIBED). Not claimed: Apple's SUBSCRIBED named no order, so
    period 0 waits `unclaimed` until the user's client posts it (way "first")."""

    def __init__(self, receipts, simulator, socket_path, ways, claimed=True):
        self.chain, self.user, self.ways, self.claimed = Chain(), new_user_id(), ways, claimed
        token = None
        if claimed:
            order = post(socket_path, "/v1/orders", {"user_id": self.user, "product_id": PAY_30})
            assert order is not None and order.status == 201, order
            token = order.json()["order_id"]
        first = self.chain.period(0, token=token)
        jws, _ = signed_notification("SUBSCRIBED", "INITIAL_BUY", first, self.chain.start + 1000)
        answer = post(socket_path, NOTIFICATION_ROUTE, {"signedPayload": jws})
        assert answer is not None and answer.status == 200, answer
        self.first_jws = signed_data.sign(first, str(CERTS))

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
        if way in ("jws", "first"):
            jws = self.jws if way == "jws" else self.first_jws
            return "/v1/transactions/verify", {"signed_transaction": jws, "user_id": self.user}, jws
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
    """Periods 0 and 1 each delivered once to the chain's user, the chain on the renewal, and one
    `subscription_changed` per real change of what the game sees."""
    chain = renewal.chain
    for index in (0, 1):
        rows = database.query("SELECT state, user_id FROM transactions WHERE transaction_id = %s", chain.ids[index])
        assert rows == [{"state": "delivered", "user_id": renewal.user}], f"period {index} {chain.ids[index]}: {rows}"
        assert chain.deliveries(database, index) == [renewal.user], f"period {index} {chain.ids[index]}: delivered events"
    row = chain.row(database)
    assert (row["user_id"], row["status"], row["latest_transaction_id"], row["auto_renew"]) == (
        renewal.user, "active", renewal.transaction_id, 1), row
    assert ms(row["expires_at"]) == renewal.expires_ms, row
    changes = [(c["subscription_status"], ms(c["expires_at"]), c["user_id"]) for c in database.query(
        "SELECT subscription_status, expires_at, user_id FROM events WHERE original_transaction_id = %s"
        " AND type = 'subscription_changed' ORDER BY event_id", chain.original_id)]
    if renewal.claimed:
        # SUBSCRIBED made the chain active until period 0's end; the renewal moved the expiry, once.
        assert changes == [("active", chain.start + PERIOD, renewal.user),
                           ("active", renewal.expires_ms, renewal.user)], changes
    else:
        # The game hears of the chain once it has a user: until period 0's end if the claim came before the
        # renewal (then the new expiry), or at once until period 1's end.
        assert changes in ([("active", renewal.expires_ms, renewal.user)],
                           [("active", chain.start + PERIOD, renewal.user),
                            ("active", renewal.expires_ms, renewal.user)]), changes
    assert database.scalar("SELECT COUNT(*) FROM notifications WHERE notification_uuid = %s",
                           renewal.notification_uuid) == ("notification" in renewal.ways)


@pytest.fixture
def cluster(nodes, run_dir):
    cluster = Cluster(nodes, run_dir)
    cluster.wait_synced()
    return cluster


def run_burst(name, cluster, instance_sockets, renewals):
    """Every renewal arriving its ways through every instance at once, each chain's requests released
    together and all chains at the same time; then the checks on every node. Returns the ledger of the
    verify answers."""
    ledger = Ledger(name)
    answers = Answers(ledger)
    failures_before, retries_before = cluster.certification_failures(), cluster.service_retries()
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=len(renewals)) as pool:
        requests = sum(pool.map(lambda renewal: arrive_at_once(instance_sockets, renewal, answers), renewals))
    burst_seconds = time.monotonic() - started
    cluster.wait_synced()
    failures = cluster.certification_failures_since(failures_before)
    retries = cluster.service_retries() - retries_before
    print(f"\n{name}: {len(renewals)} chains, {requests} requests in {burst_seconds:.1f} s, {failures} certification "
          f"failures (and brute-force aborts), {retries} database transactions run again, {answers.posted_again} "
          f"requests posted again after retry_later/503, first answers {dict(sorted(answers.first.items()))}")

    assert not answers.unsettled, f"requests left without their answer: {answers.unsettled}"
    expected = [renewal.chain.ids[index] for renewal in renewals for index in (0, 1)]
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
    return ledger


def chains(receipts, simulator, instance_sockets, ways, claimed):
    """CHAINS chains, made through each instance in turn, the k-th arriving the k-th ways in turn."""
    return [Renewal(receipts, simulator, instance_sockets[k % len(instance_sockets)], ways[k % len(ways)], claimed)
            for k in range(CHAINS)]


def test_each_renewal_arriving_every_way_through_both_instances_is_delivered_once(
        cluster, instance_sockets, receipts, simulator):
    renewals = chains(receipts, simulator, instance_sockets, WAYS, claimed=True)
    ledger = run_burst("Galera: each subscription renewal every way through both instances at once", cluster,
                       instance_sockets, renewals)
    # Without Apple's notification, one of the verifies delivered the renewal and said so (never two: ledger.check).
    told = [renewal.transaction_id for renewal in renewals if "notification" not in renewal.ways
            and ledger.delivered[renewal.transaction_id] != 1]
    assert not told, f"renewals no verify answered `delivered`: {told}"


def test_an_unclaimed_chains_first_delivery_racing_its_renewal_delivers_both_once(
        cluster, instance_sockets, receipts, simulator):
    """Nobody here has the chain yet: its user's client posts period 0 while period 1 arrives, each through
    both instances. Whichever commits first, the renewal is not left `unclaimed` nor delivered twice."""
    renewals = chains(receipts, simulator, instance_sockets, WAYS_UNCLAIMED, claimed=False)
    run_burst("Galera: an unclaimed chain's first delivery and its renewal through both instances at once",
              cluster, instance_sockets, renewals)
    # Two subscription_changed events: the claim committed before the renewal; one: after it.
    ids = [renewal.chain.original_id for renewal in renewals]
    claimed_first = cluster.nodes[0].scalar(
        "SELECT COUNT(*) FROM (SELECT original_transaction_id FROM events WHERE type = 'subscription_changed'"
        f" AND original_transaction_id IN ({placeholders(ids)}) GROUP BY original_transaction_id"
        " HAVING COUNT(*) = 2) claimed_before_the_renewal", *ids)
    print(f"chains claimed before their renewal was stored: {claimed_first} of {len(renewals)}")

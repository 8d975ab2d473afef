"""The checks every fault test ends with: no purchase lost, none delivered twice,
every receipt on record. Also the per-test counts the closing note quotes.

A fault test posts through a Ledger, which keeps what each answer said; then
`ledger.check(db, transaction_ids)` holds the answers against the database:

- every transaction an answer called `delivered` is in `transactions`, delivered;
- no transaction was answered `delivered` twice across the whole test, and each
  delivered transaction has exactly one order of its own (no order of the test's
  users without its transaction, none with two);
- every transaction the test paid for ended up delivered;
- every receipt posted that passed the input checks has its audit row (by SHA-256);
- each of those transactions has the `events` its state calls for (`assert_events_follow_transactions`).

Each check appends one row to $IAP_RUN/fault-counts.txt (scripts/test prints it).
"""
import base64
import hashlib
import os
import re
import threading
from collections import Counter
from pathlib import Path

import requests

from support import placeholders

COUNTS_FILE = "fault-counts.txt"
COUNTS_HEADER = ("| fault | requests | delivered | already_delivered | retry_later | nginx 503 "
                 "| connection errors | other | transactions | duplicates | notes |\n"
                 "|---|---|---|---|---|---|---|---|---|---|---|\n")
# Answer classes counted in their own column; anything else goes to "other".
COUNTED = ("delivered", "already_delivered", "retry_later", "service_unavailable", "connection_error")


class Ledger:
    """What the answers of one fault test said, to hold against the database."""

    def __init__(self, name):
        self.name = name
        self.requests = 0
        self.statuses = Counter()       # answer class -> answers (verify status, error code or connection_error)
        self.delivered = Counter()      # transaction id -> answers that said `delivered`
        self.receipts = set()           # receipt_data posted that passed the input checks
        self.users = set()
        self.notes = []
        self.lock = threading.Lock()    # bursts record from many threads

    def post(self, api, receipt_data, **fields):
        """POST /v1/receipts/verify and record the answer; None when the connection failed."""
        try:
            response = api.verify(receipt_data, **fields)
        except requests.RequestException:
            response = None
        self.record(receipt_data, response, fields.get("user_id"))
        return response

    def record(self, receipt_data, response, user_id=None):
        """Adds one answer; a connection error is recorded as such (response None)."""
        with self.lock:
            self._record(receipt_data, response, user_id)

    def _record(self, receipt_data, response, user_id):
        self.requests += 1
        if user_id:
            self.users.add(user_id)
        kind = answer_class(response)
        self.statuses[kind] += 1
        if kind == "connection_error" or kind.startswith("http_"):
            return
        body = response.json()
        if "status" in body:   # a verify answer: the request passed the input checks
            self.receipts.add(receipt_data)
        for transaction in body.get("transactions") or []:
            if transaction.get("state") == "delivered":
                self.delivered[transaction["transaction_id"]] += 1

    def note(self, text):
        """A remark for the counts row, e.g. what retry-pending found."""
        self.notes.append(text)

    def check(self, db, expected_transaction_ids=(), write_counts=True):
        """The invariants, in SQL. `expected_transaction_ids` must all end up delivered once. With
        `write_counts` false (the same answers checked on another database node) no counts row is added."""
        expected = set(expected_transaction_ids)
        twice = {tid: n for tid, n in self.delivered.items() if n > 1}
        assert not twice, f"{self.name}: transactions answered `delivered` more than once: {twice}"

        ids = sorted(set(self.delivered) | expected)
        if ids:
            rows = {row["transaction_id"]: row for row in db.query(
                "SELECT t.transaction_id, t.state, t.order_id, o.status AS order_status"
                " FROM transactions t LEFT JOIN orders o ON o.order_id = t.order_id"
                f" WHERE t.transaction_id IN ({placeholders(ids)})", *ids)}
            for tid in ids:
                row = rows.get(tid)
                why = "answered `delivered`" if tid in self.delivered else "paid for in this test"
                assert row is not None and row["state"] == "delivered", (
                    f"{self.name}: {tid} was {why} but the database has {row}")
                assert row["order_status"] == "delivered", (
                    f"{self.name}: {tid} is delivered to order {row['order_id']} whose status is {row['order_status']}")
            shared = {order: n for order, n in Counter(row["order_id"] for row in rows.values()).items() if n > 1}
            assert not shared, f"{self.name}: orders holding more than one transaction: {shared}"

        if self.users:
            users = sorted(self.users)
            odd = db.query(
                "SELECT o.order_id, o.status, o.origin, COUNT(t.transaction_id) AS transactions"
                " FROM orders o LEFT JOIN transactions t ON t.order_id = o.order_id"
                f" WHERE o.user_id IN ({placeholders(users)})"
                " GROUP BY o.order_id, o.status, o.origin"
                " HAVING (o.status <> 'created' OR o.origin = 'receipt') AND COUNT(t.transaction_id) <> 1", *users)
            assert not odd, f"{self.name}: delivered or receipt-made orders without exactly one transaction: {odd}"

        if self.receipts:
            hashes = sorted({receipt_sha256(data) for data in self.receipts})
            recorded = {row["sha256"] for row in db.query(
                f"SELECT DISTINCT sha256 FROM receipts WHERE sha256 IN ({placeholders(hashes)})", *hashes)}
            missing = set(hashes) - recorded
            assert not missing, f"{self.name}: {len(missing)} receipt(s) that passed input checks have no audit row"

        assert_events_follow_transactions(db, set(self.delivered) | expected)

        if write_counts:
            self.write_counts(len(expected))

    def write_counts(self, transactions):
        run = os.environ.get("IAP_RUN")
        if not run:
            return
        duplicates = sum(n - 1 for n in self.delivered.values())
        other = {kind: n for kind, n in self.statuses.items() if kind not in COUNTED}
        cells = [self.name, self.requests, self.statuses["delivered"], self.statuses["already_delivered"],
                 self.statuses["retry_later"], self.statuses["service_unavailable"],
                 self.statuses["connection_error"], format_counter(other) or 0,
                 f"{len(self.delivered)} answered delivered / {transactions} paid", duplicates,
                 "; ".join(self.notes)]
        path = Path(run) / COUNTS_FILE
        with open(path, "a") as counts:
            if counts.tell() == 0:
                counts.write(COUNTS_HEADER)
            counts.write("| " + " | ".join(str(cell) for cell in cells) + " |\n")


def answer_class(response):
    """A verify answer's status, an error answer's code, `connection_error`, or http_<status>."""
    if response is None:
        return "connection_error"
    try:
        body = response.json()
    except ValueError:
        return f"http_{response.status_code}"
    if not isinstance(body, dict):
        return f"http_{response.status_code}"
    return body.get("status") or (body.get("error") or {}).get("code") or f"http_{response.status_code}"


def receipt_sha256(receipt_data):
    """The SHA-256 the service records: of the decoded bytes (line breaks dropped, spaces read as +);
    of the text itself for a StoreKit 2 JWS (its dots are never base64)."""
    if "." in receipt_data:
        return hashlib.sha256(receipt_data.encode()).hexdigest()
    normalised = re.sub(r"[\r\n]", "", receipt_data).replace(" ", "+")
    return hashlib.sha256(base64.b64decode(normalised)).hexdigest()


def format_counter(counter):
    return ", ".join(f"{kind} {n}" for kind, n in sorted(counter.items()))


def assert_events_follow_transactions(db, transaction_ids=None):
    """The `events` rules of docs/events.md, in SQL, for these transactions (None: every transaction since
    migration 006 made the table):

    - the goods an events stream grants (delivered + refund_reversed - refunded) are 1 for a
      delivered transaction and 0 for any other (Google's partial refunds take it back together, once
      their refunded quantities add up to the purchase's quantity): a delivered transaction has exactly one
      `delivered` event without a later `refunded`, and every refund of a delivered transaction
      has its `refunded` event;
    - the events name the transaction's own order and user.
    """
    # Transactions delivered before the events table existed have none (a database upgraded in place).
    in_scope = ("t.created_at >= (SELECT applied_at FROM schema_migrations WHERE version = '006_events.sql')")
    args = ()
    if transaction_ids is not None:
        ids = sorted(set(transaction_ids))
        if not ids:
            return
        in_scope, args = f"{in_scope} AND t.transaction_id IN ({placeholders(ids)})", ids
    unbalanced = db.query(
        "SELECT t.transaction_id, t.state,"
        " COALESCE(SUM(e.type IN ('delivered', 'refund_reversed')), 0) AS granted,"
        # A Google quantity-based partial refund's `refunded` event (refunded_quantity set) takes back part of
        # the purchase: such events together take it back once they add up to its quantity.
        " COALESCE(SUM(e.type = 'refunded' AND e.refunded_quantity IS NULL), 0)"
        " + (COALESCE(SUM(CASE WHEN e.type = 'refunded' THEN e.refunded_quantity END), 0) >= t.quantity)"
        " AS taken_back"
        f" FROM transactions t LEFT JOIN events e ON e.transaction_id = t.transaction_id WHERE {in_scope}"
        " GROUP BY t.transaction_id, t.state, t.quantity"
        " HAVING granted - taken_back <> (t.state = 'delivered') OR taken_back > granted"
        " LIMIT 20", *args)
    assert not unbalanced, f"transactions whose events do not match their state: {unbalanced}"
    strangers = db.query(
        "SELECT e.event_id, e.transaction_id, e.order_id, e.user_id, t.order_id AS t_order, t.user_id AS t_user"
        f" FROM events e JOIN transactions t ON t.transaction_id = e.transaction_id WHERE {in_scope}"
        " AND (e.order_id <> t.order_id OR e.user_id <> t.user_id) LIMIT 20", *args)
    assert not strangers, f"events naming another order or user than their transaction: {strangers}"

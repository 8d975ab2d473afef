"""The checks every fault test ends with: no purchase lost, none delivered twice,
every receipt on record. Also the per-test counts the closing note quotes."""
import base64
import hashlib
import os
from collections import Counter
from pathlib import Path


class Ledger:
    """What the answers of one fault test said, to hold against the database."""

    def __init__(self, name):
        self.name = name
        self.requests = 0
        self.statuses = Counter()
        self.delivered = Counter()      # transaction id -> answers that said `delivered`
        self.receipts = set()           # receipt_data posted that passed input checks

    def record(self, receipt_data, response):
        """Adds one answer; a connection error is recorded as such (response None)."""
        self.requests += 1
        if response is None:
            self.statuses["connection_error"] += 1
            return
        try:
            body = response.json()
        except ValueError:
            body = {}
        status = body.get("status") or (body.get("error") or {}).get("code") or f"http_{response.status_code}"
        self.statuses[status] += 1
        if response.status_code < 400 or status == "retry_later":
            self.receipts.add(receipt_data)
        for transaction in body.get("transactions") or []:
            if transaction.get("state") == "delivered":
                self.delivered[transaction["transaction_id"]] += 1

    def check(self, db, expected_transaction_ids=()):
        """The invariants, in SQL. `expected_transaction_ids` must all end up delivered once."""
        twice = {tid: n for tid, n in self.delivered.items() if n > 1}
        assert not twice, f"{self.name}: transactions answered `delivered` more than once: {twice}"
        for tid in self.delivered:
            row = db.transaction(tid)
            assert row is not None and row["state"] == "delivered", (
                f"{self.name}: {tid} was answered `delivered` but the database has {row}")
        for tid in expected_transaction_ids:
            row = db.transaction(tid)
            assert row is not None and row["state"] == "delivered", f"{self.name}: {tid} was never delivered: {row}"
            orders = db.scalar("SELECT COUNT(*) FROM orders WHERE order_id = %s", row["order_id"])
            assert orders == 1, f"{self.name}: {tid} has {orders} orders"
        for receipt_data in self.receipts:
            sha = hashlib.sha256(base64.b64decode(receipt_data)).hexdigest()
            assert db.receipts_with_sha256(sha), f"{self.name}: a receipt that passed input checks has no audit row"
        self.write_counts(len(expected_transaction_ids))

    def write_counts(self, transactions):
        duplicates = sum(n - 1 for n in self.delivered.values() if n > 1)
        line = (f"{self.name}: requests={self.requests} transactions={transactions} "
                f"delivered_answers={sum(self.delivered.values())} "
                f"retry_later={self.statuses['retry_later']} duplicates={duplicates} "
                f"statuses={dict(sorted(self.statuses.items()))}\n")
        run = os.environ.get("IAP_RUN")
        if run:
            with open(Path(run) / "fault-counts.txt", "a") as counts:
                counts.write(line)

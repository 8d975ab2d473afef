"""Receipt amplification under IAP_RECEIPT_VERIFIER=local: a receipt crafted to cost its parse far more than its
bytes (a megabyte of empty BER pieces, no signature; a genuine receipt carrying hundreds of copies of its
certificates, or more certificates than a receipt has) is refused by the bound it exceeds before any of it is
parsed: `not_paid`, its audit row naming the bound (receipts.signed_data_error), counted in
iap_receipt_check_failures_total{check}. It costs the service little CPU, and a genuine receipt sent while a
flood of them arrives is verified promptly."""
import base64
import concurrent.futures
import os
import socket
import time

import pytest
import requests

from crafted_receipts import certificate_copies, empty_pieces
from support import PAY_6, new_transaction_id, new_user_id, wait_until
from test_receipt_modes import OwnVerifier, sha256_of

PIECES = 524_000  # 1.05 MB, as much as receipt_data takes; their parse took a quarter second before the bounds
FLOOD = 12


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """An iap-fcgi of this module's own in `local` mode, with its metrics on a port of its own."""
    listen = f"127.0.0.1:{free_port()}"
    verifier = OwnVerifier(tmp_path_factory.mktemp("amplification"), "local", IAP_METRICS_LISTEN=listen)
    verifier.metrics_url = f"http://{listen}/metrics"
    yield verifier
    verifier.stop()


def check_failures(local, check):
    """iap_receipt_check_failures_total{check=...} now (0 before the first)."""
    text = requests.get(local.metrics_url, timeout=10).text
    prefix = f'iap_receipt_check_failures_total{{check="{check}"}} '
    return next((float(line[len(prefix):]) for line in text.splitlines() if line.startswith(prefix)), 0.0)


def cpu_seconds(process):
    """The user and system CPU the process has used."""
    with open(f"/proc/{process.pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def b64(receipt):
    return base64.b64encode(receipt).decode("ascii")


def genuine_receipt(receipts):
    return receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])


CRAFTED = {
    "tooManyPieces": lambda receipts: b64(empty_pieces(PIECES)),
    # Genuine: the signature covers none of the certificates. 275 copies: 825 certificates, 690 KB.
    "tooManyNodes": lambda receipts: b64(certificate_copies(base64.b64decode(genuine_receipt(receipts)), 275)),
    "tooManyCertificates": lambda receipts: b64(certificate_copies(base64.b64decode(genuine_receipt(receipts)), 3)),
}


@pytest.mark.parametrize("check", sorted(CRAFTED))
def test_a_crafted_receipt_is_not_paid_and_names_its_bound_in_the_audit_row_and_the_metrics(local, db, receipts, check):
    receipt = CRAFTED[check](receipts)
    before = check_failures(local, check)
    answer = local.verify(receipt, user_id=new_user_id())
    assert answer.status == 200 and answer.body["status"] == "not_paid", answer.body
    assert answer.body["apple_status"] is None and not answer.body["transactions"], answer.body
    row = wait_until(lambda: db.one("SELECT signed_data_error, apple_status, verified_at FROM receipts WHERE sha256 = %s",
                                    sha256_of(receipt)), 10, "the crafted receipt's audit row")
    assert row["signed_data_error"] == check and row["apple_status"] is None and row["verified_at"] is not None, row
    wait_until(lambda: check_failures(local, check) == before + 1, 10, f"iap_receipt_check_failures_total{{check={check}}}")


def test_a_genuine_receipt_padded_within_the_bounds_is_still_delivered(local, api, db, receipts):
    user_id = new_user_id()
    order_id = api.create_order(user_id, PAY_6)["order_id"]
    purchase = receipts.purchase(PAY_6, transaction_id=new_transaction_id())
    padded = b64(certificate_copies(base64.b64decode(receipts.app_receipt([purchase])), 2))
    answer = local.verify(padded, user_id=user_id, order_id=order_id)
    assert answer.status == 200 and answer.body["status"] == "delivered", answer.body
    assert db.delivered_count([purchase["transaction_id"]]) == 1


def test_a_flood_of_crafted_receipts_costs_little_and_leaves_a_genuine_one_prompt(local, api, receipts):
    crafted = b64(empty_pieces(PIECES))
    user_id = new_user_id()
    order_id = api.create_order(user_id, PAY_6)["order_id"]
    genuine = genuine_receipt(receipts)
    cpu_before = cpu_seconds(local.process)
    with concurrent.futures.ThreadPoolExecutor(FLOOD) as pool:
        flood = [pool.submit(local.verify, crafted, user_id=new_user_id()) for _ in range(FLOOD)]
        started = time.monotonic()
        answer = local.verify(genuine, user_id=user_id, order_id=order_id)
        elapsed = time.monotonic() - started
        statuses = [future.result().body["status"] for future in flood]
    assert answer.status == 200 and answer.body["status"] == "delivered", answer.body
    # Before the bounds, the flood held the recorder thread for FLOOD quarter seconds ahead of it.
    assert elapsed < 1.5, f"the genuine receipt took {elapsed:.2f} s behind {FLOOD} crafted ones"
    assert statuses == ["not_paid"] * FLOOD, statuses
    # Reading a 1.4 MB request and storing its row, not parsing half a million nodes.
    per_request = (cpu_seconds(local.process) - cpu_before) / (FLOOD + 1)
    assert per_request < 0.05, f"{per_request * 1000:.0f} ms of iap-fcgi's CPU per crafted receipt"

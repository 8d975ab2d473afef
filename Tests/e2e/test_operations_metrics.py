"""Operations: iap-fcgi's Prometheus metrics (IAP_METRICS_LISTEN, which scripts/stack sets to
127.0.0.1:<IAP_HTTP_PORT + 1000>) and its JSON log (IAP_LOG_FORMAT=json).

The module restarts the stack's iap-fcgi with IAP_LOG_FORMAT=json, sends one mixed run (orders, new
receipts delivered, replays, an Apple fault, a good and a bad JWS, an unknown path, a receipt Apple
never answers), scraping /metrics before, during and after, and checks that every counter moved by
exactly what was sent. Then every line the JSON-logging service wrote must parse as one JSON object
and hold no secret, receipt or JWS. It puts the text log back at the end.
"""
import hashlib
import importlib
import json
import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
import requests
from cryptography import x509

from support import PAY_6, PAY_30, assert_error, assert_verify_answer, new_transaction_id, new_user_id, wait_until

REPO = Path(__file__).resolve().parents[2]
CERTS = Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs"
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

pytestmark = pytest.mark.outage("iap-fcgi")

# The service's own callers of Apple: the finisher (Finish Transaction) and the refund-request sender.
# Each calls only for a row it leased, and leases only rows due before now (see `workers_parked`).
WORKER_OUTBOXES = {"transaction_finishes": "TRUE", "consumption_requests": "status = 'pending'"}
PARKED_UNTIL = "2100-01-01 00:00:00"
# The longest lease a worker takes at IAP_APPLE_TIMEOUT_MS=2000 (the sender's: 2 s + 60 s), and room.
LEASE_WAIT_SECONDS = 120


# --- scraping --------------------------------------------------------------------------------

def metrics_url():
    listen = os.environ.get("IAP_METRICS_LISTEN")
    assert listen, "IAP_METRICS_LISTEN is not set: export the stack's environment (scripts/stack env)"
    return f"http://{listen}/metrics"


def scrape():
    """Every sample of /metrics: {(name, frozenset of (label, value)): float}."""
    response = requests.get(metrics_url(), timeout=10)
    assert response.status_code == 200, f"GET /metrics: {response.status_code} {response.text[:200]!r}"
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for line in response.text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = SAMPLE.match(line)
        assert match, f"not a sample of the Prometheus text format: {line!r}"
        name, labels, value = match.groups()
        samples[(name, frozenset(LABEL.findall(labels or "")))] = float(value)
    return samples


def value(samples, name, **labels):
    """The sample's value; 0 for a series not made yet (a counter not yet incremented)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples, name, **labels):
    """The sum over every series of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, series), v in samples.items() if n == name and wanted <= series)


def delta(before, after, name, **labels):
    return total(after, name, **labels) - total(before, name, **labels)


# --- the JSON-logging service ------------------------------------------------------------------

def stack_iap_fcgi(command, **extra_env):
    """scripts/stack stop|start iap-fcgi, with `extra_env` over the suite's environment."""
    result = subprocess.run([str(REPO / "scripts" / "stack"), command, "iap-fcgi"], cwd=REPO,
                            env={**os.environ, **extra_env}, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"scripts/stack {command} iap-fcgi: {result.stdout}{result.stderr}"


@pytest.fixture(scope="module")
def json_service(run_dir, api):
    """iap-fcgi restarted with IAP_LOG_FORMAT=json; yields the offset of its log where it began.
    The text format is back afterwards (an empty variable is unset)."""
    stack_iap_fcgi("stop")
    offset = (run_dir / "logs" / "iap-fcgi.log").stat().st_size
    stack_iap_fcgi("start", IAP_LOG_FORMAT="json")
    wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "iap-fcgi healthy after the restart")
    yield offset
    stack_iap_fcgi("stop")
    stack_iap_fcgi("start", IAP_LOG_FORMAT="")
    wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "iap-fcgi healthy after the restart")


def certificate_days(path):
    certificate = x509.load_pem_x509_certificate(Path(path).read_bytes())
    return (certificate.not_valid_after_utc.timestamp() - time.time()) / 86400


class MixedRun:
    """What the run sent, and /metrics before and after it."""

    def __init__(self):
        self.sent = {}            # what -> count
        self.receipts = []        # every receipt posted
        self.jws = []             # every JWS posted
        self.request_ids = []     # X-Request-Id of every answer
        self.backlog_receipt = None


@pytest.fixture(scope="module")
def workers_parked(db):
    """No call to Apple but the run's own while the module runs: earlier tests leave Finish Transaction
    calls and refund requests owed (a finish Apple failed waits its backoff), which the service's workers
    would make whenever they come due, counted in iap_apple_calls_total and iap_apple_calls_in_flight.
    Every such row is made due in 2100, and the fixture waits until no worker holds a lease (its call under
    way, or about to be); then nothing calls until the rows are made due again, at the end."""
    def parked():
        for table, owed in WORKER_OUTBOXES.items():
            db.execute(f"UPDATE {table} SET next_attempt_at = %s WHERE {owed} AND"
                       " (lease_expires_at IS NULL OR lease_expires_at <= UTC_TIMESTAMP(3))", PARKED_UNTIL)
        return all(db.scalar(f"SELECT COUNT(*) FROM {table} WHERE {owed} AND lease_expires_at > UTC_TIMESTAMP(3)")
                   == 0 for table, owed in WORKER_OUTBOXES.items())

    wait_until(parked, LEASE_WAIT_SECONDS, "no Finish Transaction or refund request under way")
    yield
    for table in WORKER_OUTBOXES:
        db.execute(f"UPDATE {table} SET next_attempt_at = UTC_TIMESTAMP(3) WHERE next_attempt_at = %s", PARKED_UNTIL)


@pytest.fixture(scope="module")
def mixed_run(json_service, workers_parked, api, db, simulator, receipts):
    signer = importlib.import_module("signed_data")
    run = MixedRun()
    simulator.reset()

    def note(response):
        run.request_ids.append(response.headers.get("X-Request-Id"))
        return response

    run.before = scrape()
    user = new_user_id()

    # 3 orders.
    orders = [api.create_order(user) for _ in range(3)]
    run.sent["orders"] = len(orders)

    # 2 new receipts, each delivered after one call to production.
    delivered = []
    for order in orders[:2]:
        receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
        run.receipts.append(receipt)
        assert_verify_answer(note(api.verify(receipt, order_id=order["order_id"])), "delivered")
        delivered.append(receipt)
    run.sent["delivered"] = 2

    # 2 replays of a delivered receipt: answered from the database, no call to Apple.
    for _ in range(2):
        assert_verify_answer(note(api.verify(delivered[0], user_id=user)), "already_delivered")
    run.sent["replays"] = 2

    # An Apple fault: the first call gets 21005 (retried), the second delivers.
    simulator.control(force_status=21005, fail_next=1)
    faulted = receipts.app_receipt([receipts.purchase(PAY_30, transaction_id=new_transaction_id())])
    run.receipts.append(faulted)
    assert_verify_answer(note(api.verify(faulted, user_id=user)), "delivered")
    simulator.reset()
    run.sent["faulted"] = 1

    # A good JWS (delivered) and one under a root the service does not trust (400).
    good = signer.sign(signer.transaction(PAY_6, transaction_id=new_transaction_id()), str(CERTS))
    bad = signer.sign(signer.transaction(PAY_6, transaction_id=new_transaction_id()), str(CERTS), chain="untrusted")
    run.jws += [good, bad]
    assert_verify_answer(note(api.post_json("/v1/transactions/verify", {"signed_transaction": good, "user_id": user})),
                         "delivered")
    assert_error(note(api.post_json("/v1/transactions/verify", {"signed_transaction": bad, "user_id": user})),
                 400, "invalid_signed_data")
    bad_sha256 = hashlib.sha256(bad.encode()).hexdigest()
    run.bad_jws_reason = wait_until(
        lambda: db.scalar("SELECT signed_data_error FROM receipts WHERE kind = 'jws' AND sha256 = %s", bad_sha256),
        10, "the bad JWS's audit row")

    # A path outside the routes.
    assert_error(note(api.get("/v1/no-such-route")), 404, "not_found")

    # During: a call Apple takes 1 s to answer is in flight while /metrics is scraped.
    simulator.control(latency_ms=1000)
    slow = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    run.receipts.append(slow)
    answers = []
    worker = threading.Thread(target=lambda: answers.append(api.verify(slow, user_id=user)))
    worker.start()
    def scrape_with_one_call_in_flight():
        samples = scrape()
        return samples if value(samples, "iap_apple_calls_in_flight") == 1 else None

    run.during = wait_until(scrape_with_one_call_in_flight, 2, "iap_apple_calls_in_flight at 1 while Apple takes 1 s",
                            interval=0.05)
    worker.join(30)
    simulator.reset()
    assert_verify_answer(note(answers[0]), "delivered")
    run.sent["slow"] = 1

    # A receipt Apple never answers (every connection dropped): retry_later, left for retry-pending.
    simulator.control(drop_connection=True)
    lost = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    run.receipts.append(lost)
    assert_verify_answer(note(api.verify(lost, user_id=user)), "retry_later")
    simulator.reset()
    run.backlog_receipt = db.scalar("SELECT MAX(receipt_id) FROM receipts WHERE user_id = %s AND verified_at IS NULL",
                                    user)
    run.sent["dropped"] = 1

    run.after = scrape()
    yield run
    # Nothing for retry-pending to find from this run.
    db.execute("UPDATE receipts SET retry_final_state = 'gave_up', retry_final_reason = 'test_operations_metrics'"
               " WHERE receipt_id = %s AND verified_at IS NULL", run.backlog_receipt)


# --- the tests ---------------------------------------------------------------------------------

def test_requests_are_counted_by_route_and_status(mixed_run):
    before, after = mixed_run.before, mixed_run.after
    assert delta(before, after, "iap_requests_total", route="/v1/orders", status="201") == 3
    # delivered 2 + replays 2 + faulted 1 + slow 1 (200), and the dropped one (503).
    assert delta(before, after, "iap_requests_total", route="/v1/receipts/verify", status="200") == 6
    assert delta(before, after, "iap_requests_total", route="/v1/receipts/verify", status="503") == 1
    assert delta(before, after, "iap_requests_total", route="/v1/transactions/verify", status="200") == 1
    assert delta(before, after, "iap_requests_total", route="/v1/transactions/verify", status="400") == 1
    assert delta(before, after, "iap_requests_total", route="other", status="404") == 1
    # Every answer is in the latency histogram of its route, once; the scrapes of /metrics in none.
    for route, count in [("/v1/orders", 3), ("/v1/receipts/verify", 7), ("/v1/transactions/verify", 2), ("other", 1)]:
        assert delta(before, after, "iap_request_duration_seconds_count", route=route) == count, route
        assert delta(before, after, "iap_request_duration_seconds_bucket", route=route, le="+Inf") == count, route
    assert delta(before, after, "iap_request_duration_seconds_sum", route="/v1/receipts/verify") >= 1.0, (
        "the slow verification alone took a second")


def test_apple_calls_match_what_reached_the_simulator(mixed_run):
    before, after = mixed_run.before, mixed_run.after
    labels = dict(endpoint="verify_receipt", environment="Production")
    # 2 delivered + 2 for the fault + 1 slow answered 200; the replays made none; the dropped receipt
    # made 3 calls that got no answer.
    assert delta(before, after, "iap_apple_calls_total", status="200", **labels) == 5
    assert delta(before, after, "iap_apple_calls_total", status="connection", **labels) == 3
    assert delta(before, after, "iap_apple_calls_total", **labels) == 8
    assert delta(before, after, "iap_apple_calls_total", environment="Sandbox") == 0
    assert delta(before, after, "iap_apple_call_duration_seconds_count", **labels) == 8
    assert delta(before, after, "iap_apple_receipt_status_total", environment="Production", apple_status="0") == 4
    assert delta(before, after, "iap_apple_receipt_status_total", environment="Production", apple_status="21005") == 1
    assert delta(before, after, "iap_server_api_rate_limited_total") == 0


def test_in_flight_gauge_follows_the_calls(mixed_run):
    assert value(mixed_run.during, "iap_apple_calls_in_flight") == 1
    assert value(mixed_run.after, "iap_apple_calls_in_flight") == 0
    assert value(mixed_run.after, "iap_queue_depth", queue="receipt_recorder") == 0
    for queue in ("receipt_recorder", "delivery", "signed_transactions", "apple_waiting"):
        assert ("iap_queue_depth", frozenset({("queue", queue)})) in mixed_run.after, f"no depth for {queue}"
        assert delta(mixed_run.before, mixed_run.after, "iap_queue_rejections_total", queue=queue) == 0


def test_jws_failures_are_counted_by_reason(mixed_run):
    before, after = mixed_run.before, mixed_run.after
    assert delta(before, after, "iap_jws_verification_failures_total") == 1
    assert delta(before, after, "iap_jws_verification_failures_total", reason=mixed_run.bad_jws_reason) == 1


def test_certificate_expiry_days(mixed_run):
    roots = [(labels, v) for (name, labels), v in mixed_run.after.items()
             if name == "iap_certificate_expiry_days" and ("certificate", "root") in labels]
    assert len(roots) == 1, roots
    labels, days = roots[0]
    assert "iap-fcgi Test Root CA" in dict(labels)["subject"]
    assert abs(days - certificate_days(CERTS / "signing-root.pem")) < 0.01
    # The restarted service validated the good JWS's chain: its leaf is the latest seen.
    leaf = value(mixed_run.after, "iap_certificate_expiry_days", certificate="latest_leaf", subject="")
    assert abs(leaf - certificate_days(CERTS / "signing-leaf.pem")) < 0.01


def test_retry_pending_backlog_gauge_reads_the_database(mixed_run, db):
    """The metrics thread counts the backlog every 15 s: within 16 s it shows the receipt left open."""
    assert mixed_run.backlog_receipt, "the dropped receipt is not in receipts as unverified"

    def backlog():
        return db.scalar("SELECT COUNT(*) FROM receipts WHERE verified_at IS NULL AND retry_final_state IS NULL"
                         " AND kind = 'receipt'")

    expected = backlog()
    assert expected >= 1
    wait_until(lambda: value(scrape(), "iap_retry_pending_receipts") == backlog(), 17,
               f"iap_retry_pending_receipts at the database's count ({expected})")


def test_metrics_are_not_served_through_nginx(json_service, api, base_url):
    for path in ("/metrics", "/v1/metrics", "/v1/../metrics"):
        response = requests.get(base_url + path, timeout=10)
        assert response.status_code == 404, f"{path}: {response.status_code}"
        assert "iap_requests_total" not in response.text
    # The listener itself serves GET /metrics only.
    listen = os.environ["IAP_METRICS_LISTEN"]
    assert requests.post(f"http://{listen}/metrics", timeout=10).status_code == 405
    assert requests.get(f"http://{listen}/v1/health", timeout=10).status_code == 404
    assert "iap_build_info" in requests.get(f"http://{listen}/metrics?x=1", timeout=10).text


def test_json_log_parses_line_by_line_without_secrets(mixed_run, json_service, run_dir):
    def logged_every_request():
        """The log since the JSON service began, once it holds every answer's line (written after the answer)."""
        text = (run_dir / "logs" / "iap-fcgi.log").read_text()[json_service:]
        return text if text.endswith("\n") and all(i in text for i in mixed_run.request_ids) else None

    text = wait_until(logged_every_request, 10, "an access line for every request of the run")
    lines = [line for line in text.splitlines() if line.strip()]
    # scripts/stack's own lines ("stack: ...") are not the service's; every other line is one JSON object.
    service_lines = [line for line in lines if not line.startswith("stack: ")]
    assert service_lines, "the JSON service wrote nothing"
    records = []
    for line in service_lines:
        record = json.loads(line)
        assert isinstance(record, dict), line
        assert {"time", "level", "message"} <= set(record), line
        assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$", record["time"]), line
        records.append(record)
    access = [r for r in records if r["message"] == "request"]
    for record in access:
        assert {"request_id", "method", "path", "route", "status", "duration_ms"} <= set(record), record
        assert isinstance(record["status"], int) and isinstance(record["duration_ms"], (int, float)), record
    by_id = {r["request_id"]: r for r in access}
    for request_id in mixed_run.request_ids:
        assert request_id in by_id, f"no access line for request {request_id}"
    verify = [by_id[i] for i in mixed_run.request_ids if by_id[i]["route"] == "/v1/receipts/verify"]
    assert len(verify) == 7
    delivered = [r for r in verify if r["verify_status"] == "delivered"]
    assert len(delivered) == 4 and all(r["apple_status"] == 0 and r["environment"] == "Production" for r in delivered)
    refused = [by_id[i] for i in mixed_run.request_ids if by_id[i]["status"] == 400]
    assert [r["error_code"] for r in refused] == ["invalid_signed_data"]
    assert any(r["message"].startswith("transactions/verify: invalid signed data") for r in records)

    secret = os.environ.get("IAP_SHARED_SECRET")
    assert secret, "the suite runs with IAP_SHARED_SECRET set (scripts/test)"
    needles = [("the shared secret", secret)]
    for receipt in mixed_run.receipts:
        middle = len(receipt) // 2
        needles.append(("a receipt", receipt[middle - 20:middle + 20]))
    for jws in mixed_run.jws:
        header, payload, signature = jws.split(".")
        needles += [("a JWS header", header[-40:]), ("a JWS payload", payload[:40]), ("a JWS signature", signature[:40])]
    for what, needle in needles:
        assert needle not in text, f"{what} is in the JSON log"

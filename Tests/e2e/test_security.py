"""Security checks: TLS verification cannot be turned off, secrets and receipts
never reach a log, errors never carry SQL or a stack, settings have no HTTP
writer, and nothing but /v1/ is reachable."""
import http.client
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from support import PAY_6, RUN_RECORD, RunRecord, assert_error, new_transaction_id, new_user_id, wait_until

REPO = Path(__file__).resolve().parents[2]
IAP_FCGI = REPO / ".build" / "release" / "iap-fcgi"
DATABASE_PASSWORD = "iap-local"   # the local and test stacks' password (scripts/stack)


# --- TLS verification -----------------------------------------------------------------------------

@pytest.mark.parametrize("variable", ["IAP_APPLE_PRODUCTION_URL", "IAP_APPLE_SANDBOX_URL"])
def test_tls_verification_cannot_be_turned_off(tmp_path, variable):
    """A plain-http Apple URL stops iap-fcgi at once, naming the variable. (The untrusted-certificate fault
    test shows verification on: a certificate from no trusted CA gets retry_later.)"""
    socket_path = tmp_path / "fcgi.sock"
    environment = {"PATH": os.environ["PATH"], "IAP_BUNDLE_IDS": "com.example.game",
                   "IAP_LISTEN": str(socket_path), variable: "http://127.0.0.1:1/verifyReceipt"}
    started = time.monotonic()
    result = subprocess.run([str(IAP_FCGI)], env=environment, capture_output=True, text=True, timeout=20)
    assert result.returncode != 0, f"iap-fcgi started with {variable}=http://...: {result.stderr}"
    assert time.monotonic() - started < 5, "iap-fcgi did not refuse the http URL at once"
    assert variable in result.stderr and "https://" in result.stderr, result.stderr
    assert not socket_path.exists(), "iap-fcgi opened its socket before refusing the configuration"


# --- error answers --------------------------------------------------------------------------------

# What an error answer must never hold: SQL, the database's or the runtime's words, a stack.
SQL_WORDS = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE FROM|WHERE|VALUES)\b")
RUNTIME_WORDS = re.compile(r"mariadb|mysql|\.swift\b|fatal error|traceback|backtrace|0x[0-9a-f]{8,}", re.IGNORECASE)


@pytest.mark.runs_last
@pytest.mark.outage("mariadb")
def test_error_answers_carry_no_sql_and_no_stack(api, stack):
    """Every error answer of the whole run (the fault tests' included), and a few provoked here, with the
    database up and down."""
    provoked = [api.post_raw("/v1/orders", b"{bad json"), api.post_json("/v1/orders", {"user_id": "x'; --"}),
                api.post_json("/v1/orders", {"user_id": "u", "product_id": "p'; DROP TABLE orders; --"}),
                api.verify("!!!", user_id="u"), api.verify("QUJD", order_id="00000000-0000-4000-8000-000000000000")]
    stack("stop mariadb")
    try:
        provoked += [api.post_json("/v1/orders", {"user_id": "u", "product_id": PAY_6}),
                     api.verify("QUJD", user_id="u"), api.get("/v1/health")]
    finally:
        stack("start mariadb")
        wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "health after MariaDB is back")
    assert all(response.status_code >= 400 for response in provoked), [r.status_code for r in provoked]

    errors = RUN_RECORD.error_answers
    assert len(errors) >= len(provoked)
    leaking = [(method, path, status, text[:300]) for method, path, status, text in errors
               if SQL_WORDS.search(text) or RUNTIME_WORDS.search(text)]
    assert not leaking, f"{len(leaking)} of {len(errors)} error answers leak: {leaking[:5]}"
    codes = {status for _, _, status, _ in errors}
    print(f"error answers checked: {len(errors)}, HTTP statuses {sorted(codes)}")


# --- logs -------------------------------------------------------------------------------------------

def all_logs(run_dir):
    logs = {path.name: path.read_text(errors="replace") for path in sorted((run_dir / "logs").glob("*"))
            if path.is_file()}
    assert "iap-fcgi.log" in logs and logs["iap-fcgi.log"], f"no iap-fcgi log in {run_dir / 'logs'}"
    return logs


@pytest.mark.runs_last
def test_no_secret_password_or_receipt_reaches_a_log(api, receipts, simulator, run_dir):
    """Every log of the stack, after the whole run (faults, restarts and errors included)."""
    secret = os.environ.get("IAP_SHARED_SECRET")
    assert secret, "the test stack runs with IAP_SHARED_SECRET set (scripts/test)"
    assert simulator.control()["shared_secret"] == secret, "the simulator does not check the shared secret"
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    answer = api.verify(receipt, user_id=new_user_id())
    assert answer.json()["status"] == "delivered", (
        "a verify with the shared secret was not delivered: the service does not send it")
    # The request's lines reach the logs after its answer (nginx writes its access log once a second).
    request_id = answer.headers["X-Request-Id"]
    for name in ("iap-fcgi.log", "nginx-access.log"):
        wait_until(lambda: request_id in (run_dir / "logs" / name).read_text(errors="replace"), 10,
                   f"the request's line in logs/{name}")

    needles = {secret: "the shared secret", DATABASE_PASSWORD: "the database password",
               os.environ["IAP_DB_PASSWORD"]: "the database password",
               RunRecord.RECEIPT_MARK: "the start of a receipt"}
    needles.update({piece: "a piece of a receipt posted in this run" for piece in RUN_RECORD.receipt_pieces})
    assert len(RUN_RECORD.receipt_pieces) >= 1
    for name, text in all_logs(run_dir).items():
        for needle, what in needles.items():
            assert needle not in text, f"{what} is in logs/{name}"


# --- settings -------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/v1/version", "/v1/health"])
def test_settings_have_no_http_writer(api, db, method, path):
    before = (db.setting("review_version"), db.setting("sandbox_users"))
    response = api.request(method, path, data=b'{"review_version":"9.9.9","sandbox_users":"me"}')
    assert_error(response, 405, "method_not_allowed")
    # Nothing writes settings after an answer: the route refused it before any handler ran.
    assert (db.setting("review_version"), db.setting("sandbox_users")) == before
    assert api.version()["review_version"] == before[0]


@pytest.mark.parametrize("path", ["/v1/settings", "/v1/admin", "/v1/review-version", "/v1/sandbox-users"])
def test_no_settings_route_exists(api, db, path):
    before = (db.setting("review_version"), db.setting("sandbox_users"))
    for method in ("GET", "POST", "PUT"):
        assert_error(api.request(method, path, data=b'{"review_version":"9.9.9"}'), 404, "not_found")
    assert (db.setting("review_version"), db.setting("sandbox_users")) == before


# --- nothing but /v1/ -------------------------------------------------------------------------------

def get_exactly(path):
    """GET `path` byte for byte (no client-side normalisation of dot segments or escapes)."""
    connection = http.client.HTTPConnection("127.0.0.1", int(os.environ["IAP_HTTP_PORT"]), timeout=10)
    try:
        connection.putrequest("GET", path, skip_accept_encoding=True)
        connection.endheaders()
        response = connection.getresponse()
        body = response.read().decode(errors="replace")
        RUN_RECORD.answered("GET", path, response.status, body)
        return response.status, response.getheader("Content-Type"), body
    finally:
        connection.close()


def assert_json_error_and_no_file(path, status, content_type, body):
    assert "root:" not in body and "CREATE TABLE" not in body and "[core]" not in body, f"{path}: a file: {body[:200]}"
    assert content_type == "application/json", f"{path}: {status} with Content-Type {content_type}: {body[:200]!r}"
    error = json.loads(body)["error"]
    assert set(error) == {"code", "message"}, f"{path}: {body}"
    return error


@pytest.mark.parametrize("path", ["/", "/etc/passwd", "/v1/../etc/passwd", "/.git/config", "/nginx_status",
                                  "/sql/001_schema.sql", "/README.md", "/Package.swift", "/v1", "/V1/health",
                                  "//etc/passwd", "/v1/.."])
def test_nothing_but_v1_is_reachable(path):
    status, content_type, body = get_exactly(path)
    assert status == 404, f"{path}: {status} {body[:200]!r}"
    assert assert_json_error_and_no_file(path, status, content_type, body)["code"] == "not_found"


@pytest.mark.parametrize("path", ["/%2e%2e/", "/%2e%2e/etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                                  "/v1/../../etc/passwd", "/..", "/v1/..%2f..%2fetc/passwd"])
def test_paths_climbing_above_the_root_get_a_json_error(path):
    """nginx refuses these itself (400) while reading the request line: its answer must still be the API's
    JSON error, never its HTML page and never a file."""
    status, content_type, body = get_exactly(path)
    assert status in (400, 404), f"{path}: {status} {body[:200]!r}"
    assert_json_error_and_no_file(path, status, content_type, body)

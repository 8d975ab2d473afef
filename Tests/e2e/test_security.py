"""Security checks: TLS verification cannot be turned off, secrets and receipts
never reach a log, errors never carry SQL or a stack, settings have no HTTP
writer, and nothing but /v1/ is reachable."""
import os
import subprocess
from pathlib import Path

import pytest

from support import PAY_6, new_transaction_id, new_user_id, wait_until

REPO = Path(__file__).resolve().parents[2]
IAP_FCGI = REPO / ".build" / "release" / "iap-fcgi"


@pytest.mark.parametrize("variable", ["IAP_APPLE_PRODUCTION_URL", "IAP_APPLE_SANDBOX_URL"])
def test_tls_verification_cannot_be_turned_off(tmp_path, variable):
    environment = {"PATH": os.environ["PATH"], "IAP_BUNDLE_IDS": "com.example.game",
                   "IAP_LISTEN": str(tmp_path / "fcgi.sock"), variable: "http://127.0.0.1:1/verifyReceipt"}
    result = subprocess.run([str(IAP_FCGI)], env=environment, capture_output=True, text=True, timeout=20)
    assert result.returncode != 0
    assert variable in result.stderr and "https://" in result.stderr, result.stderr


def test_no_secret_password_or_receipt_reaches_a_log(api, receipts, run_dir):
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    assert api.verify(receipt, user_id=new_user_id()).json()["status"] == "delivered"
    secret = os.environ.get("IAP_SHARED_SECRET")
    assert secret, "the test stack runs with IAP_SHARED_SECRET set (scripts/test)"
    logs = "".join(path.read_text(errors="replace") for path in (run_dir / "logs").glob("*.log"))
    assert logs, "no logs found"
    for needle, what in ((secret, "the shared secret"), (os.environ["IAP_DB_PASSWORD"], "the database password"),
                         (receipt[:40], "receipt data")):
        assert needle not in logs, f"{what} is in a log"


ERROR_LEAKS = ("SELECT", "INSERT", "UPDATE", "MariaDB", "mysql", ".swift", "Fatal", "Traceback")


@pytest.mark.outage("mariadb")
def test_error_messages_carry_no_sql_or_stack(api, db, stack):
    answers = [api.post_raw("/v1/orders", b"{bad json"), api.post_json("/v1/orders", {"user_id": "x'; --"}),
               api.verify("!!!", user_id="u"), api.verify("QUJD", order_id="00000000-0000-4000-8000-000000000000")]
    stack("stop mariadb")
    try:
        answers.append(api.post_json("/v1/orders", {"user_id": "u", "product_id": PAY_6}))
        answers.append(api.verify("QUJD", user_id="u"))
    finally:
        stack("start mariadb")
        wait_until(lambda: api.get("/v1/health").status_code == 200, 30, "health after MariaDB is back")
    for response in answers:
        for leak in ERROR_LEAKS:
            assert leak not in response.text, f"{leak!r} in an answer: {response.text[:300]}"


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
@pytest.mark.parametrize("path", ["/v1/version", "/v1/health"])
def test_settings_have_no_http_writer(api, db, method, path):
    before = (db.setting("review_version"), db.setting("sandbox_users"))
    response = api.request(method, path, data=b'{"review_version":"9.9.9","sandbox_users":"me"}')
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert (db.setting("review_version"), db.setting("sandbox_users")) == before


@pytest.mark.parametrize("path", ["/", "/etc/passwd", "/v1/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd",
                                  "/.git/config", "/nginx_status", "/sql/001_schema.sql", "/README.md"])
def test_nothing_but_v1_is_reachable(api, path):
    response = api.request("GET", path)
    assert response.status_code in (400, 404), f"{path}: {response.status_code}"
    assert "root:" not in response.text and "CREATE TABLE" not in response.text
    if response.status_code == 404:
        assert response.json()["error"]["code"] == "not_found"

"""Service end to end: the routes of docs/api.md through nginx, checked in the HTTP
answers and in the MariaDB rows, plus the database outage and the log."""
import json
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from decimal import Decimal

import pytest

from support import (ISO_UTC_PATTERN, PAY_6, UUID_PATTERN, assert_error, assert_json_content_type,
                     new_transaction_id, new_user_id, utc_now, wait_until)

TWO_MIB = 2 * 1024 * 1024


# --- POST /v1/orders -------------------------------------------------------------

def test_order_answer_has_the_contract_shape(api):
    user_id = new_user_id()
    response = api.post_json("/v1/orders", {"user_id": user_id, "product_id": PAY_6})

    assert response.status_code == 201, response.text
    assert_json_content_type(response)
    order = response.json()
    assert set(order) == {"order_id", "user_id", "product_id", "price", "currency", "status", "created_at"}
    assert re.match(UUID_PATTERN, order["order_id"]), f"order_id {order['order_id']!r} is not a lowercase UUID"
    assert order["user_id"] == user_id
    assert order["product_id"] == PAY_6
    assert order["price"] == "6.00"
    assert order["currency"] == "CNY"
    assert order["status"] == "created"
    assert re.match(ISO_UTC_PATTERN, order["created_at"]), f"created_at {order['created_at']!r} is not ISO UTC"


def test_order_ids_are_distinct_random_uuids(api):
    """Order ids come from the kernel's CSPRNG, read 1 KiB at a time (Support/OrderID.swift): ids made
    at once on several threads must still all differ, each a version 4 UUID of the RFC 4122 variant."""
    user_id = new_user_id()
    with ThreadPoolExecutor(max_workers=16) as pool:
        answers = list(pool.map(lambda _: api.post_json("/v1/orders", {"user_id": user_id, "product_id": PAY_6}),
                                range(200)))
    order_ids = [answer.json()["order_id"] for answer in answers]
    assert len(set(order_ids)) == 200
    for order_id in order_ids:
        assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}", order_id), order_id

def test_order_is_stored_as_a_client_order(api, db):
    user_id = new_user_id()
    order = api.create_order(user_id)

    row = db.order(order["order_id"])
    assert row is not None, "no orders row for the order_id answered"
    assert row["user_id"] == user_id
    assert row["product_id"] == PAY_6
    assert row["price"] == Decimal("6.00")
    assert row["currency"] == "CNY"
    assert row["status"] == "created"
    assert row["origin"] == "client"
    assert abs((utc_now() - row["created_at"]).total_seconds()) < 120, (
        f"created_at {row['created_at']} is not UTC now")
    assert db.orders_of(user_id) == [row], "exactly one order for the user"


@pytest.mark.parametrize("price", ["6.00", "6"])
def test_order_with_the_catalog_price_is_created(api, price):
    response = api.post_json("/v1/orders", {"user_id": new_user_id(), "product_id": PAY_6, "price": price})

    assert response.status_code == 201, response.text
    assert response.json()["price"] == "6.00"


def test_order_with_another_price_is_refused(api, db):
    user_id = new_user_id()
    response = api.post_json("/v1/orders", {"user_id": user_id, "product_id": PAY_6, "price": "5.99"})

    assert_error(response, 422, "price_mismatch")
    assert db.orders_of(user_id) == []


def test_order_for_an_unknown_product_is_refused(api, db):
    user_id = new_user_id()
    response = api.post_json("/v1/orders", {"user_id": user_id, "product_id": "zydj.product.nope"})

    assert_error(response, 404, "unknown_product")
    assert db.orders_of(user_id) == []


@pytest.fixture
def inactive_product(db):
    """A retired product (active = 0), deleted again after the test."""
    product_id = f"e2e.retired.{uuid.uuid4().hex[:12]}"
    db.execute("INSERT INTO products (product_id, title, price, currency, active) "
               "VALUES (%s, 'retired by e2e', 6.00, 'CNY', 0)", product_id)
    yield product_id
    db.execute("DELETE FROM products WHERE product_id = %s", product_id)


def test_order_for_an_inactive_product_is_refused(api, db, inactive_product):
    user_id = new_user_id()
    response = api.post_json("/v1/orders", {"user_id": user_id, "product_id": inactive_product})

    assert_error(response, 404, "unknown_product")
    assert db.orders_of(user_id) == []


@pytest.mark.parametrize("missing", ["user_id", "product_id"])
def test_order_without_a_required_field_is_refused(api, missing):
    body = {"user_id": new_user_id(), "product_id": PAY_6}
    del body[missing]

    assert_error(api.post_json("/v1/orders", body), 400, "missing_field")


@pytest.mark.parametrize("field, value", [
    ("user_id", 1001),
    ("product_id", [PAY_6]),
    ("user_id", "u" * 65),
    ("user_id", ""),
    ("user_id", "a\u0001b"),
    ("user_id", "line\nbreak"),
    ("user_id", "tab\there"),
    ("user_id", "del\u007f"),
], ids=["user_id number", "product_id list", "user_id 65 chars", "user_id empty",
        "user_id SOH", "user_id newline", "user_id tab", "user_id DEL"])
def test_order_with_an_invalid_field_is_refused(api, db, field, value):
    body = {"user_id": new_user_id(), "product_id": PAY_6, field: value}
    orders_before = db.scalar("SELECT COUNT(*) FROM orders")

    assert_error(api.post_json("/v1/orders", body), 400, "invalid_field")
    assert db.scalar("SELECT COUNT(*) FROM orders") == orders_before


@pytest.mark.parametrize("user_id", ["u" * 64, "ü" * 64], ids=["64 ascii", "64 non-ascii"])
def test_user_id_of_64_characters_is_accepted(api, db, user_id):
    order = api.create_order(user_id)

    assert order["user_id"] == user_id
    assert db.order(order["order_id"])["user_id"] == user_id


@pytest.mark.parametrize("body", [
    b'{"user_id": "u-1", "product_id": ',
    b'[{"user_id": "u-1", "product_id": "zydj.product.pay_6"}]',
    b"",
], ids=["malformed", "array", "empty"])
def test_order_body_that_is_not_a_json_object_is_refused(api, body):
    response = api.post_raw("/v1/orders", body, headers={"Content-Type": "application/json"})

    assert_error(response, 400, "invalid_json")


@pytest.mark.parametrize("content_type", [None, "application/x-www-form-urlencoded"],
                         ids=["no Content-Type", "form Content-Type"])
def test_json_body_is_read_whatever_the_content_type(api, db, content_type):
    user_id = new_user_id()
    body = json.dumps({"user_id": user_id, "product_id": PAY_6}).encode()
    headers = {"Content-Type": content_type} if content_type else {}

    response = api.post_raw("/v1/orders", body, headers=headers)

    if content_type is None:
        assert "Content-Type" not in response.request.headers, "the request must go without a Content-Type"
    assert response.status_code == 201, response.text
    assert db.order(response.json()["order_id"])["user_id"] == user_id


@pytest.mark.parametrize("user_id", [
    "x'); DROP TABLE orders; --",
    '" OR 1=1 --',
    "back\\slash\\\\ and \\'quote",
    "用户-ü-😀",
], ids=["sql quote", "sql double quote", "backslashes", "non-ascii"])
def test_user_id_is_stored_and_returned_byte_for_byte(api, db, user_id):
    order = api.create_order(user_id)

    assert order["user_id"] == user_id
    stored = db.one("SELECT HEX(user_id) AS hex FROM orders WHERE order_id = %s", order["order_id"])
    assert stored is not None, "no orders row for the order"
    assert bytes.fromhex(stored["hex"]) == user_id.encode("utf-8"), "the stored user_id differs from the one sent"
    assert db.one("SHOW TABLES LIKE 'orders'") is not None, "the orders table is gone"
    assert db.scalar("SELECT COUNT(*) FROM orders WHERE user_id = %s", user_id) >= 1


@pytest.mark.parametrize("path", ["/v1/orders", "/v1/receipts/verify"])
def test_body_over_2_mib_is_refused_with_the_json_error(api, path):
    padding = "a" * (TWO_MIB + 1024)
    body = json.dumps({"user_id": new_user_id(), "product_id": PAY_6, "receipt_data": padding}).encode()

    response = api.post_raw(path, body, headers={"Content-Type": "application/json"})

    assert_error(response, 413, "body_too_large")


# --- GET /v1/version -------------------------------------------------------------

@pytest.mark.parametrize("app_version", [None, "1.2.0"], ids=["no app_version", "app_version 1.2.0"])
def test_version_without_review_version(api, app_version):
    assert api.version(app_version) == {"review_version": "", "in_review": False,
                                        "verify_environment": "Production"}


def wait_for_review_version(api, review_version):
    """Polls GET /v1/version until the service shows review_version (up to 7 s: it reads settings within 5 s)."""
    return wait_until(lambda: api.version()["review_version"] == review_version, 7,
                      f"GET /v1/version showing review_version {review_version!r}")


def test_review_version_set_in_sql_reaches_the_service(api, db):
    db.set_setting("review_version", "1.3.0")

    wait_for_review_version(api, "1.3.0")
    assert api.version("1.3.0") == {"review_version": "1.3.0", "in_review": True,
                                    "verify_environment": "Sandbox"}
    assert api.version("1.2.0") == {"review_version": "1.3.0", "in_review": False,
                                    "verify_environment": "Production"}


def test_review_version_set_with_iapctl_reaches_the_service(api, db, iapctl):
    iapctl("review-version", "1.4.0")

    assert db.setting("review_version") == "1.4.0"
    wait_for_review_version(api, "1.4.0")
    assert api.version("1.4.0")["in_review"] is True
    assert "1.4.0" in iapctl("review-version"), "iapctl review-version does not print the value"


# --- GET /v1/health and unknown routes -----------------------------------------------

def test_health(api):
    response = api.get("/v1/health")

    assert response.status_code == 200, response.text
    assert_json_content_type(response)
    assert response.json() == {"status": "ok", "database": "ok"}


@pytest.mark.parametrize("path", ["/v1/nope", "/other"])
def test_unknown_route_is_a_json_404(api, path):
    assert_error(api.get(path), 404, "not_found")


@pytest.mark.parametrize("method, path", [
    ("GET", "/v1/orders"),
    ("PUT", "/v1/receipts/verify"),
    ("POST", "/v1/version"),
])
def test_wrong_method_is_a_json_405(api, method, path):
    assert_error(api.request(method, path), 405, "method_not_allowed")


# --- the log ------------------------------------------------------------------------------

def read_log_from(path, offset):
    with open(path, "rb") as log:
        log.seek(offset)
        return log.read().decode("utf-8", errors="replace")


def test_log_has_a_line_per_request(api, run_dir):
    log_path = run_dir / "logs" / "iap-fcgi.log"
    offset = log_path.stat().st_size
    expected = [("GET", "/v1/health", "200"), ("POST", "/v1/orders", "201"), ("GET", "/v1/nope", "404")]

    api.get("/v1/health")
    api.create_order(new_user_id())
    api.get("/v1/nope")

    def logged(lines, method, path, status):
        return any(method in line and path in line and re.search(rf"\b{status}\b", line) for line in lines)

    def all_logged():
        lines = read_log_from(log_path, offset).splitlines()
        return all(logged(lines, *request) for request in expected)
    wait_until(all_logged, 3, f"a line with method, path and status for each of {expected} in {log_path}")



def test_a_batch_of_verifications_logs_one_whole_line_each(api, run_dir, receipts):
    """The delivery thread writes a batch's access lines in one write (Support/GatheredLines.swift):
    each answer still has its own line, whole, with its request id, none lost or merged."""
    log_path = run_dir / "logs" / "iap-fcgi.log"
    offset = log_path.stat().st_size
    bodies = [receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
              for _ in range(24)]
    with ThreadPoolExecutor(max_workers=24) as pool:
        answers = list(pool.map(lambda receipt: api.verify(receipt, user_id=new_user_id()), bodies))
    assert [answer.json().get("status") for answer in answers] == ["delivered"] * 24
    request_ids = [answer.headers["X-Request-Id"] for answer in answers]
    assert len(set(request_ids)) == 24

    def lines_of(request_id):
        return [line for line in read_log_from(log_path, offset).splitlines() if f"id={request_id}" in line]

    wait_until(lambda: all(lines_of(request_id) for request_id in request_ids), 3, "an access line per answer")
    for request_id in request_ids:
        (line,) = lines_of(request_id)
        assert re.fullmatch(rf"\S+ POST /v1/receipts/verify 200 [0-9.]+ms id={re.escape(request_id)}", line), line

def test_log_holds_no_receipt_and_no_password(api, run_dir, receipts, db):
    log_path = run_dir / "logs" / "iap-fcgi.log"
    offset = log_path.stat().st_size
    receipt = receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
    # The receipt went the whole way (recorded, sent to Apple, delivered): every place that could log it did.
    answer = api.verify(receipt, user_id=new_user_id())
    assert answer.status_code == 200 and answer.json()["status"] == "delivered", answer.text
    # The access line is the request's last: once it is in the file, so is whatever the request logged.
    request_id = answer.headers["X-Request-Id"]
    wait_until(lambda: f"id={request_id}" in read_log_from(log_path, offset), 10, "the request's access line")

    log = log_path.read_text(encoding="utf-8", errors="replace")
    log = log.replace(str(run_dir), "<run>")  # a run dir such as /tmp/iap-local is not the password
    assert receipt[:40] not in log, "receipt data appears in the log"
    assert "iap-local" not in log, "the database password appears in the log"
    password = db.connect_args["password"]
    assert not password or password not in log, "the database password appears in the log"


# --- the database down -----------------------------------------------------------------

@pytest.mark.outage("mariadb")
def test_health_reports_the_database_down(api, database_down):
    response = api.get("/v1/health")

    assert response.status_code == 503, response.text
    assert_json_content_type(response)
    assert response.json().get("database") == "down", response.text


@pytest.mark.outage("mariadb")
def test_orders_answer_503_while_the_database_is_down(api, database_down):
    response = api.post_json("/v1/orders", {"user_id": new_user_id(), "product_id": PAY_6})

    assert_error(response, 503, "database_unavailable")
    assert response.headers.get("Retry-After"), "503 database_unavailable without Retry-After"


@pytest.mark.outage("mariadb")
def test_service_recovers_from_a_database_restart_without_restarting(api, db, stack, iap_fcgi_pid):
    pid_before = iap_fcgi_pid()
    stack("stop mariadb")
    try:
        assert api.get("/v1/health").status_code == 503, "health must notice the database is down"
    finally:
        stack("start mariadb")

    wait_until(lambda: api.get("/v1/health").status_code == 200, 10, "health 200 after MariaDB started")
    order = api.create_order(new_user_id())
    assert db.order(order["order_id"]) is not None, "the order made after the restart is not stored"
    assert iap_fcgi_pid() == pid_before, "iap-fcgi was restarted: it must reconnect by itself"


# More than IAP_ACCEPT_THREADS (8 in the stack), so every worker thread and its
# database connection takes part.
REQUESTS_AFTER_RESTART = 48


@pytest.mark.outage("mariadb")
def test_no_request_fails_once_the_database_is_back(api, stack):
    stack("stop mariadb")
    try:
        api.get("/v1/health")  # the service meets the outage
    finally:
        stack("start mariadb")
    wait_until(lambda: api.get("/v1/health").status_code == 200, 10, "health 200 after MariaDB started")

    def place_order(_):
        return api.post_json("/v1/orders", {"user_id": new_user_id(), "product_id": PAY_6}).status_code

    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(place_order, range(REQUESTS_AFTER_RESTART)))

    failed = [status for status in statuses if status != 201]
    assert not failed, (f"{len(failed)} of {len(statuses)} orders failed ({sorted(set(failed))}) after health "
                        f"was 200 again: a connection broken by the restart was used without reconnecting")

"""Helpers shared by the end-to-end tests: the service's HTTP API, the stack's
database, the App Store simulator's control port, and the assertions every test
repeats (the error shape, the verify answer table of docs/api.md).

The fixtures that build these objects live in conftest.py; the tests import the
plain functions from here.
"""
import json
import time
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone

import pymysql
import requests

from fastcgi_client import start_service, stop_service, wait_until_answering
from webhook_receiver import NEW_HEADS_PENDING

PAY_6 = "zydj.product.pay_6"
PAY_30 = "zydj.product.pay_30"
PAY_98 = "zydj.product.pay_98"
BUNDLE_ID = "com.example.game"

UUID_PATTERN = r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$"
ISO_UTC_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$"

# HTTP seconds for one request: long enough for the service's Apple retries
# against a slow simulator (3 attempts of IAP_APPLE_TIMEOUT_MS plus backoff).
REQUEST_TIMEOUT = 60

# status -> (HTTP status, code, finish_transaction), the table in docs/api.md "The verify answer".
VERIFY_ANSWERS = {
    "delivered": (200, 2, True),
    "already_delivered": (200, 1, True),
    "not_paid": (200, 3, True),
    "rejected": (200, 3, True),
    "pending": (202, 4, False),
    "retry_later": (503, 4, False),
}


def new_user_id():
    """A user id no other test uses, so tests never see each other's rows."""
    return f"e2e-{uuid.uuid4()}"


def new_transaction_id():
    """A fresh 16-digit Apple-style transaction id."""
    return str(2_000_000_000_000_000 + uuid.uuid4().int % 1_000_000_000_000_000)


def utc_now():
    """Now in UTC, naive, comparable with the DATETIME(3) values pymysql returns."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def wait_until(probe, timeout, what, interval=0.25):
    """Calls probe() until it returns a truthy value or timeout seconds pass.

    Returns the truthy value; fails with `what` and the last value seen otherwise.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout} s (last: {value!r})")
        time.sleep(interval)


@contextmanager
def webhook_service(db, directory, webhook_url, secret, name="webhook"):
    """An iap-fcgi of the test's own (its FastCGI socket in `directory`, the stack's database) that POSTs
    the events to `webhook_url`, signed with `secret`; yields its log's path, and stops it at the end, when
    the secret must not be in its log. The events earlier tests left pending were pulled (the stack runs
    without a webhook): they are marked sent first, as README tells an operator who turns the webhook on
    after pulling, and it waits until the service has none left to send."""
    db.execute("UPDATE events SET status = 'sent', sent_at = UTC_TIMESTAMP(3) WHERE status = 'pending'")
    socket, log = str(directory / f"{name}.sock"), directory / f"{name}.log"
    process = start_service(log, IAP_LISTEN=socket, IAP_WEBHOOK_URL=webhook_url, IAP_WEBHOOK_SECRET=secret)
    try:
        wait_until_answering(socket, process, log)
        wait_until(lambda: db.scalar(NEW_HEADS_PENDING) == 0, 180, "the events earlier tests left sent")
        yield log
    finally:
        assert stop_service(process) == 0, log.read_text(errors="replace")[-3000:]
    assert secret not in log.read_text(errors="replace")


# --- assertions ---------------------------------------------------------------

def assert_json_content_type(response):
    content_type = response.headers.get("Content-Type", "")
    assert content_type.split(";")[0].strip() == "application/json", (
        f"{response.request.method} {response.request.path_url}: Content-Type is {content_type!r}, "
        f"body {response.text[:200]!r}")


def assert_error(response, http_status, code):
    """The one error shape of docs/api.md: exactly {"error": {"code", "message"}}, as JSON."""
    where = f"{response.request.method} {response.request.path_url}"
    assert response.status_code == http_status, (
        f"{where}: expected HTTP {http_status} {code}, got {response.status_code}: {response.text[:300]!r}")
    assert_json_content_type(response)
    body = response.json()
    assert set(body) == {"error"}, f"{where}: error body has keys {sorted(body)}"
    assert set(body["error"]) == {"code", "message"}, f"{where}: error has keys {sorted(body['error'])}"
    assert body["error"]["code"] == code, f"{where}: error code {body['error']['code']!r}, expected {code!r}"
    message = body["error"]["message"]
    assert isinstance(message, str) and message, f"{where}: error message {message!r} is not a non-empty string"
    return body


def assert_verify_answer(response, status):
    """A verify answer with `status`, and the HTTP status, code and finish flag
    the contract pairs with it; retry_later also needs Retry-After. Returns the body."""
    assert status in VERIFY_ANSWERS, f"unknown verify status {status!r}"
    http_status, code, finish = VERIFY_ANSWERS[status]
    assert response.status_code == http_status, (
        f"expected HTTP {http_status} for {status}, got {response.status_code}: {response.text[:500]!r}")
    assert_json_content_type(response)
    body = response.json()
    assert body.get("status") == status, f"expected status {status!r}, got {body.get('status')!r}: {body}"
    assert body.get("code") == code, f"{status}: expected code {code}, got {body.get('code')!r}"
    assert body.get("finish_transaction") is finish, (
        f"{status}: expected finish_transaction {finish}, got {body.get('finish_transaction')!r}")
    assert "apple_status" in body, f"{status}: every verify answer carries apple_status: {body}"
    if status == "retry_later":
        assert response.headers.get("Retry-After"), f"retry_later without a Retry-After header: {response.headers}"
    return body


def answered_transactions(body):
    """The answer's transactions by transaction id."""
    return {t["transaction_id"]: t for t in body.get("transactions") or []}


# --- the service --------------------------------------------------------------

class Api:
    """The service through nginx, as a client sees it."""

    def __init__(self, base_url):
        self.base_url = base_url.rstrip("/")

    def url(self, path):
        return self.base_url + path

    def request(self, method, path, **kwargs):
        kwargs.setdefault("timeout", REQUEST_TIMEOUT)
        response = requests.request(method, self.url(path), **kwargs)
        RUN_RECORD.answered(method, path, response.status_code, response.text)
        return response

    def get(self, path, **kwargs):
        return self.request("GET", path, **kwargs)

    def post_json(self, path, document, **kwargs):
        """POSTs `document` serialised as JSON (with Content-Type application/json)."""
        return self.request("POST", path, json=document, **kwargs)

    def post_raw(self, path, data, headers=None):
        """POSTs bytes as they are; requests adds no Content-Type of its own."""
        return self.request("POST", path, data=data, headers=headers or {})

    def verify(self, receipt_data, **fields):
        """POST /v1/receipts/verify; fields left as None are not sent."""
        RUN_RECORD.receipt_posted(receipt_data)
        body = {"receipt_data": receipt_data, **fields}
        return self.post_json("/v1/receipts/verify", {k: v for k, v in body.items() if v is not None})

    def version(self, app_version=None):
        params = {"app_version": app_version} if app_version is not None else None
        response = self.get("/v1/version", params=params)
        assert response.status_code == 200, f"GET /v1/version: {response.status_code} {response.text[:200]!r}"
        return response.json()

    def create_order(self, user_id, product_id=PAY_6, **fields):
        """POST /v1/orders that must succeed; returns the answer."""
        response = self.post_json("/v1/orders", {"user_id": user_id, "product_id": product_id, **fields})
        assert response.status_code == 201, f"creating an order: {response.status_code} {response.text[:300]!r}"
        return response.json()


# --- the database ---------------------------------------------------------------

class Database:
    """The stack's MariaDB, read the way a DBA would. Reconnects after a restart."""

    def __init__(self, **connect_args):
        self.connect_args = dict(connect_args, charset="utf8mb4", autocommit=True,
                                 cursorclass=pymysql.cursors.DictCursor, connect_timeout=5)
        self.connection = pymysql.connect(**self.connect_args)

    def close(self):
        self.connection.close()

    def live_connection(self):
        """The connection, made again when MariaDB was restarted since the last query."""
        try:
            self.connection.ping(reconnect=False)
        except pymysql.err.Error:
            self.connection = pymysql.connect(**self.connect_args)
        return self.connection

    def query(self, sql, *args):
        with self.live_connection().cursor() as cursor:
            cursor.execute(sql, args)
            return list(cursor.fetchall())

    def one(self, sql, *args):
        rows = self.query(sql, *args)
        assert len(rows) <= 1, f"expected at most one row from {sql!r}, got {len(rows)}"
        return rows[0] if rows else None

    def scalar(self, sql, *args):
        row = self.one(sql, *args)
        return None if row is None else next(iter(row.values()))

    def execute(self, sql, *args):
        with self.live_connection().cursor() as cursor:
            return cursor.execute(sql, args)

    # orders

    def order(self, order_id):
        return self.one("SELECT * FROM orders WHERE order_id = %s", order_id)

    def orders_of(self, user_id):
        return self.query("SELECT * FROM orders WHERE user_id = %s ORDER BY order_id", user_id)

    # transactions

    def transaction(self, transaction_id):
        return self.one("SELECT * FROM transactions WHERE transaction_id = %s", transaction_id)

    def transactions(self, transaction_ids):
        """Rows of these transaction ids, by transaction id (absent ids are missing)."""
        ids = list(transaction_ids)
        rows = self.query(f"SELECT * FROM transactions WHERE transaction_id IN ({placeholders(ids)})"
                          " ORDER BY transaction_id", *ids)
        return {row["transaction_id"]: row for row in rows}

    def delivered_count(self, transaction_ids):
        ids = list(transaction_ids)
        return self.scalar(f"SELECT COUNT(*) FROM transactions WHERE state = 'delivered'"
                           f" AND transaction_id IN ({placeholders(ids)})", *ids)

    # receipts

    def receipt(self, receipt_id):
        return self.one("SELECT * FROM receipts WHERE receipt_id = %s", receipt_id)

    def receipts_with_sha256(self, sha256):
        return self.query("SELECT * FROM receipts WHERE sha256 = %s ORDER BY receipt_id", sha256)

    def receipt_count(self):
        return self.scalar("SELECT COUNT(*) FROM receipts")

    # settings

    def setting(self, name):
        return self.scalar("SELECT value FROM settings WHERE name = %s", name)

    def set_setting(self, name, value):
        self.execute("UPDATE settings SET value = %s WHERE name = %s", value, name)


def open_receipts(db, user_id):
    """Receipt rows of the user whose verification is still open: not verified, and not closed by
    retry-pending as superseded (its bytes completed in another row) or given up."""
    return db.scalar("SELECT COUNT(*) FROM receipts WHERE user_id = %s AND verified_at IS NULL"
                     " AND retry_final_state IS NULL", user_id)


def placeholders(values):
    assert values, "an IN list needs at least one value"
    return ", ".join(["%s"] * len(values))


# --- the App Store simulator ------------------------------------------------------

class Simulator:
    """The simulator's plain-HTTP control port (faults and call counters)."""

    def __init__(self, control_port):
        self.base_url = f"http://127.0.0.1:{control_port}"

    def control(self, **settings):
        """POST /control: e.g. control(force_status=21005, fail_next=1). Omitted keys keep their value."""
        response = requests.post(self.base_url + "/control", data=json.dumps(settings), timeout=10)
        assert response.status_code == 200, f"simulator refused {settings}: {response.status_code} {response.text!r}"
        return response.json()

    def reset(self):
        """Every fault back to the simulator's defaults."""
        return self.control(reset=True)

    def stats(self):
        response = requests.get(self.base_url + "/stats", timeout=10)
        assert response.status_code == 200, f"simulator /stats: {response.status_code} {response.text!r}"
        return response.json()

    def reset_stats(self):
        response = requests.post(self.base_url + "/stats/reset", timeout=10)
        assert response.status_code == 200, f"simulator /stats/reset: {response.status_code} {response.text!r}"

    def requests_to(self, environment):
        """verifyReceipt calls that reached `environment` ('production' or 'sandbox') since the last reset."""
        return self.stats()[environment]["requests"]


# --- what the whole run saw ---------------------------------------------------------

class RunRecord:
    """What the suite sent and got back through Api, for the checks that look at
    the whole run once every other test is done (test_security.py): every error
    answer, and a piece of every receipt posted (to look for in the logs)."""

    # Every app receipt the simulator signs is a PKCS#7 SignedData in DER: 30 82 LL LL, then the OID
    # signedData (06 09 2A 86 48 86 F7 0D 01 07 02), which in base64 is this at characters 8-19.
    RECEIPT_MARK = "KoZIhvcNAQcC"

    def __init__(self):
        self.error_answers = []          # (method, path, HTTP status, body text), status >= 400
        self.receipt_pieces = set()      # 40 characters from the middle of each receipt posted

    def answered(self, method, path, status, text):
        if status >= 400:
            self.error_answers.append((method, path, status, text[:4000]))

    def receipt_posted(self, receipt_data):
        if isinstance(receipt_data, str) and receipt_data[8:20] == self.RECEIPT_MARK:
            middle = len(receipt_data) // 2
            self.receipt_pieces.add(receipt_data[middle - 20:middle + 20])


RUN_RECORD = RunRecord()


# --- lock waits: a known point inside the service ----------------------------------

def lock_waiting_queries(containing):
    """The queries of the stack's MariaDB now waiting for a row lock whose text holds `containing`. A test
    holds a lock on purpose and waits for the service's statement to queue behind it: then that request is
    known to be inside. Read as root (information_schema.INNODB_TRX needs the PROCESS privilege)."""
    from server_admin import root_sql
    pattern = "%" + containing.replace("\\", "\\\\").replace("'", "''") + "%"
    return [row[0] for row in root_sql("SELECT trx_query FROM information_schema.INNODB_TRX"
                                       f" WHERE trx_state = 'LOCK WAIT' AND trx_query LIKE '{pattern}'")]


# --- a browser ---------------------------------------------------------------------

def headless_chromium():
    """Debian's Chromium, headless, driven by selenium through Debian's chromium-driver; the test stack's
    TLS certificates are accepted (they are signed by the stack's own test CA). The caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--ignore-certificate-errors",
                     "--window-size=1400,1000", "--disable-gpu"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(60)
    return driver

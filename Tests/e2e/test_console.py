"""The support console (IAP_CONSOLE_LISTEN) in a real browser: Debian's headless Chromium driven by
selenium, through the stack's nginx TLS server of the console ($IAP_CONSOLE_URL). Staff accounts are
made with `iapctl staff add --password-stdin`. Screenshots of the main pages go to
$IAP_RUN/console-screenshots (the test prints the folder)."""
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import requests
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

import fastcgi_client
from conftest import IAPCTL, REPO
import support
from support import PAY_6, new_transaction_id, new_user_id
from test_server_api import register_order, register_transaction

PASSWORD = "correct horse battery"
XSS = "<script>window.__xss=1</script>\"'"


def console_url():
    url = os.environ.get("IAP_CONSOLE_URL")
    assert url, "IAP_CONSOLE_URL is not set: eval \"$(scripts/stack env)\""
    return url


def screenshots_dir():
    folder = Path(os.environ["IAP_RUN"]) / "console-screenshots"
    folder.mkdir(exist_ok=True)
    return folder


def add_staff(role, name=None):
    name = name or f"{role}-{uuid.uuid4().hex[:8]}"
    result = subprocess.run([str(IAPCTL), "staff", "add", name, "--role", role, "--password-stdin"], cwd=REPO,
                            input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"{name}\t{role}"
    return name


@pytest.fixture(scope="module", autouse=True)
def fresh_login_failures(db):
    """Failed logins of earlier runs from 127.0.0.1 would count against this one's (per address)."""
    db.execute("DELETE FROM staff_login_failures")


@pytest.fixture(scope="module")
def browser_factory():
    made = []

    def make():
        driver = support.headless_chromium()
        made.append(driver)
        return driver

    yield make
    for driver in made:
        driver.quit()


def click(driver, by, selector):
    """Clicks what submits a form or follows a link, and waits until the next page replaced this one
    (a click returns before the navigation it starts)."""
    driver.execute_script("window.consoleTestBeforeClick = true")   # a new page has a new window object
    driver.find_element(by, selector).click()
    WebDriverWait(driver, 60).until(lambda _: driver.execute_script(
        "return window.consoleTestBeforeClick === undefined && document.readyState === 'complete'"))


def login(driver, name, password=PASSWORD):
    driver.get(console_url() + "/console/login")
    driver.find_element(By.ID, "name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(password)
    click(driver, By.ID, "login")


def notice(driver):
    found = driver.find_elements(By.ID, "notice")
    return found[0].text if found else ""


def search(driver, kind, text):
    driver.get(console_url() + "/console/")
    Select(driver.find_element(By.ID, "kind")).select_by_value(kind)
    driver.find_element(By.ID, "q").send_keys(text)
    click(driver, By.ID, "search")


def table_text(driver, table_id):
    return driver.find_element(By.ID, table_id).text


def ca_file():
    """The stack's test CA, which signed the console server's certificate."""
    return os.environ["IAP_CA_FILE"]


def session_client(name):
    """A requests session logged in as `name`: (session, its CSRF token)."""
    client = requests.Session()
    client.verify = ca_file()
    client.trust_env = False   # REQUESTS_CA_BUNDLE would win over verify
    page = client.get(console_url() + "/console/login", timeout=30)
    token = page.text.split('name="csrf" value="')[1].split('"')[0]
    answer = client.post(console_url() + "/console/login", timeout=60, allow_redirects=False,
                         data={"csrf": token, "name": name, "password": PASSWORD})
    assert answer.status_code == 303, answer.text[:500]
    home = client.get(console_url() + "/console/", timeout=30)
    return client, home.text.split('name="csrf" value="')[1].split('"')[0]


def delivered_purchase(api, receipts, user_id):
    transaction_id = new_transaction_id()
    answer = api.verify(receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=transaction_id)]),
                        user_id=user_id).json()
    assert answer["status"] == "delivered", answer
    return transaction_id


def test_support_case_end_to_end(browser_factory, api, db, receipts, simulator):
    """Log in, search each way, read a purchase and a refund, redeliver an event, send a refund
    request's answer, deliver what Apple's lookup shows and the database lacks, see the audit rows."""
    support = add_staff("support")
    user_id = new_user_id()
    kept = delivered_purchase(api, receipts, user_id)
    refunded = delivered_purchase(api, receipts, user_id)
    now_ms = int(time.time() * 1000)
    answer = api.verify(receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=refunded,
                                                                cancellation_ms=now_ms)]), user_id=user_id).json()
    assert db.transaction(refunded)["state"] == "refunded", answer
    order_id = db.transaction(kept)["order_id"]
    original_id = db.transaction(kept)["original_transaction_id"]
    event_id = db.scalar("SELECT event_id FROM events WHERE transaction_id = %s AND type = 'delivered'", kept)
    # The webhook gave up on it (72 hours without a 2xx): the state staff redeliver from.
    db.execute("UPDATE events SET status = 'failed', attempts = 40, last_error = 'HTTP 500' WHERE event_id = %s",
               event_id)
    db.execute(
        "INSERT INTO consumption_requests (transaction_id, original_transaction_id, notification_uuid, environment,"
        " user_id, product_id, reason, requested_at, deadline_at, status, attempts, last_error, created_at)"
        " VALUES (%s, %s, %s, 'Production', %s, %s, 'UNINTENDED_PURCHASE', UTC_TIMESTAMP(3),"
        " UTC_TIMESTAMP(3) + INTERVAL 11 HOUR, 'failed', 3, 'HTTP 500', UTC_TIMESTAMP(3))",
        kept, original_id, str(uuid.uuid4()), user_id, PAY_6)
    request_id = db.scalar("SELECT MAX(request_id) FROM consumption_requests WHERE user_id = %s", user_id)

    driver = browser_factory()
    login(driver, support)
    assert driver.current_url.endswith("/console/"), driver.current_url
    assert support in driver.find_element(By.ID, "who").text

    for kind, text in [("user", user_id), ("order", order_id), ("transaction", kept), ("original", original_id)]:
        search(driver, kind, text)
        assert driver.find_element(By.ID, "user-id").text == user_id, (kind, notice(driver))
    transactions = table_text(driver, "transactions")
    assert kept in transactions and refunded in transactions
    assert "Paid and delivered" in transactions and "Refunded by Apple" in transactions
    assert "failed" in table_text(driver, "events")
    assert "UNINTENDED_PURCHASE" in table_text(driver, "refund-requests")
    driver.save_screenshot(str(screenshots_dir() / "player.png"))

    # Redeliver the failed event: a confirmation page, then the action.
    click(driver, By.CSS_SELECTOR, "#events button.redeliver")
    assert "again" in driver.find_element(By.ID, "question").text
    assert db.scalar("SELECT status FROM events WHERE event_id = %s", event_id) == "failed", "not before confirming"
    click(driver, By.ID, "confirm")
    assert f"event {event_id} pending" in driver.find_element(By.ID, "result").text
    row = db.one("SELECT status, attempts, redelivered_at FROM events WHERE event_id = %s", event_id)
    assert row["status"] == "pending" and row["attempts"] == 0 and row["redelivered_at"] is not None, row

    # Send the refund request's answer now.
    click(driver, By.ID, "back")
    click(driver, By.XPATH, "//table[@id='refund-requests']//button")
    click(driver, By.ID, "confirm")
    assert f"refund request {request_id}: queued" in driver.find_element(By.ID, "result").text
    # Queued: pending and due now, or already taken by the stack's refund-request sender, which takes only
    # pending rows and closes a request of a user without consent as no_consent (it never takes a failed one).
    row = db.one("SELECT status, next_attempt_at FROM consumption_requests WHERE request_id = %s", request_id)
    assert (row["status"] == "pending" and row["next_attempt_at"] is not None) or row["status"] == "no_consent", row

    # A purchase Apple knows and this database lacks, found by the customer's Apple order id.
    missing = register_transaction(simulator)
    register_transaction(simulator, transaction_id=kept)
    apple_order = register_order(simulator, [missing["transaction_id"], kept])
    assert db.transaction(missing["transaction_id"]) is None
    search(driver, "apple_order", apple_order)
    lookup = table_text(driver, "lookup")
    assert missing["transaction_id"] in lookup and "not here" in lookup and "delivered" in lookup, lookup
    assert driver.find_element(By.ID, "deliver-user").get_attribute("value") == user_id, "the known owner"
    driver.save_screenshot(str(screenshots_dir() / "lookup.png"))
    click(driver, By.ID, "deliver")
    assert driver.find_element(By.ID, "confirm-target").text == apple_order
    click(driver, By.ID, "confirm")
    result = driver.find_element(By.ID, "result").text
    assert f"{missing['transaction_id']} delivered" in result and f"{kept} already_delivered" in result, result
    stored = db.transaction(missing["transaction_id"])
    assert stored["state"] == "delivered" and stored["user_id"] == user_id, stored
    assert db.scalar("SELECT client_ip FROM receipts WHERE receipt_id = %s", stored["receipt_id"]) == "console"

    # Every action is on the player's page, by whom and from where (the delivery: a row per transaction).
    click(driver, By.ID, "back")
    audit = table_text(driver, "staff-audit")
    for action in ("deliver_lookup", "redeliver_event", "send_refund_answer"):
        assert action in audit, audit
    assert audit.count(support) == 4, audit
    rows = db.query("SELECT staff_name, action, client_ip FROM staff_audit WHERE user_id = %s", user_id)
    assert {(r["staff_name"], r["client_ip"]) for r in rows} == {(support, "127.0.0.1")}, rows
    driver.save_screenshot(str(screenshots_dir() / "player-after.png"))

    driver.get(console_url() + "/console/reports")
    assert len(driver.find_elements(By.CSS_SELECTOR, "svg.chart")) == 6
    assert "Production deliveries per day" in driver.page_source
    driver.save_screenshot(str(screenshots_dir() / "reports.png"))
    print(f"console screenshots: {screenshots_dir()}")


def test_a_viewer_reads_but_cannot_act(browser_factory, api, db, receipts):
    viewer = add_staff("viewer")
    user_id = new_user_id()
    transaction_id = delivered_purchase(api, receipts, user_id)
    event_id = db.scalar("SELECT event_id FROM events WHERE transaction_id = %s", transaction_id)
    db.execute("UPDATE events SET status = 'failed' WHERE event_id = %s", event_id)
    driver = browser_factory()
    login(driver, viewer)
    search(driver, "transaction", transaction_id)
    assert driver.find_element(By.ID, "user-id").text == user_id
    assert driver.find_elements(By.CSS_SELECTOR, "#events button") == [], "no action for a viewer"

    client, csrf = session_client(viewer)
    for path in ("/console/confirm", "/console/act"):
        answer = client.post(console_url() + path, timeout=30, data={
            "csrf": csrf, "action": "redeliver_event", "user": user_id, "target": str(event_id)})
        assert answer.status_code == 403 and "may not do this" in answer.text, (path, answer.status_code)
    assert db.scalar("SELECT status FROM events WHERE event_id = %s", event_id) == "failed"
    assert db.scalar("SELECT COUNT(*) FROM staff_audit WHERE user_id = %s", user_id) == 0
    assert client.get(console_url() + "/console/settings", timeout=30).status_code == 403


def test_wrong_passwords_lock_the_name_out(browser_factory):
    name = add_staff("support")
    driver = browser_factory()
    for _ in range(5):
        login(driver, name, password="wrong password!")
        assert notice(driver) == "Wrong name or password."
    login(driver, name)  # the right one, now refused
    assert "Too many failed logins" in notice(driver)
    assert "/console/login" in driver.current_url or driver.find_elements(By.ID, "login")


def test_a_session_ends_at_logout_when_idle_or_old(browser_factory, db):
    name = add_staff("viewer")
    driver = browser_factory()
    login(driver, name)
    staff_id = db.scalar("SELECT staff_id FROM staff WHERE name = %s", name)
    click(driver, By.CSS_SELECTOR, "form.logout button")
    assert driver.current_url.endswith("/console/login"), driver.current_url
    assert db.scalar("SELECT COUNT(*) FROM staff_sessions WHERE staff_id = %s", staff_id) == 0, "logged out"
    login(driver, name)
    driver.get(console_url() + "/console/reports")
    assert driver.find_elements(By.CSS_SELECTOR, "svg.chart")
    # 31 minutes without a request (the idle timeout is 30).
    db.execute("UPDATE staff_sessions SET last_seen_at = last_seen_at - INTERVAL 31 MINUTE WHERE staff_id = %s",
               staff_id)
    driver.get(console_url() + "/console/reports")
    assert driver.current_url.endswith("/console/login"), driver.current_url
    assert db.scalar("SELECT COUNT(*) FROM staff_sessions WHERE staff_id = %s", staff_id) == 0

    login(driver, name)
    driver.get(console_url() + "/console/reports")
    assert driver.find_elements(By.CSS_SELECTOR, "svg.chart")
    # Used a moment ago, but logged in 12 hours ago (the absolute limit).
    db.execute("UPDATE staff_sessions SET created_at = created_at - INTERVAL 12 HOUR WHERE staff_id = %s", staff_id)
    driver.get(console_url() + "/console/reports")
    assert driver.current_url.endswith("/console/login"), driver.current_url


def test_data_holding_script_and_quotes_renders_as_text(browser_factory, api, db, receipts):
    """Stored XSS through what a client (user id) or Apple (product id, notification fields) sent."""
    viewer = add_staff("viewer")
    user_id = f"e2e-{uuid.uuid4().hex[:8]}{XSS}"
    transaction_id = delivered_purchase(api, receipts, user_id)
    db.execute("UPDATE transactions SET product_id = %s WHERE transaction_id = %s", XSS, transaction_id)
    db.execute(
        "INSERT INTO notifications (notification_uuid, notification_type, subtype, environment, transaction_id,"
        " signed_date, signed_payload, received_at, source, applied, effect)"
        " VALUES (%s, 'REFUND', %s, 'Production', %s, UTC_TIMESTAMP(3), 'x', UTC_TIMESTAMP(3), 'post', 0, 'stored')",
        str(uuid.uuid4()), XSS[:64], transaction_id)
    driver = browser_factory()
    login(driver, viewer)
    search(driver, "user", user_id)
    assert driver.find_element(By.ID, "user-id").text == user_id
    assert driver.find_element(By.CSS_SELECTOR, "#transactions td.product").text == XSS
    assert driver.find_element(By.CSS_SELECTOR, "#notifications td.subtype").text == XSS[:64]
    assert driver.execute_script("return window.__xss === undefined"), "a script ran"
    assert "<script>window.__xss" not in driver.page_source.replace("&lt;script&gt;", "")
    driver.save_screenshot(str(screenshots_dir() / "escaped.png"))


def test_a_form_without_or_with_another_sessions_csrf_token_is_refused(api, db, receipts):
    support = add_staff("support")
    user_id = new_user_id()
    transaction_id = delivered_purchase(api, receipts, user_id)
    event_id = db.scalar("SELECT event_id FROM events WHERE transaction_id = %s", transaction_id)
    db.execute("UPDATE events SET status = 'failed' WHERE event_id = %s", event_id)
    first, _ = session_client(support)
    _, second_csrf = session_client(support)
    form = {"action": "redeliver_event", "user": user_id, "target": str(event_id)}
    for data in (form, dict(form, csrf=second_csrf), dict(form, csrf="")):
        answer = first.post(console_url() + "/console/act", data=data, timeout=30)
        assert answer.status_code == 403 and "CSRF token refused" in answer.text, answer.status_code
    assert db.scalar("SELECT status FROM events WHERE event_id = %s", event_id) == "failed"
    assert db.scalar("SELECT COUNT(*) FROM staff_audit WHERE user_id = %s", user_id) == 0
    # The login form has its own token, in a cookie of the browser that loaded it.
    answer = requests.post(console_url() + "/console/login", verify=ca_file(), timeout=30,
                           data={"csrf": "0" * 64, "name": support, "password": PASSWORD}, allow_redirects=False)
    assert answer.status_code == 403 and "set-cookie" in answer.headers
    assert "iap_console=" not in answer.headers["set-cookie"].replace("iap_console_login=", "")


def test_the_console_is_not_on_the_public_listener(base_url, run_dir):
    assert requests.get(base_url + "/console/login", timeout=10).status_code == 404
    public = fastcgi_client.request_once(str(run_dir / "iap-fcgi.sock"), "GET", "/console/login")
    assert public.status == 404, public
    console = fastcgi_client.request_once(os.environ["IAP_CONSOLE_SOCKET"], "GET", "/console/login")
    assert console.status == 200 and b"<form" in console.body, console


def test_every_answer_forbids_framing_caching_and_foreign_content():
    client = requests.Session()
    client.verify = ca_file()
    client.trust_env = False   # REQUESTS_CA_BUNDLE would win over verify
    for path, status in [("/console/login", 200), ("/console/player?user=x", 303), ("/console/nothing", 404),
                         ("/console/style.css", 200)]:
        answer = client.get(console_url() + path, timeout=30, allow_redirects=False)
        assert answer.status_code == status, (path, answer.status_code)
        assert answer.headers["X-Frame-Options"] == "DENY"
        csp = answer.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "default-src 'none'" in csp and "script-src" not in csp
        assert answer.headers["Cache-Control"] == "no-store"
    cookie = client.get(console_url() + "/console/login", timeout=30).headers["Set-Cookie"]
    assert cookie.startswith("__Host-iap_console_login="), cookie
    for attribute in ("Path=/;", "HttpOnly", "Secure", "SameSite=Strict"):
        assert attribute in cookie, cookie


def test_an_admin_sets_the_review_switch_and_manages_staff(browser_factory, db):
    admin = add_staff("admin")
    driver = browser_factory()
    login(driver, admin)
    driver.get(console_url() + "/console/settings")
    driver.find_element(By.ID, "review-value").clear()
    driver.find_element(By.ID, "review-value").send_keys("9.9.1")
    click(driver, By.ID, "set-review")
    assert db.setting("review_version") == "", "not before confirming"
    click(driver, By.ID, "confirm")
    assert driver.find_element(By.ID, "result").text == "review version set to 9.9.1"
    assert db.setting("review_version") == "9.9.1"
    driver.get(console_url() + "/console/settings")
    driver.find_element(By.ID, "review-value").clear()   # empty: no version in review
    click(driver, By.ID, "set-review")
    click(driver, By.ID, "confirm")
    assert db.setting("review_version") == ""
    tester = f"tester-{uuid.uuid4().hex[:8]}"
    for users in (tester, ""):   # set, then back to none
        driver.get(console_url() + "/console/settings")
        driver.find_element(By.ID, "sandbox-value").clear()
        driver.find_element(By.ID, "sandbox-value").send_keys(users)
        click(driver, By.ID, "set-sandbox")
        click(driver, By.ID, "confirm")
        assert db.setting("sandbox_users") == users

    newcomer = f"new-{uuid.uuid4().hex[:8]}"
    driver.get(console_url() + "/console/staff")
    driver.find_element(By.ID, "new-name").send_keys(newcomer)
    Select(driver.find_element(By.ID, "new-role")).select_by_value("support")
    click(driver, By.ID, "add-staff")
    driver.find_element(By.ID, "confirm-password").send_keys(PASSWORD)
    click(driver, By.ID, "confirm")
    assert driver.find_element(By.ID, "result").text == f"staff {newcomer} added as support"
    newcomer_session, _ = session_client(newcomer)   # the new account logs in
    driver.get(console_url() + "/console/staff")
    click(driver, By.XPATH, f"//table[@id='staff']//tr[td[1]='{newcomer}']//button")
    click(driver, By.ID, "confirm")
    assert driver.find_element(By.ID, "result").text == f"staff {newcomer} disabled"
    answer = newcomer_session.get(console_url() + "/console/", timeout=30, allow_redirects=False)
    assert answer.status_code == 303, "a disabled account's session ends at once"
    rows = db.query("SELECT action, target, result FROM staff_audit WHERE staff_name = %s ORDER BY audit_id", admin)
    assert [row["action"] for row in rows] == ["login", "review_version", "review_version", "sandbox_users",
                                              "sandbox_users", "staff_add", "staff_disable"], rows


def test_iapctl_staff_passwd_and_disable(db):
    name = add_staff("viewer")
    first, _ = session_client(name)
    result = subprocess.run([str(IAPCTL), "staff", "passwd", name, "--password-stdin"], cwd=REPO,
                            input="another long password\n", capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert first.get(console_url() + "/console/", timeout=30, allow_redirects=False).status_code == 303
    result = subprocess.run([str(IAPCTL), "staff", "add", name, "--role", "viewer", "--password-stdin"], cwd=REPO,
                            input=PASSWORD + "\n", capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "exists" in result.stderr
    result = subprocess.run([str(IAPCTL), "staff", "add", "short-" + name, "--role", "viewer", "--password-stdin"],
                            cwd=REPO, input="short\n", capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "at least 12" in result.stderr
    result = subprocess.run([str(IAPCTL), "staff", "disable", name], cwd=REPO, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    listed = subprocess.run([str(IAPCTL), "staff", "list"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert f"{name}\tviewer\tdisabled" in listed.stdout.splitlines()
    hashes = db.scalar("SELECT password_hash FROM staff WHERE name = %s", name)
    assert hashes.startswith("scrypt$17$8$1$") and "another" not in hashes


def test_reports_show_the_report_views_figures(browser_factory, api, db, receipts):
    viewer = add_staff("viewer")
    delivered_purchase(api, receipts, new_user_id())
    row = db.one("SELECT day, product_id, currency, deliveries FROM report_daily_revenue"
                 " WHERE day = UTC_DATE() AND store = 'app_store' AND product_id = %s", PAY_6)
    driver = browser_factory()
    login(driver, viewer)
    driver.get(console_url() + "/console/reports")
    bar = f"{row['day']} App Store {row['product_id']} {row['currency']}: {row['deliveries']}</title>"
    assert bar in driver.page_source, "the deliveries chart's bar of today is the view's figure"

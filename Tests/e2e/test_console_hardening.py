"""The support console, hardened: failed logins lock a name from one address only and slow it elsewhere
(`iapctl staff unlock` ends both), a login takes as long for a name that is no account, every change and
every login is in staff_audit with the player the database names, written in the transaction of the change,
and password hashes cost N = 2^17 (the cookies' `__Host-` prefix: test_console.py).

Logins go straight to the console's FastCGI socket ($IAP_CONSOLE_SOCKET), as nginx would send them, so
that each can come from an address of its own (REMOTE_ADDR); actions go through nginx's TLS server."""
import hashlib
import os
import statistics
import subprocess
import time
import urllib.parse
import uuid

import requests

import fastcgi_client
from conftest import IAPCTL, REPO
from support import new_user_id
from test_console import PASSWORD, add_staff, console_url, delivered_purchase, session_client
from test_server_api import register_order, register_transaction

LOGIN_TOKEN = "5" * 64   # the login form's CSRF token: the same in the cookie and the form


def new_address():
    """An address of its own for each test, so that no test's failures count against another's."""
    number = uuid.uuid4().int
    return f"10.{number % 250}.{number // 250 % 250}.{number // 62500 % 250 + 1}"


def console_login(name, password, address):
    """A login form posted from `address`: the FastCGI answer (303: logged in)."""
    body = urllib.parse.urlencode({"csrf": LOGIN_TOKEN, "name": name, "password": password}).encode()
    params = {
        "REQUEST_METHOD": "POST", "REQUEST_URI": "/console/login", "DOCUMENT_URI": "/console/login",
        "QUERY_STRING": "", "CONTENT_TYPE": "application/x-www-form-urlencoded", "CONTENT_LENGTH": str(len(body)),
        "REMOTE_ADDR": address, "HTTP_COOKIE": f"__Host-iap_console_login={LOGIN_TOKEN}",
    }
    records = fastcgi_client.record(fastcgi_client.BEGIN_REQUEST, bytes([0, fastcgi_client.RESPONDER, 0, 0, 0, 0, 0, 0]))
    records += fastcgi_client.record(fastcgi_client.PARAMS, fastcgi_client.name_value_pairs(params))
    records += fastcgi_client.record(fastcgi_client.PARAMS) + fastcgi_client.record(fastcgi_client.STDIN, body)
    records += fastcgi_client.record(fastcgi_client.STDIN)
    connection = fastcgi_client.Connection(os.environ["IAP_CONSOLE_SOCKET"])
    connection.socket.settimeout(60)
    try:
        connection.socket.sendall(records)
        answer = connection.receive()
    finally:
        connection.close()
    assert answer is not None, "the console closed the connection"
    return answer


def notice_of(answer):
    return answer.body.decode().split('id="notice"')[1].split(">", 1)[1].split("<")[0] if b'id="notice"' in answer.body else ""


def logs_in_within(name, address, seconds=15):
    """Tries the right password from `address` until it is let in (a slowed name waits its delay);
    returns the refusals seen before."""
    refusals = []
    deadline = time.monotonic() + seconds
    while True:
        answer = console_login(name, PASSWORD, address)
        if answer.status == 303:
            return refusals
        assert answer.status == 429 and "try again in" in notice_of(answer), (answer, refusals)
        refusals.append(notice_of(answer))
        assert time.monotonic() < deadline, refusals
        time.sleep(0.2)


def iapctl(*arguments, stdin=None):
    return subprocess.run([str(IAPCTL), *arguments], cwd=REPO, input=stdin, capture_output=True, text=True,
                          timeout=60)


def audit_rows(db, **where):
    condition = " AND ".join(f"{column} = %s" for column in where)
    return db.query("SELECT staff_name, action, user_id, target, client_ip, result FROM staff_audit"
                    f" WHERE {condition} ORDER BY audit_id", *where.values())


def test_wrong_passwords_from_one_address_lock_that_address_only(db):
    name = add_staff("admin")
    guesser, owner = new_address(), new_address()
    for _ in range(5):
        answer = console_login(name, "wrong password!", guesser)
        assert answer.status == 403 and notice_of(answer) == "Wrong name or password.", answer
    locked = console_login(name, PASSWORD, guesser)
    assert locked.status == 429 and "from this address" in notice_of(locked), locked
    # The admin, from elsewhere: slowed (a second after the newest failure), not locked out.
    refusals = logs_in_within(name, owner)
    assert len(refusals) <= 10, refusals
    assert console_login(name, PASSWORD, guesser).status == 429, "the guesser's address stays locked"


def test_many_names_failing_behind_one_address_slow_it_but_lock_no_one(db):
    """Twenty failed logins behind one NAT or VPN address used to lock every login from it."""
    shared = new_address()
    colleague = add_staff("viewer")
    for _ in range(19):   # as the console writes them, without 19 scrypt runs
        db.execute("INSERT INTO staff_login_failures (name, client_ip, failed_at) VALUES (%s, %s, UTC_TIMESTAMP(3))",
                   f"nobody-{uuid.uuid4().hex[:8]}", shared)
    assert console_login(f"nobody-{uuid.uuid4().hex[:8]}", "wrong password!", shared).status == 403
    logs_in_within(colleague, shared)


def test_iapctl_staff_unlock_ends_the_lock_and_is_audited(db):
    name = add_staff("support")
    address = new_address()
    for _ in range(5):
        assert console_login(name, "wrong password!", address).status == 403
    assert console_login(name, PASSWORD, address).status == 429
    result = iapctl("staff", "unlock", name)
    assert result.returncode == 0 and result.stdout == f"{name}\tunlocked\n", result
    assert console_login(name, PASSWORD, address).status == 303, "unlocked, and no longer slowed"
    assert db.scalar("SELECT COUNT(*) FROM staff_login_failures WHERE name = %s", name) == 0

    rows = audit_rows(db, target=name)
    assert [(row["staff_name"], row["action"]) for row in rows] == (
        [("iapctl", "staff_add")] + [(name, "login_failed")] * 5 + [("iapctl", "staff_unlock"), (name, "login")]), rows
    assert rows[6]["result"] == f"staff {name} unlocked (5 failed logins forgotten)" and rows[6]["client_ip"] is None
    assert {row["client_ip"] for row in rows[1:6]} | {rows[7]["client_ip"]} == {address}
    missing = iapctl("staff", "unlock", f"nobody-{uuid.uuid4().hex[:8]}")
    assert missing.returncode != 0 and "no staff account" in missing.stderr


def test_iapctl_staff_passwd_and_disable_are_audited(db):
    name = add_staff("viewer")
    assert iapctl("staff", "passwd", name, "--password-stdin", stdin="another long password\n").returncode == 0
    assert iapctl("staff", "disable", name).returncode == 0
    rows = audit_rows(db, target=name, staff_name="iapctl")
    assert [(row["action"], row["result"]) for row in rows] == [
        ("staff_add", f"staff {name} added as viewer"), ("staff_passwd", f"staff {name} password set"),
        ("staff_disable", f"staff {name} disabled")], rows


def test_a_login_for_no_account_takes_as_long_as_for_a_real_one(db, iap_fcgi_pid):
    """scrypt runs for a name that is no account (and for a disabled one): the time does not tell."""
    real = add_staff("viewer")
    disabled = add_staff("viewer")
    assert iapctl("staff", "disable", disabled).returncode == 0

    def timed(name, password="wrong password!"):
        pid = iap_fcgi_pid()
        cpu, started = fastcgi_client.cpu_seconds(pid), time.monotonic()
        answer = console_login(name, password, new_address())
        assert answer.status == 403, answer
        return time.monotonic() - started, fastcgi_client.cpu_seconds(pid) - cpu

    real_runs = [timed(real) for _ in range(3)]
    unknown_runs = [timed(f"nobody-{uuid.uuid4().hex[:8]}") for _ in range(3)]
    disabled_runs = [timed(disabled, PASSWORD) for _ in range(3)]
    real_s, unknown_s, disabled_s = (statistics.median(run[0] for run in runs)
                                     for runs in (real_runs, unknown_runs, disabled_runs))
    print(f"login wall time, median of 3: real name {real_s * 1000:.0f} ms, no account {unknown_s * 1000:.0f} ms,"
          f" disabled {disabled_s * 1000:.0f} ms; iap-fcgi CPU per login (real name):"
          f" {statistics.median(run[1] for run in real_runs) * 1000:.0f} ms")
    assert real_s / 3 <= unknown_s <= real_s * 3, (real_s, unknown_s)
    assert real_s / 3 <= disabled_s <= real_s * 3, (real_s, disabled_s)


def test_new_hashes_cost_2_17_and_old_ones_still_log_in_and_are_made_again(db):
    name = add_staff("viewer")
    assert db.scalar("SELECT password_hash FROM staff WHERE name = %s", name).startswith("scrypt$17$8$1$")
    # A hash of the first console's cost (N = 2^15), as iap-fcgi stored it.
    older = f"older-{uuid.uuid4().hex[:8]}"
    salt = os.urandom(16)
    derived = hashlib.scrypt(PASSWORD.encode(), salt=salt, n=2 ** 15, r=8, p=1, maxmem=64 << 20, dklen=32)
    db.execute("INSERT INTO staff (name, role, password_hash, created_at, password_changed_at)"
               " VALUES (%s, 'viewer', %s, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))",
               older, f"scrypt$15$8$1${salt.hex()}${derived.hex()}")
    assert console_login(older, PASSWORD, new_address()).status == 303
    upgraded = db.scalar("SELECT password_hash FROM staff WHERE name = %s", older)
    assert upgraded.startswith("scrypt$17$8$1$"), upgraded
    assert console_login(older, PASSWORD, new_address()).status == 303, "the new hash verifies"


def act(client, csrf, **form):
    answer = client.post(console_url() + "/console/act", timeout=120, data=dict(form, csrf=csrf))
    assert answer.status_code == 200, answer.text[:500]
    return answer.text.split('id="result"')[1].split(">", 1)[1].split("<")[0]


def test_a_deliver_that_fails_part_way_leaves_every_delivery_with_its_audit_row(api, db, simulator):
    """The second transaction's audit row in `receipts` fails (a trigger): the first one, delivered and
    committed, has its staff_audit row all the same."""
    support = add_staff("support")
    user_id = new_user_id()
    first = register_transaction(simulator)["transaction_id"]
    second = register_transaction(simulator)["transaction_id"]
    apple_order = register_order(simulator, [first, second])
    trigger = f"fail_{uuid.uuid4().hex[:8]}"
    db.execute(f"CREATE TRIGGER {trigger} BEFORE INSERT ON receipts FOR EACH ROW"
               f" IF NEW.transaction_id = '{second}' THEN"
               " SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'test: the database fails part-way'; END IF")
    try:
        client, csrf = session_client(support)
        result = act(client, csrf, action="deliver_lookup", user=user_id, target=apple_order)
    finally:
        db.execute(f"DROP TRIGGER {trigger}")
    assert f"{first} delivered" in result and f"{second} not delivered" in result, result
    assert db.transaction(first)["state"] == "delivered" and db.transaction(second) is None
    rows = audit_rows(db, target=apple_order)
    assert [(row["user_id"], row["result"]) for row in rows if row["result"].startswith(first)] == [
        (user_id, f"{first} delivered")], rows
    assert all(row["staff_name"] == support and row["action"] == "deliver_lookup" for row in rows), rows


def test_the_audit_names_the_player_whose_rows_changed_not_the_forms(api, db, receipts, simulator):
    support = add_staff("support")
    owner, other = new_user_id(), new_user_id()
    kept = delivered_purchase(api, receipts, owner)
    event_id = db.scalar("SELECT event_id FROM events WHERE transaction_id = %s AND type = 'delivered'", kept)
    db.execute("UPDATE events SET status = 'failed' WHERE event_id = %s", event_id)
    client, csrf = session_client(support)

    result = act(client, csrf, action="redeliver_event", user=other, target=str(event_id))
    assert result == f"event {event_id} pending: the webhook sends it again"
    register_transaction(simulator, transaction_id=kept)
    apple_order = register_order(simulator, [kept])
    assert act(client, csrf, action="deliver_lookup", user=other, target=apple_order) == f"{kept} already_delivered"

    assert [row["action"] for row in audit_rows(db, user_id=owner)] == ["redeliver_event", "deliver_lookup"]
    assert audit_rows(db, user_id=other) == []


def test_logins_and_logouts_are_audited(db):
    name = add_staff("viewer")
    client, csrf = session_client(name)
    answer = client.post(console_url() + "/console/logout", data={"csrf": csrf}, timeout=30, allow_redirects=False)
    assert answer.status_code == 303
    rows = audit_rows(db, staff_name=name)
    assert [(row["action"], row["target"], row["client_ip"]) for row in rows] == [
        ("login", name, "127.0.0.1"), ("logout", name, "127.0.0.1")], rows



def test_an_apple_that_does_not_answer_ends_the_order_lookup(simulator):
    """Look Up Order ID on the console's thread ends at the deadline a verification has (3 x
    IAP_APPLE_TIMEOUT_MS + 10 s) at the latest, with the page saying Apple's lookup failed."""
    viewer = add_staff("viewer")
    apple_order = register_order(simulator, [register_transaction(simulator)["transaction_id"]])
    simulator.control(latency_ms=120_000)
    client, _ = session_client(viewer)
    started = time.monotonic()
    page = client.get(console_url() + f"/console/lookup?order={apple_order}", timeout=120)
    took = time.monotonic() - started
    assert page.status_code == 200 and "lookup failed (unavailable)" in page.text, page.text[:800]
    assert took < 3 * int(os.environ.get("IAP_APPLE_TIMEOUT_MS", "15000")) / 1000 + 11, took

"""docs/iapctl.md `iapctl google lookup TOKEN`: what the Google Play double says of a purchase beside what
the database holds of it, the token itself never printed (its SHA-256 stands for it)."""
import hashlib
import os
import subprocess

from support import PAY_6, assert_verify_answer, new_user_id
from test_google_purchases import purchase, verify

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IAPCTL = os.path.join(REPO, ".build", "release", "iapctl")


def lookup(*arguments):
    result = subprocess.run([IAPCTL, "google", "lookup", *arguments], cwd=REPO, env=os.environ,
                            capture_output=True, text=True, timeout=60)
    return result.returncode, result.stdout, result.stderr


def fields(output):
    """The `name: value` lines, the repeated ones (notifications) as lists."""
    lines = {}
    for line in output.splitlines():
        name, _, value = line.partition(": ")
        lines.setdefault(name, []).append(value)
    return lines


def test_lookup_shows_google_and_the_ledger_and_never_the_token(api, db, google):
    bought = purchase(google, quantity=2)
    token = bought["purchase_token"]
    user = new_user_id()
    body = assert_verify_answer(verify(api, token, user), "delivered")
    status, output, errors = lookup(token)
    assert status == 0, errors
    assert token not in output + errors
    shown = fields(output)
    assert shown["token_sha256"] == [hashlib.sha256(token.encode()).hexdigest()]
    assert shown["google_state"] == ["PURCHASED"] and shown["google_order_id"] == [bought["order_id"]], output
    assert shown["google_products"] == [f"{PAY_6} x2"], output
    assert shown["here_transaction_id"] == [bought["order_id"]], output
    assert shown["here_state"] == ["delivered"] and shown["here_user_id"] == [user], output
    assert shown["here_order_id"] == [body["order_id"]] and shown["here_quantity"] == ["2"], output
    assert shown["here_verify_requests"][0].startswith("1 "), output


def test_lookup_of_a_token_google_does_not_know_shows_nothing_stored(api, db, google):
    status, output, errors = lookup("never-issued-" + new_user_id())
    assert status == 0, errors
    shown = fields(output)
    assert shown["google"] == ["unknown token in com.example.game"], output
    assert shown["here_transaction"] == ["none"], output
    assert shown["here_verify_requests"][0].startswith("0 "), output

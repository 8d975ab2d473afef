"""Apple's Server API quota is the shop's, and nobody else may spend it (docs/design/signed-data.md, "The look-up budget").

Under IAP_RECEIPT_VERIFIER=server-api a receipt's entries are confirmed with Get Transaction Info only
when the delivery could admit the receipt (a configured bundle id, and not a sandbox receipt under
IAP_SANDBOX_POLICY=never), only in the receipt's own environment, and each entry takes one look-up of
IAP_APPSTORE_LOOKUPS_PER_MINUTE, the budget bare `transaction_id` verifies use too.

A bare `transaction_id` takes a look-up only when its user has an open order (or the transaction is
stored for it here): otherwise 403 proof_required, Apple not asked. One user and one client address get a
share of the minute's look-ups (a tenth and a half); past it `retry_later` with Retry-After, while other
players' look-ups still go through. Each test runs an iap-fcgi of its own (a small budget, a fresh minute)
on the stack's database and simulator, which counts every Server API call it answers."""
import json

import pytest

from fastcgi_client import request_once
from support import PAY_6, new_transaction_id, new_user_id
from test_receipt_modes import OTHER_BUNDLE_ID, OwnVerifier, bought, states
from test_server_api import register_transaction
from test_transaction_id_verify import calls, own_service_environment

ROUTE = "/v1/transactions/verify"


@pytest.fixture
def server_api(tmp_path):
    """server_api(**variables): an iap-fcgi of the test's own with IAP_RECEIPT_VERIFIER=server-api."""
    started = []

    def start(**overrides):
        directory = tmp_path / f"service-{len(started)}"
        directory.mkdir()
        started.append(OwnVerifier(directory, "server-api", **own_service_environment(**overrides)))
        return started[-1]
    yield start
    for service in started:
        service.stop()


def verify_by_id(service, transaction_id, address="192.0.2.1", **fields):
    """POST /v1/transactions/verify {"transaction_id", ...} to `service` from a client at `address`."""
    body = json.dumps({"transaction_id": transaction_id, **fields}).encode()
    return request_once(service.socket_path, "POST", ROUTE, body=body, remote_addr=address)


def status_of(answer):
    """(HTTP status, the verify status or the error code) of an answer."""
    body = answer.json()
    return answer.status, body.get("status") or body["error"]["code"]


def player_with_a_purchase(api, simulator, environments=("Production",)):
    """A user with an open order and a transaction Apple knows whose token names it: (user, transaction id)."""
    user = new_user_id()
    order = api.create_order(user, PAY_6)
    registered = register_transaction(simulator, app_account_token=order["order_id"], environments=environments)
    return user, registered["transaction_id"]


# --- server-api receipts: nothing asked of Apple that the delivery would refuse ----------------------

def test_another_apps_receipt_and_a_sandbox_receipt_under_never_cost_no_server_api_call(
        server_api, simulator, db, receipts):
    service = server_api(IAP_SANDBOX_POLICY="never")

    foreign = bought(receipts, PAY_6, PAY_6)
    answer = service.verify(receipts.app_receipt(foreign, bundle_id=OTHER_BUNDLE_ID), user_id=new_user_id())
    assert (answer.status, answer.body["status"]) == (200, "rejected"), answer.body

    sandbox = bought(receipts, PAY_6, PAY_6)
    for purchase in sandbox:
        register_transaction(simulator, transaction_id=purchase["transaction_id"], environments=("Sandbox",))
    answer = service.verify(receipts.app_receipt(sandbox, environment="Sandbox"), user_id=new_user_id())
    assert (answer.status, answer.body["status"]) == (200, "rejected"), answer.body

    assert calls(simulator) == [], "neither receipt could be delivered: Apple is not asked"
    assert db.delivered_count([p["transaction_id"] for p in foreign + sandbox]) == 0


def test_a_receipt_is_confirmed_in_its_own_environment_only(server_api, simulator, db, receipts):
    service = server_api(IAP_SANDBOX_POLICY="always")
    sandbox = bought(receipts, PAY_6)
    tid = sandbox[0]["transaction_id"]
    register_transaction(simulator, transaction_id=tid, purchase_ms=sandbox[0]["purchase_ms"],
                         environments=("Sandbox",))

    answer = service.verify(receipts.app_receipt(sandbox, environment="Sandbox"), user_id=new_user_id())

    assert answer.body["status"] == "delivered" and states(answer.body) == {tid: "delivered"}, answer.body
    assert calls(simulator) == [("sandbox", 200)], "a sandbox receipt's purchase is never in production"

    production = bought(receipts, PAY_6)
    unknown = service.verify(receipts.app_receipt(production), user_id=new_user_id())
    assert unknown.body["status"] == "delivered", "one Apple does not know keeps the receipt's entry"
    assert calls(simulator)[1:] == [("production", 404)], "and a production one never in the sandbox"


def test_a_receipts_entries_take_look_ups_of_the_budget_bare_ids_use(server_api, api, simulator, db, receipts):
    """IAP_APPSTORE_LOOKUPS_PER_MINUTE=3: a receipt of two entries takes two, a second receipt of two
    does not fit (all or none: retry_later, Apple not asked), a bare id takes the third, and then even
    a bare id of a player with a purchase waits for the next minute."""
    service = server_api(IAP_APPSTORE_LOOKUPS_PER_MINUTE="3")
    first = bought(receipts, PAY_6, PAY_6)
    for purchase in first:
        register_transaction(simulator, transaction_id=purchase["transaction_id"], purchase_ms=purchase["purchase_ms"])
    assert service.verify(receipts.app_receipt(first), user_id=new_user_id()).body["status"] == "delivered"
    assert calls(simulator) == [("production", 200)] * 2

    second = bought(receipts, PAY_6, PAY_6)
    over = service.verify(receipts.app_receipt(second), user_id=new_user_id())
    assert (over.status, over.body["status"]) == (503, "retry_later"), over.body
    assert calls(simulator) == [("production", 200)] * 2, "the second receipt was not confirmed at all"
    assert db.delivered_count([p["transaction_id"] for p in second]) == 0

    user, tid = player_with_a_purchase(api, simulator)
    assert status_of(verify_by_id(service, tid, user_id=user)) == (200, "delivered")
    other_user, other_tid = player_with_a_purchase(api, simulator)
    late = verify_by_id(service, other_tid, user_id=other_user)
    assert status_of(late) == (503, "retry_later") and late.headers.get("retry-after"), late
    assert len(calls(simulator)) == 3


# --- bare transaction_ids: a cheap check first, then a share each ---------------------------------

def test_made_up_ids_from_users_without_an_open_order_spend_no_look_up(server_api, api, simulator, db):
    """The issue's attack: random ids for made-up users, as fast as one client posts them. With a budget
    of 20, 25 of them once spent it all (20 look-ups, then retry_later for everyone)."""
    service = server_api(IAP_APPSTORE_LOOKUPS_PER_MINUTE="20")
    made_up = [status_of(verify_by_id(service, new_transaction_id(), address="203.0.113.9", user_id=new_user_id()))
               for _ in range(25)]

    user, tid = player_with_a_purchase(api, simulator)
    assert status_of(verify_by_id(service, tid, user_id=user)) == (200, "delivered"), "the player is not starved"
    assert made_up == [(403, "proof_required")] * 25, made_up
    assert calls(simulator) == [("production", 200)], "nothing a made-up id could deliver: Apple not asked"
    assert db.scalar("SELECT COUNT(*) FROM receipts WHERE client_ip = '203.0.113.9' AND verified_at IS NULL"
                     " AND received_at > NOW() - INTERVAL 10 MINUTE") == 0, "each request's row is closed"

    again = verify_by_id(service, tid, user_id=user)
    assert status_of(again) == (200, "already_delivered"), "its order is delivered, the transaction is the user's"


def test_one_user_and_one_address_get_a_share_and_another_player_still_gets_through(server_api, api, simulator):
    """IAP_APPSTORE_LOOKUPS_PER_MINUTE=20: a user's share is 2, an address's 10."""
    service = server_api(IAP_APPSTORE_LOOKUPS_PER_MINUTE="20", IAP_SANDBOX_POLICY="never")
    greedy = new_user_id()
    api.create_order(greedy, PAY_6)
    answers = [status_of(verify_by_id(service, new_transaction_id(), address="203.0.113.9", user_id=greedy))
               for _ in range(5)]
    assert answers == [(202, "pending")] * 2 + [(503, "retry_later")] * 3, answers
    assert calls(simulator) == [("production", 404)] * 2

    crowd = []
    for _ in range(10):
        user = new_user_id()
        api.create_order(user, PAY_6)
        crowd.append(status_of(verify_by_id(service, new_transaction_id(), address="203.0.113.9", user_id=user)))
    assert crowd == [(202, "pending")] * 8 + [(503, "retry_later")] * 2, crowd
    assert len(calls(simulator)) == 10, "one address: half of the minute's look-ups"

    user, tid = player_with_a_purchase(api, simulator)
    assert status_of(verify_by_id(service, tid, address="198.51.100.7", user_id=user)) == (200, "delivered")
    ipv6_user, ipv6_tid = player_with_a_purchase(api, simulator)
    assert status_of(verify_by_id(service, ipv6_tid, address="2001:db8:5::7", user_id=ipv6_user)) == (200, "delivered")

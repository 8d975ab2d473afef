"""The App Store Server API side of the simulator (imported by appstore_sim.py):

  GET /inApps/v1/transactions/{id}   Get Transaction Info, on the production and sandbox ports
  GET /inApps/v1/lookup/{orderId}    Look Up Order ID, production only (the sandbox answers 404)
  /inApps/v1/subscriptions/...       subscription statuses and renewal-date extensions (subscription_api.py)

Each request must carry `Authorization: Bearer <JWT>` as Apple wants it: ES256 signed by the test In-App
Purchase key (--appstore-key, its public half checks the signature), header kid = --appstore-key-id and
typ JWT, claims iss = --appstore-issuer-id, aud appstoreconnect-v1, bid = --bundle-id, exp - iat at most
3600 s, not expired; anything else is 401. Transactions and orders are registered on the control port
(POST /server_api/transactions, POST /server_api/orders); a transaction is known in the environments it
was registered for and answered as a JWS signed by the test StoreKit PKI (signed_data.py, in --certs).
Unknown ids: 404 {"errorCode": 4040010}; unknown orders: 200 {"status": 1}.

Faults (control keys, on top of latency_ms and tls, which hit these paths too):
  api_fault            null, 401, 429 or 500: the HTTP status forced on Server API requests
  api_fail_next        N > 0: only the next N Server API requests get it, then it clears; 0: until cleared
  api_retry_after_ms   a 429's Retry-After is now + this many ms, as a UNIX time in ms (Apple's form)
  api_fault_env        "both", "production" or "sandbox"
Every Server API request is counted in GET /stats under "server_api": per environment, and the last
1000 as {environment, path, status, at_ms} (at_ms: UNIX ms when it arrived).
"""
import base64
import json
import time
from collections import deque

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

import signed_data
import subscription_api

AUDIENCE = "appstoreconnect-v1"
MAX_TOKEN_LIFE_S = 3600
TRANSACTION_PREFIX = "/inApps/v1/transactions/"
LOOKUP_PREFIX = "/inApps/v1/lookup/"
NOT_FOUND = json.dumps({"errorCode": 4040010, "errorMessage": "Transaction id not found."}).encode()
FAULT_KEYS = ("api_fault", "api_fail_next", "api_retry_after_ms", "api_fault_env")


def is_server_api(path):
    return path.startswith(TRANSACTION_PREFIX) or path.startswith(LOOKUP_PREFIX) \
        or path.startswith(subscription_api.PATH_PREFIX)


def _b64url_decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


class TokenChecker:
    """Checks bearer tokens the way the App Store Server API does (see the module doc)."""

    def __init__(self, key_path, key_id, issuer_id, bundle_id):
        self.public_key = None
        if key_path:
            with open(key_path, "rb") as source:
                self.public_key = serialization.load_pem_private_key(source.read(), password=None).public_key()
        self.key_id, self.issuer_id, self.bundle_id = key_id, issuer_id, bundle_id

    def problem(self, authorization, now=None):
        """None for a good token, else why it is refused."""
        if self.public_key is None:
            return "no In-App Purchase key configured (--appstore-key)"
        if not authorization or not authorization.startswith("Bearer "):
            return "no bearer token"
        parts = authorization[len("Bearer "):].split(".")
        if len(parts) != 3:
            return "not a JWT"
        try:
            header, claims = json.loads(_b64url_decode(parts[0])), json.loads(_b64url_decode(parts[1]))
            signature = _b64url_decode(parts[2])
        except ValueError:
            return "not a JWT"
        if not isinstance(header, dict) or not isinstance(claims, dict):
            return "not a JWT"
        if header.get("alg") != "ES256" or header.get("typ") != "JWT" or header.get("kid") != self.key_id:
            return "bad header"
        if len(signature) != 64:
            return "bad signature"
        der = encode_dss_signature(int.from_bytes(signature[:32], "big"), int.from_bytes(signature[32:], "big"))
        try:
            self.public_key.verify(der, (parts[0] + "." + parts[1]).encode(), ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return "bad signature"
        if claims.get("iss") != self.issuer_id or claims.get("aud") != AUDIENCE or claims.get("bid") != self.bundle_id:
            return "bad claims"
        iat, exp = claims.get("iat"), claims.get("exp")
        if not isinstance(iat, int) or not isinstance(exp, int) or not 0 < exp - iat <= MAX_TOKEN_LIFE_S:
            return "bad lifetime"
        if exp <= (now or time.time()):
            return "expired"
        return None


class ServerAPI:
    """Registered transactions and orders, the faults, and the answers."""

    def __init__(self, certs, tokens):
        self.certs, self.tokens = certs, tokens
        self.transactions = {}  # id -> {"environments": set, "jws": {environment: JWS}, "payload": dict}
        self.orders = {}        # Apple order id -> [transaction ids]
        self.subscriptions = subscription_api.Subscriptions(certs, self._register_signed)
        self.api_fault, self.api_fail_next, self.api_retry_after_ms, self.api_fault_env = None, 0, 1000, "both"
        self.requests = deque(maxlen=1000)
        self.counts = {"production": 0, "sandbox": 0}

    # control
    def fault_settings(self):
        return {key: getattr(self, key) for key in FAULT_KEYS}

    @staticmethod
    def check_fault(key, value):
        is_int = isinstance(value, int) and not isinstance(value, bool)
        if key == "api_fault" and value in (None, 401, 429, 500):
            return value
        if key in ("api_fail_next", "api_retry_after_ms") and is_int and value >= 0:
            return value
        if key == "api_fault_env" and value in ("both", "production", "sandbox"):
            return value
        raise ValueError(f"bad value for {key}: {value!r}")

    def register_transaction(self, body):
        """{"product_id", "environments": ["Production"|"Sandbox", ...], "chain" (signed_data.CHAINS, default
        "good": "untrusted" makes Apple answer a JWS the service must refuse), and transaction() fields:
        transaction_id, app_account_token, purchase_ms, revocation_ms, bundle_id, quantity}. The answer holds
        the JWS each environment answers ("signed_transactions", by lowercase environment)."""
        if not isinstance(body, dict) or not isinstance(body.get("product_id"), str):
            raise ValueError('the body must be {"product_id": ..., "environments": [...], ...}')
        environments = body.get("environments", ["Production"])
        if not environments or any(e not in ("Production", "Sandbox") for e in environments):
            raise ValueError("environments is a non-empty list of Production and Sandbox")
        chain = body.get("chain", "good")
        if chain not in signed_data.CHAINS:
            raise ValueError(f"chain is one of {', '.join(signed_data.CHAINS)}")
        fields = {key: body[key] for key in ("transaction_id", "app_account_token", "purchase_ms", "revocation_ms",
                                             "bundle_id", "quantity") if key in body}
        payload = signed_data.transaction(body["product_id"], environment=environments[0], **fields)
        jws = {environment.lower(): signed_data.sign(dict(payload, environment=environment), self.certs, chain=chain)
               for environment in environments}
        self.transactions[payload["transactionId"]] = {"jws": jws}
        return {"transaction_id": payload["transactionId"], "environments": environments,
                "purchase_ms": payload["purchaseDate"], "signed_transactions": jws}

    def _register_signed(self, transaction_id, jws):
        """Get Transaction Info answers `jws` ({environment: JWS}) for `transaction_id` (a subscription's period)."""
        self.transactions[transaction_id] = {"jws": jws}

    def register_order(self, body):
        """{"order_id", "transaction_ids": [...]}: Look Up Order ID answers those (registered) transactions."""
        if not isinstance(body, dict) or not isinstance(body.get("order_id"), str) \
                or not isinstance(body.get("transaction_ids"), list):
            raise ValueError('the body must be {"order_id": ..., "transaction_ids": [...]}')
        unknown = [t for t in body["transaction_ids"] if t not in self.transactions]
        if unknown:
            raise ValueError(f"unregistered transactions: {unknown}")
        self.orders[body["order_id"]] = list(body["transaction_ids"])
        return {"order_id": body["order_id"], "transaction_ids": self.orders[body["order_id"]]}

    def stats(self):
        return {"counts": dict(self.counts), "requests": list(self.requests)}

    def reset_stats(self):
        self.requests.clear()
        self.counts = {"production": 0, "sandbox": 0}

    # answers
    def answer(self, environment, request):
        """(HTTP status, body, extra headers) for a Server API request."""
        status, body, headers = self._answer(environment, request)
        self.counts[environment] += 1
        self.requests.append({"environment": environment, "path": request.path, "status": status,
                              "at_ms": int(time.time() * 1000)})
        return status, body, headers

    def _answer(self, environment, request):
        fault = self._take_fault(environment)
        if fault == 429:
            retry_after = int(time.time() * 1000) + self.api_retry_after_ms
            return 429, b'{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}', \
                (("Retry-After", str(retry_after)),)
        if fault is not None:
            return fault, json.dumps({"errorCode": fault * 10000, "errorMessage": "simulated fault"}).encode(), ()
        if request.path.startswith(subscription_api.PATH_PREFIX):
            if self.tokens.problem(request.authorization) is not None:
                return 401, b"", ()
            return *self.subscriptions.answer(environment, request), ()
        if request.method != "GET":
            return 405, b'{"errorMessage":"method not allowed"}', ()
        if self.tokens.problem(request.authorization) is not None:
            return 401, b"", ()
        if request.path.startswith(TRANSACTION_PREFIX):
            known = self.transactions.get(request.path[len(TRANSACTION_PREFIX):])
            if known is None or environment not in known["jws"]:
                return 404, NOT_FOUND, ()
            return 200, json.dumps({"signedTransactionInfo": known["jws"][environment]}).encode(), ()
        if environment != "production":
            return 404, b'{"errorMessage":"Look Up Order ID is production only"}', ()
        order = self.orders.get(request.path[len(LOOKUP_PREFIX):])
        if order is None:
            return 200, b'{"status":1}', ()
        signed = [self.transactions[t]["jws"].get("production") or next(iter(self.transactions[t]["jws"].values()))
                  for t in order]
        return 200, json.dumps({"status": 0, "signedTransactions": signed}).encode(), ()

    def _take_fault(self, environment):
        if self.api_fault is None or self.api_fault_env not in ("both", environment):
            return None
        fault = self.api_fault
        if self.api_fail_next > 0:
            self.api_fail_next -= 1
            if self.api_fail_next == 0:
                self.api_fault = None
        return fault

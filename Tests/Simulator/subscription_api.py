"""Auto-renewable subscription chains in the simulator's App Store Server API (imported by server_api.py):

  GET  /inApps/v1/subscriptions/{transactionId}     Get All Subscription Statuses: every chain of the customer
                                                     whose chain holds that transaction (its original or latest
                                                     transaction id), grouped by subscription group, each
                                                     {status 1..5, originalTransactionId, signedTransactionInfo,
                                                     signedRenewalInfo}, both signed now by the test PKI;
                                                     ?status=N (repeatable) keeps the chains in those statuses
  PUT  /inApps/v1/subscriptions/extend/{originalTransactionId}   Extend a Subscription Renewal Date
  POST /inApps/v1/subscriptions/extend/mass          Extend Subscription Renewal Dates for All Active Subscribers
  GET  /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}   its status

The JWT is checked, faults applied and requests counted by server_api.ServerAPI, as for its own endpoints.
A chain is known in its own environment only (elsewhere 404 4040010, or 4040005 for an extension).

Extensions are validated as Apple does, each refusal Apple's errorCode:
  extendByDays not an integer 1..90            400 4000009 InvalidExtendByDaysError
  extendReasonCode not an integer 0..3         400 4000010 InvalidExtendReasonCodeError
  requestIdentifier not a string of 1..128     400 4000011 InvalidRequestIdentifierError
  mass: productId not a non-empty string       400 4000023 InvalidProductIdError
  chain not in this environment                404 4040005 OriginalTransactionIdNotFoundError
  chain not active (status 1, or 4 with its expiry ahead)   403 4030004 SubscriptionExtensionIneligibleError
  two extensions already within 365 days       403 4030005 SubscriptionMaxExtensionError
An accepted extension moves the chain's expiresDate by extendByDays days at once (a later status read and
Get Transaction Info of its latest period show it) and answers {originalTransactionId, webOrderLineItemId,
success: true, effectiveDate}. The same requestIdentifier again answers as the first time and extends
nothing. A mass request answers {requestIdentifier}; its status is {complete: false} for the first
`mass_polls_incomplete` polls (default 1), then it extends every eligible active chain of the product in
that environment and answers {complete: true, completeDate, succeededCount, failedCount}; unknown: 404
4040009 StatusRequestNotFoundError.

Control port:
  POST /subscriptions/chains    {"product_id", "original_transaction_id"?, "transaction_id"? (the latest period;
                                default: the original), "environment"? ("Production"), "status"? 1..5 (1),
                                "purchase_ms"? (now), "expires_ms"? (purchase + 30 days), "auto_renew"? (true),
                                "grace_period_expires_ms"?, "expiration_intent"? 1..5, "revocation_ms"?,
                                "customer"? (chains of one customer answer together; default: the chain alone),
                                "app_account_token"?, "bundle_id"?}: makes a chain, or changes the one
                                original_transaction_id names (the fields given replace its own; a new
                                transaction_id is a new period). Its latest period is registered for Get
                                Transaction Info too. Answers the chain, with "signed_transaction" (its latest
                                period, signed now) for a client to post.
  GET  /subscriptions/chains    {"chains": [...], "mass_requests": [...]}: each chain with its "extensions"
  GET  /subscriptions/received  every status or extension request that reached a chain's endpoints, oldest
                                first: {environment, method, path, body (parsed JSON or null), status}
  POST /subscriptions/settings  {"mass_polls_incomplete": N}
All of it is cleared by POST /control {"reset": true}.
"""
import json
import time
import uuid

import signed_data

PATH_PREFIX = "/inApps/v1/subscriptions/"
EXTEND_PREFIX = PATH_PREFIX + "extend/"
MASS_PATH = EXTEND_PREFIX + "mass"
CONTROL_PREFIX = "/subscriptions/"
DAY_MS = 86_400_000
PERIOD_MS = 30 * DAY_MS
MAX_EXTEND_DAYS = 90
EXTEND_REASON_CODES = (0, 1, 2, 3)
MAX_EXTENSIONS_PER_YEAR = 2
YEAR_MS = 365 * DAY_MS
STATUSES = (1, 2, 3, 4, 5)  # active, expired, billing retry, billing grace period, revoked
SUBSCRIPTION_GROUP = "21000001"

INVALID_EXTEND_BY_DAYS = 4000009
INVALID_EXTEND_REASON_CODE = 4000010
INVALID_REQUEST_IDENTIFIER = 4000011
INVALID_PRODUCT_ID = 4000023
GENERAL_BAD_REQUEST = 4000000
EXTENSION_INELIGIBLE = 4030004
MAX_EXTENSIONS = 4030005
ORIGINAL_TRANSACTION_ID_NOT_FOUND = 4040005
STATUS_REQUEST_NOT_FOUND = 4040009
TRANSACTION_ID_NOT_FOUND = 4040010

CHAIN_FIELDS = {"product_id": str, "transaction_id": str, "environment": str, "status": int, "purchase_ms": int,
                "expires_ms": int, "auto_renew": bool, "grace_period_expires_ms": int, "expiration_intent": int,
                "revocation_ms": int, "customer": str, "app_account_token": str, "bundle_id": str}


def _now_ms():
    return int(time.time() * 1000)


def _error(status, code, message):
    return status, json.dumps({"errorCode": code, "errorMessage": message}).encode()


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def extension_problem(body):
    """None for an ExtendRenewalDateRequest Apple takes, else (HTTP status, errorCode, message)."""
    if not isinstance(body, dict):
        return 400, GENERAL_BAD_REQUEST, "Invalid request. The body must be a JSON object."
    days = body.get("extendByDays")
    if not _is_int(days) or not 1 <= days <= MAX_EXTEND_DAYS:
        return 400, INVALID_EXTEND_BY_DAYS, "Invalid extend by days value."
    if body.get("extendReasonCode") not in EXTEND_REASON_CODES or not _is_int(body.get("extendReasonCode")):
        return 400, INVALID_EXTEND_REASON_CODE, "Invalid extend reason code."
    identifier = body.get("requestIdentifier")
    if not isinstance(identifier, str) or not 1 <= len(identifier) <= 128:
        return 400, INVALID_REQUEST_IDENTIFIER, "Invalid request identifier."
    return None


class Subscriptions:
    """The chains, the extensions asked for, and the answers."""

    def __init__(self, certs, register_transaction):
        self.certs = certs
        # (transaction id, {environment: JWS}): Get Transaction Info answers it (server_api.ServerAPI).
        self.register_transaction = register_transaction
        self.chains = {}          # original transaction id -> chain dict
        self.mass_requests = {}   # (environment, requestIdentifier) -> mass request dict
        self.received = []
        self.mass_polls_incomplete = 1

    # ---------- control ----------
    def control(self, method, path, body):
        try:
            if path == CONTROL_PREFIX + "chains" and method == "POST":
                return 200, self.put_chain(json.loads(body or b"{}"))
            if path == CONTROL_PREFIX + "chains" and method == "GET":
                return 200, {"chains": [dict(chain) for chain in self.chains.values()],
                             "mass_requests": list(self.mass_requests.values())}
            if path == CONTROL_PREFIX + "received" and method == "GET":
                return 200, {"received": self.received}
            if path == CONTROL_PREFIX + "settings" and method == "POST":
                settings = json.loads(body or b"{}")
                polls = settings.get("mass_polls_incomplete") if isinstance(settings, dict) else None
                if not _is_int(polls) or polls < 0:
                    raise ValueError("the body must be {\"mass_polls_incomplete\": N >= 0}")
                self.mass_polls_incomplete = polls
                return 200, {"mass_polls_incomplete": polls}
        except ValueError as error:
            return 400, {"error": str(error)}
        return 404, {"error": "not found"}

    def put_chain(self, body):
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object of chain fields")
        for key, value in body.items():
            if key == "original_transaction_id":
                continue
            kind = CHAIN_FIELDS.get(key)
            if kind is None:
                raise ValueError(f"unknown chain field {key}")
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise ValueError(f"{key} must be a {kind.__name__}")
        if "status" in body and body["status"] not in STATUSES:
            raise ValueError("status is Apple's 1 (active) .. 5 (revoked)")
        if body.get("environment", "Production") not in ("Production", "Sandbox"):
            raise ValueError("environment is Production or Sandbox")
        original = body.get("original_transaction_id")
        chain = self.chains.get(str(original)) if original is not None else None
        if chain is None:
            if not isinstance(body.get("product_id"), str):
                raise ValueError("a new chain needs a product_id")
            original = str(original or 2000000000000000 + uuid.uuid4().int % 10 ** 15)
            purchase = body.get("purchase_ms", _now_ms())
            chain = {"original_transaction_id": original, "transaction_id": original, "environment": "Production",
                     "status": 1, "purchase_ms": purchase, "expires_ms": purchase + PERIOD_MS, "auto_renew": True,
                     "grace_period_expires_ms": None, "expiration_intent": None, "revocation_ms": None,
                     "customer": original, "app_account_token": None, "bundle_id": "com.example.game",
                     "extensions": []}
        if "transaction_id" in body and body["transaction_id"] != chain["transaction_id"]:
            chain["web_order_line_item_id"] = None  # a new period has a line item of its own
        chain.update({key: value for key, value in body.items() if key != "original_transaction_id"})
        if not chain.get("web_order_line_item_id"):
            chain["web_order_line_item_id"] = str(3000000000000000 + uuid.uuid4().int % 10 ** 15)
        self.chains[chain["original_transaction_id"]] = chain
        signed = self._signed_transaction(chain)
        self.register_transaction(chain["transaction_id"], {chain["environment"].lower(): signed})
        return {**chain, "signed_transaction": signed}

    # ---------- signing ----------
    def _transaction_payload(self, chain):
        payload = signed_data.transaction(
            chain["product_id"], transaction_id=chain["transaction_id"],
            original_transaction_id=chain["original_transaction_id"], bundle_id=chain["bundle_id"],
            environment=chain["environment"], app_account_token=chain["app_account_token"],
            type="Auto-Renewable Subscription", purchase_ms=chain["purchase_ms"], signed_ms=_now_ms(),
            revocation_ms=chain["revocation_ms"] if chain["status"] == 5 else None, expires_ms=chain["expires_ms"])
        payload["webOrderLineItemId"] = chain["web_order_line_item_id"]
        payload["subscriptionGroupIdentifier"] = SUBSCRIPTION_GROUP
        return payload

    def _signed_transaction(self, chain):
        return signed_data.sign(self._transaction_payload(chain), self.certs)

    def _signed_renewal_info(self, chain):
        """The renewal info of a chain in Apple's status: billing retry (3) and grace period (4) retrying the
        payment, an expired chain (2) not renewing, for the reason it has (1: the player cancelled)."""
        status = chain["status"]
        fields = {"auto_renew": chain["auto_renew"] and status != 2, "renewal_ms": chain["expires_ms"],
                  "environment": chain["environment"], "billing_retry": status in (3, 4), "signed_ms": _now_ms()}
        if status == 2:
            fields["expiration_intent"] = chain["expiration_intent"] or 1
        if status == 4:
            fields["grace_period_expires_ms"] = chain["grace_period_expires_ms"] or chain["expires_ms"] + 16 * DAY_MS
        payload = signed_data.renewal_info(chain["original_transaction_id"], chain["product_id"], **fields)
        return signed_data.sign(payload, self.certs)

    # ---------- answers ----------
    def answer(self, environment, request):
        """(HTTP status, body) for a request under PATH_PREFIX whose token server_api checked."""
        try:
            body = json.loads(request.body) if request.body else None
        except ValueError:
            body = ValueError
        status, answer = self._answer(environment, request, body)
        self.received.append({"environment": environment, "method": request.method, "path": request.path,
                              "body": None if body is ValueError else body, "status": status})
        return status, answer

    def _answer(self, environment, request, body):
        path, method = request.path, request.method
        if body is ValueError:
            return _error(400, GENERAL_BAD_REQUEST, "Invalid request. The body is not JSON.")
        if path == MASS_PATH:
            return self._mass_extend(environment, body) if method == "POST" else (405, b"{}")
        if path.startswith(MASS_PATH + "/"):
            return self._mass_status(environment, path[len(MASS_PATH) + 1:]) if method == "GET" else (405, b"{}")
        if path.startswith(EXTEND_PREFIX):
            return self._extend(environment, path[len(EXTEND_PREFIX):], body) if method == "PUT" else (405, b"{}")
        if method != "GET":
            return 405, b"{}"
        return self._statuses(environment, path[len(PATH_PREFIX):], request.query)

    def _statuses(self, environment, transaction_id, query):
        found = next((chain for chain in self.chains.values()
                      if chain["environment"].lower() == environment
                      and transaction_id in (chain["original_transaction_id"], chain["transaction_id"])), None)
        if found is None:
            return _error(404, TRANSACTION_ID_NOT_FOUND, "Transaction id not found.")
        wanted = {int(value) for key, _, value in (part.partition("=") for part in query.split("&") if part)
                  if key == "status" and value.isdigit()}
        chains = [chain for chain in self.chains.values()
                  if chain["customer"] == found["customer"] and chain["environment"] == found["environment"]
                  and (not wanted or chain["status"] in wanted)]
        last_transactions = [{"status": chain["status"], "originalTransactionId": chain["original_transaction_id"],
                              "signedTransactionInfo": self._signed_transaction(chain),
                              "signedRenewalInfo": self._signed_renewal_info(chain)} for chain in chains]
        data = [{"subscriptionGroupIdentifier": SUBSCRIPTION_GROUP, "lastTransactions": last_transactions}] \
            if last_transactions else []
        answer = {"environment": found["environment"], "bundleId": found["bundle_id"], "appAppleId": 1234567890,
                  "data": data}
        return 200, json.dumps(answer).encode()

    @staticmethod
    def _refusal(chain, now):
        """None when `chain` may be extended now, else (HTTP status, errorCode, message)."""
        active = chain["status"] == 1 or (chain["status"] == 4 and chain["expires_ms"] > now)
        if not active:
            return 403, EXTENSION_INELIGIBLE, "Subscription is not eligible for an extension."
        recent = [e for e in chain["extensions"] if now - e["at_ms"] < YEAR_MS]
        if len(recent) >= MAX_EXTENSIONS_PER_YEAR:
            return 403, MAX_EXTENSIONS, "Subscription has reached the maximum number of extensions."
        return None

    def _apply_extension(self, chain, body, now):
        chain["expires_ms"] += body["extendByDays"] * DAY_MS
        chain["extensions"].append({"request_identifier": body["requestIdentifier"], "days": body["extendByDays"],
                                    "reason": body["extendReasonCode"], "at_ms": now,
                                    "effective_ms": chain["expires_ms"]})
        signed = self._signed_transaction(chain)
        self.register_transaction(chain["transaction_id"], {chain["environment"].lower(): signed})

    def _extend(self, environment, original_transaction_id, body):
        problem = extension_problem(body)
        if problem:
            return _error(*problem)
        chain = self.chains.get(original_transaction_id)
        if chain is None or chain["environment"].lower() != environment:
            return _error(404, ORIGINAL_TRANSACTION_ID_NOT_FOUND, "Original transaction id not found.")
        earlier = next((e for e in chain["extensions"] if e["request_identifier"] == body["requestIdentifier"]), None)
        if earlier is None:
            now = _now_ms()
            refusal = self._refusal(chain, now)
            if refusal:
                return _error(*refusal)
            self._apply_extension(chain, body, now)
            earlier = chain["extensions"][-1]
        return 200, json.dumps({"originalTransactionId": original_transaction_id,
                                "webOrderLineItemId": chain["web_order_line_item_id"], "success": True,
                                "effectiveDate": earlier["effective_ms"]}).encode()

    def _mass_extend(self, environment, body):
        problem = extension_problem(body)
        if problem:
            return _error(*problem)
        product = body.get("productId")
        if not isinstance(product, str) or not product:
            return _error(400, INVALID_PRODUCT_ID, "Invalid product id.")
        key = (environment, body["requestIdentifier"])
        if key not in self.mass_requests:
            self.mass_requests[key] = {"environment": environment, "requestIdentifier": body["requestIdentifier"],
                                       "productId": product, "body": body, "polls": 0, "complete": False}
        return 200, json.dumps({"requestIdentifier": body["requestIdentifier"]}).encode()

    def _mass_status(self, environment, rest):
        product, _, identifier = rest.partition("/")
        request = self.mass_requests.get((environment, identifier))
        if request is None or request["productId"] != product:
            return _error(404, STATUS_REQUEST_NOT_FOUND, "Status request not found.")
        request["polls"] += 1
        if not request["complete"] and request["polls"] > self.mass_polls_incomplete:
            self._complete(request)
        answer = {"requestIdentifier": identifier, "complete": request["complete"]}
        if request["complete"]:
            answer.update(completeDate=request["completeDate"], succeededCount=request["succeededCount"],
                          failedCount=request["failedCount"])
        return 200, json.dumps(answer).encode()

    def _complete(self, request):
        now = _now_ms()
        succeeded = failed = 0
        for chain in self.chains.values():
            if chain["product_id"] != request["productId"] or chain["environment"].lower() != request["environment"]:
                continue
            if chain["status"] not in (1, 4):
                continue  # only active subscribers are extended (or counted)
            if self._refusal(chain, now):
                failed += 1
            else:
                self._apply_extension(chain, request["body"], now)
                succeeded += 1
        request.update(complete=True, completeDate=now, succeededCount=succeeded, failedCount=failed)

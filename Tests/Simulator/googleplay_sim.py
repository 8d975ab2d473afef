#!/usr/bin/env python3
"""Google Play double for iap-fcgi's tests and local runs: no official emulator exists.

  https://127.0.0.1:PORT (the test CA's certificate, HTTP/1.1 and HTTP/2 by ALPN):
    POST /token                     the OAuth token endpoint: a JWT grant (RS256 by the service account's
                                    key, kid, iss, scope, aud = token_uri, iat/exp at most 1 h) for an
                                    access token (googleplay_keys.py)
    GET  /oauth2/v3/certs           the JWKS of the push signer's trusted key (Cache-Control max-age)
    /androidpublisher/v3/applications/{pkg}/...   the Developer API, with a bearer access token
                                    (googleplay_play.py): purchases/productsv2/tokens/{token},
                                    purchases/products/{product}/tokens/{token}:consume and :acknowledge,
                                    purchases/voidedpurchases, orders/{orderId}:reviewrefund
  http://127.0.0.1:CONTROL:
    GET|POST /control               faults (JSON; keys left out keep their value; see FAULT_KEYS)
    POST /purchases                 a purchase (googleplay_play.Play.create_purchase); POST /purchases/batch
                                    {"count", ...} that many alike (scripts/bench); POST /purchases/update
                                    changes its state; GET /purchases/{token} shows it (acknowledged, consumed)
    POST /voided                    a purchase voided (listed by voidedpurchases)
    POST /refund_reviews            a pending refund review of an order; GET /refund_reviews: answers received
    POST /push/sign                 {"key": "trusted"|"untrusted", "claims", "header", "notification",
                                    "message_id"}: a Pub/Sub push OIDC token, and with a notification the
                                    push body carrying it
    GET /calls                      the last 10,000 HTTPS requests: {endpoint, method, path, query, status,
                                    at_ms, body}; POST /calls/reset forgets them

On start it writes --service-account-file (Google's JSON key for a service account: client_email,
private_key, private_key_id, token_uri = https://HOST:PORT/token), keeping the key of a file there before.
When ready it prints `googleplay-sim listening api=HOST:PORT control=HOST:CONTROL`.
"""
import argparse
import asyncio
import base64
import json
import os
import signal
import ssl
import sys
import time
import urllib.parse
from collections import deque

import appstore_sim
import googleplay_keys
import googleplay_play

FAULTS = (None, 401, 404, 410, 429, 500, 502, 503, "drop")
FAULT_TARGETS = ("api", "token", "jwks", "all")
FAULT_KEYS = ("fault", "fault_next", "fault_on", "retry_after_s", "latency_ms", "access_token_ttl_s",
              "jwks_max_age_s", "voided_page_size")
DEFAULTS = {"fault": None, "fault_next": 0, "fault_on": "api", "retry_after_s": 1, "latency_ms": 0,
            "access_token_ttl_s": 3599, "jwks_max_age_s": 3600,
            "voided_page_size": googleplay_play.MAX_VOIDED_PAGE}
UNAUTHENTICATED = googleplay_play.google_error(
    401, "Request had invalid authentication credentials. Expected OAuth 2 access token.", "authError",
    "UNAUTHENTICATED")
FAULT_BODIES = {
    404: googleplay_play.google_error(404, "The purchase token was not found.", "notFound", "NOT_FOUND"),
    410: googleplay_play.google_error(410, "The purchase token is no longer valid.", "purchaseTokenNoLongerValid",
                                      "GONE"),
    429: googleplay_play.google_error(429, "Quota exceeded.", "rateLimitExceeded", "RESOURCE_EXHAUSTED"),
    500: googleplay_play.google_error(500, "Backend error.", "backendError", "INTERNAL"),
    502: googleplay_play.google_error(502, "Bad gateway.", "backendError", "UNAVAILABLE"),
    503: googleplay_play.google_error(503, "The service is unavailable.", "backendError", "UNAVAILABLE"),
}
MAX_CALLS = 10_000
_compact = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True).encode


def check_fault_setting(key, value):
    is_int = isinstance(value, int) and not isinstance(value, bool)
    if key == "fault" and value in FAULTS:
        return value
    if key == "fault_on" and value in FAULT_TARGETS:
        return value
    if key in ("fault_next", "retry_after_s", "latency_ms", "jwks_max_age_s") and is_int and value >= 0:
        return value
    if key == "access_token_ttl_s" and is_int and 1 <= value <= 3600:
        return value
    if key == "voided_page_size" and is_int and 1 <= value <= googleplay_play.MAX_VOIDED_PAGE:
        return value
    raise ValueError(f"bad value for {key}: {value!r}")


class TLSSettings:
    """What appstore_sim's connections ask of a simulator: the double always shows the trusted certificate."""
    tls = "trusted"


class GoogleSite:
    """The HTTPS port: token endpoint, JWKS and the Developer API, through the faults."""

    def __init__(self, double):
        self.double = double
        self.simulator = double  # appstore_sim.NegotiatedConnection reads site.simulator.settings.tls

    def connection_made(self, connection):
        self.double.connections.add(connection)

    def connection_lost(self, connection):
        self.double.connections.discard(connection)

    def abandoned(self, exchange):
        pass

    def handle(self, exchange, request):
        double = self.double
        endpoint, match = double.endpoint_of(request)
        status, body, headers = double.answer(endpoint, match, request)
        double.calls.append({"endpoint": endpoint, "method": request.method, "path": request.path,
                             "query": request.query, "status": status, "at_ms": int(time.time() * 1000),
                             "body": double.recorded_body(endpoint, request.body)})
        encoded = None if status is None else _compact(body).encode()
        latency_ms = double.faults["latency_ms"]
        if latency_ms:
            exchange.later(request.arrived + latency_ms / 1000, self._send, exchange, status, encoded,
                           request.keep_alive, headers)
        else:
            self._send(exchange, status, encoded, request.keep_alive, headers)

    @staticmethod
    def _send(exchange, status, body, keep_alive, headers):
        if status is None:
            exchange.drop()
        else:
            exchange.send(status, body, keep_alive, headers)


class ControlSite(appstore_sim.ControlSite):
    """Plain-HTTP control port (see the module doc)."""

    def connection_made(self, connection):
        pass

    def connection_lost(self, connection):
        pass

    def _route(self, request):
        double, method, path = self.simulator, request.method, request.path
        try:
            body = json.loads(request.body or b"{}")
            if path == "/control" and method == "GET":
                return 200, dict(double.faults)
            if path == "/control" and method == "POST":
                return 200, double.change_faults(body)
            if path == "/purchases" and method == "POST":
                return 200, double.play.create_purchase(body)
            if path == "/purchases/batch" and method == "POST":
                return 200, double.play.create_purchases(body)
            if path == "/purchases/update" and method == "POST":
                return 200, double.play.update_purchase(body)
            if path.startswith("/purchases/") and method == "GET":
                return 200, double.play.purchase(urllib.parse.unquote(path[len("/purchases/"):]))
            if path == "/voided" and method == "POST":
                return 200, double.play.void(body)
            if path == "/refund_reviews" and method == "POST":
                return 200, double.play.open_review(body)
            if path == "/refund_reviews" and method == "GET":
                return 200, {"reviews": double.play.review_list()}
            if path == "/push/sign" and method == "POST":
                return 200, double.push_message(body)
            if path == "/calls" and method == "GET":
                return 200, {"calls": list(double.calls), "tokens_issued": double.tokens_issued}
            if path == "/calls/reset" and method == "POST":
                double.calls.clear()
                return 200, {"calls": []}
        except ValueError as error:
            return 400, {"error": str(error)}
        return 404, {"error": "not found"}


class GooglePlayDouble:
    def __init__(self, args, port):
        self.args = args
        self.settings = TLSSettings()
        token_uri = f"https://{args.host}:{port}/token"
        self.service_account = googleplay_keys.ServiceAccount(args.service_account_file, args.client_email,
                                                              token_uri)
        self.push = googleplay_keys.PushSigner(args.push_audience, args.push_service_account)
        self.connections = set()
        self.reset()

    def reset(self):
        self.faults = dict(DEFAULTS, latency_ms=self.args.latency_ms)
        self.play = googleplay_play.Play()
        self.access_tokens = {}  # token -> expiry (UNIX seconds)
        self.tokens_issued = 0
        self.calls = deque(maxlen=MAX_CALLS)

    def change_faults(self, changes):
        if not isinstance(changes, dict):
            raise ValueError("the body must be a JSON object")
        reset = changes.pop("reset", False)
        if not isinstance(reset, bool):
            raise ValueError(f"bad value for reset: {reset!r}")
        unknown = set(changes) - set(FAULT_KEYS)
        if unknown:
            raise ValueError(f"unknown keys: {', '.join(sorted(unknown))}")
        checked = {key: check_fault_setting(key, value) for key, value in changes.items()}
        if reset:
            self.reset()
        self.faults.update(checked)
        return dict(self.faults)

    # ---------- the HTTPS port ----------

    @staticmethod
    def endpoint_of(request):
        if request.path == "/token":
            return "token", None
        if request.path == "/oauth2/v3/certs":
            return "jwks", None
        for method, name, pattern in googleplay_play.ENDPOINTS:
            match = pattern.match(request.path)
            if match:
                fields = {key: urllib.parse.unquote(value) for key, value in match.groupdict().items()}
                return (name, fields) if request.method == method else ("method_not_allowed", None)
        return "unknown", None

    def answer(self, endpoint, match, request):
        """(status or None to drop, body, headers)."""
        if endpoint == "unknown":
            return 404, googleplay_play.google_error(404, "Not found.", "notFound", "NOT_FOUND"), ()
        if endpoint == "method_not_allowed":
            return 405, googleplay_play.google_error(405, "Method not allowed.", "methodNotAllowed",
                                                     "METHOD_NOT_ALLOWED"), ()
        fault = self._take_fault(endpoint)
        if fault == "drop":
            return None, None, ()
        if fault == 401:
            return 401, UNAUTHENTICATED if endpoint != "token" else {"error": "invalid_client"}, ()
        if fault == 429:
            return 429, FAULT_BODIES[429], (("Retry-After", str(self.faults["retry_after_s"])),)
        if fault is not None:
            return fault, FAULT_BODIES[fault], ()
        if endpoint == "token":
            return self._token(request)
        if endpoint == "jwks":
            return 200, self.push.jwks(), (("Cache-Control", f"public, max-age={self.faults['jwks_max_age_s']}, "
                                                             "must-revalidate, no-transform"),)
        if not self._authorised(request.authorization):
            return 401, UNAUTHENTICATED, (("WWW-Authenticate", 'Bearer realm="https://accounts.google.com/"'),)
        try:
            body = json.loads(request.body) if request.body else {}
        except ValueError:
            return googleplay_play.invalid("The request body is not JSON.") + ((),)
        query = dict(urllib.parse.parse_qsl(request.query))
        if endpoint == "voidedpurchases":
            # Pages smaller than the client asked for, as Google may give: it must follow nextPageToken.
            asked = query.get("maxResults", "")
            if not asked or asked.isdigit() and int(asked) > self.faults["voided_page_size"]:
                query["maxResults"] = str(self.faults["voided_page_size"])
        status, answer = self.play.answer(endpoint, match, query, body)
        return status, answer, ()

    def _take_fault(self, endpoint):
        fault, target = self.faults["fault"], self.faults["fault_on"]
        if fault is None:
            return None
        hit = target == "all" or target == endpoint or (target == "api" and endpoint not in ("token", "jwks"))
        if not hit:
            return None
        if self.faults["fault_next"] > 0:
            self.faults["fault_next"] -= 1
            if self.faults["fault_next"] == 0:
                self.faults["fault"] = None
        return fault

    def _token(self, request):
        if request.method != "POST":
            return 405, {"error": "invalid_request", "error_description": "POST only"}, ()
        form = dict(urllib.parse.parse_qsl(request.body.decode("latin-1")))
        if form.get("grant_type") != googleplay_keys.GRANT_TYPE:
            return 400, {"error": "unsupported_grant_type",
                         "error_description": "Invalid grant_type: " + form.get("grant_type", "")}, ()
        problem = self.service_account.grant_problem(form.get("assertion"))
        if problem is not None:
            return 400, {"error": "invalid_grant", "error_description": problem}, ()
        now = time.time()
        if len(self.access_tokens) > 10_000:
            self.access_tokens = {t: e for t, e in self.access_tokens.items() if e > now}
        token = "ya29.sim-" + os.urandom(24).hex()
        ttl = self.faults["access_token_ttl_s"]
        self.access_tokens[token] = now + ttl
        self.tokens_issued += 1
        return 200, {"access_token": token, "expires_in": ttl, "token_type": "Bearer"}, ()

    def _authorised(self, authorization):
        if not authorization or not authorization.startswith("Bearer "):
            return False
        expiry = self.access_tokens.get(authorization[len("Bearer "):])
        return expiry is not None and expiry > time.time()

    @staticmethod
    def recorded_body(endpoint, body):
        """What the call log keeps of a request body: the API's JSON; of the token endpoint only the grant's
        claims (its signature and the form are not kept)."""
        if not body:
            return None
        if endpoint == "token":
            assertion = dict(urllib.parse.parse_qsl(body.decode("latin-1"))).get("assertion")
            parts = googleplay_keys.split_jwt(assertion)
            return {"header": parts[0], "claims": parts[1]} if parts else None
        try:
            return json.loads(body)
        except ValueError:
            return None

    # ---------- push ----------

    def push_message(self, body):
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        token = self.push.sign(body.get("key", "trusted"), body.get("header"), body.get("claims"))
        answer = {"token": token, "authorization": "Bearer " + token}
        notification = body.get("notification")
        if notification is not None:
            message_id = str(body.get("message_id") or int.from_bytes(os.urandom(6), "big"))
            now = googleplay_play.rfc3339(int(time.time() * 1000))
            data = base64.b64encode(json.dumps(notification).encode()).decode()
            answer["body"] = {"message": {"data": data, "messageId": message_id, "message_id": message_id,
                                          "publishTime": now, "publish_time": now, "attributes": {}},
                              "subscription": "projects/iap-test/subscriptions/play-developer-notifications"}
        return answer


async def run(args):
    loop = asyncio.get_running_loop()
    site_holder = {}
    api = await loop.create_server(lambda: appstore_sim.NegotiatedConnection(site_holder["site"]), args.host,
                                   args.port, ssl=_tls_context(args), backlog=4096, reuse_address=True)
    port = api.sockets[0].getsockname()[1]
    double = GooglePlayDouble(args, port)
    site_holder["site"] = GoogleSite(double)
    control = await loop.create_server(lambda: appstore_sim.HTTPConnection(ControlSite(double)), args.host,
                                       args.control_port, reuse_address=True)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    print("googleplay-sim listening api=%s:%d control=%s:%d"
          % (args.host, port, args.host, control.sockets[0].getsockname()[1]), flush=True)
    await stop.wait()
    for server in (api, control):
        server.close()
    for connection in list(double.connections):
        if connection.transport is not None:
            connection.transport.abort()


def _tls_context(args):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(os.path.join(args.certs, "server.pem"), os.path.join(args.certs, "server-key.pem"))
    context.set_alpn_protocols(["h2", "http/1.1"])
    return context


def _parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--certs", required=True, metavar="DIR", help="made by scripts/make-test-certs")
    parser.add_argument("--port", type=int, default=9546, help="HTTPS: token endpoint, JWKS, API (0: any free)")
    parser.add_argument("--control-port", type=int, default=9547, help="plain HTTP control port (0: any free)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--service-account-file", metavar="PATH",
                        help="where the service account's JSON key is written (a key there before is kept)")
    parser.add_argument("--client-email", default="iap-fcgi@iap-test.iam.gserviceaccount.com",
                        help="the service account's e-mail: the JWT grant's iss")
    parser.add_argument("--push-audience", default="https://127.0.0.1/v1/notifications/google",
                        help="the aud of the push tokens signed")
    parser.add_argument("--push-service-account", default="pubsub-push@iap-test.iam.gserviceaccount.com",
                        help="the email of the push tokens signed")
    parser.add_argument("--latency-ms", type=int, default=0, help="every HTTPS answer this late (control key)")
    return parser.parse_args(argv)


def main(argv=None):
    args = _parse_args(argv)
    try:
        _tls_context(args)
    except (OSError, ssl.SSLError) as error:
        print(f"googleplay-sim: cannot load certificates from {args.certs}: {error}", file=sys.stderr)
        return 1
    try:
        asyncio.run(run(args))
    except OSError as error:
        print(f"googleplay-sim: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

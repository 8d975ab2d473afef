"""A game's webhook endpoint of the tests' own: HTTPS (the stack's test CA), HTTP/1.1
kept alive, every POST checked (X-IAP-Signature against the shared secret,
X-IAP-Event-Id against the body) and recorded. On demand it answers 500, or stalls
before answering, for every event or for chosen ones, or holds every POST until the
test releases it (a known point to act at while POSTs are under way), and it
notices when one event_id is being POSTed twice at the same time.

In tests: `WebhookReceiver(secret, certs_dir).start()` serves on a thread of its own (`with
WebhookReceiver(...) as receiver:` stops it at the end).
Standalone (scripts/bench-webhook): `python3 webhook_receiver.py --certs DIR --secret S --port P`.
"""
import argparse
import asyncio
import hashlib
import hmac
import json
import ssl
import threading
import time
from dataclasses import dataclass, field

SIGNATURE_MAX_AGE_SECONDS = 300
HOLD_POLL_SECONDS = 0.01
# Events never POSTed that nothing holds back (a user's earlier event in backoff): what a dispatcher
# sends at once. The tests and scripts/bench-webhook wait for none to be left before they start.
NEW_HEADS_PENDING = """SELECT COUNT(*) FROM events e WHERE e.status = 'pending' AND e.next_attempt_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM events earlier WHERE earlier.user_id = e.user_id AND earlier.status = 'pending'
                  AND earlier.event_id < e.event_id)"""


@dataclass
class Delivery:
    """One POST as the receiver saw it."""
    event_id: str            # X-IAP-Event-Id
    body: dict | None        # the parsed JSON body (None when it was not JSON)
    raw_body: bytes
    headers: dict            # lower-case names
    signature_ok: bool
    started: float           # time.monotonic() when the request was read
    answered: float | None = None
    status: int | None = None
    started_at: float = 0.0  # time.time() when the request was read (to compare with the database's times)
    answered_at: float | None = None   # time.time() when its answer was decided, just before it is written

    @property
    def acknowledged(self):
        return self.status is not None and 200 <= self.status < 300


def signature_valid(header, body, secret, now=None):
    """X-IAP-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">, not older than 5 minutes."""
    if not header:
        return False
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    if set(parts) != {"t", "v1"} or not parts["t"].isdigit():
        return False
    if abs((now or time.time()) - int(parts["t"])) > SIGNATURE_MAX_AGE_SECONDS:
        return False
    expected = hmac.new(secret.encode(), parts["t"].encode() + b"." + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, parts["v1"])


@dataclass
class Behaviour:
    fail_all: bool = False                       # every POST answered `fail_status`
    fail_event_ids: set = field(default_factory=set)
    fail_status: int = 500
    stall_seconds: float = 0.0                   # every POST waits this long before its answer
    stall_event_ids: set = field(default_factory=set)
    hold: bool = False                           # every POST waits before its answer until release() or heal()
    answer_body: bytes = b'{"ok":true}'          # the body of every 2xx (a game answering a refund_requested event)


class WebhookReceiver:
    def __init__(self, secret, certs_dir, port=0, host="127.0.0.1", certificate="server"):
        """`certificate`: `server` (issued by the test CA iap-fcgi trusts) or `untrusted` (self-signed)."""
        self.secret = secret
        self.host = host
        self.port = port
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.context.load_cert_chain(f"{certs_dir}/{certificate}.pem", f"{certs_dir}/{certificate}-key.pem")
        self.behaviour = Behaviour()
        self.deliveries = []            # every POST, in arrival order
        self.overlaps = []              # event ids POSTed while a POST of the same id was under way
        self.under_way = {}             # event id -> POSTs of it not yet answered
        self.releases = 0               # release() calls so far
        self.holding = 0                # POSTs waiting for release() now
        self.bad_requests = []          # anything that was not a well-formed POST
        self.lock = threading.Lock()
        self.loop = None
        self.server = None
        self.thread = None

    @property
    def url(self):
        return f"https://{self.host}:{self.port}/iap/events"

    # --- control, from the tests ---

    def behave(self, **changes):
        """behave(fail_all=True), behave(stall_seconds=12), behave(fail_event_ids={"12"}); others kept."""
        with self.lock:
            for name, value in changes.items():
                assert hasattr(self.behaviour, name), name
                setattr(self.behaviour, name, value)

    def heal(self):
        with self.lock:
            self.behaviour = Behaviour()

    def release(self):
        """Lets the POSTs held so far (behave(hold=True)) answer; those that arrive later are held in turn."""
        with self.lock:
            self.releases += 1

    def held(self):
        """POSTs waiting for release() now."""
        with self.lock:
            return self.holding

    def of(self, event_ids):
        """The POSTs of these event ids, in arrival order."""
        wanted = {str(event_id) for event_id in event_ids}
        with self.lock:
            return [d for d in self.deliveries if d.event_id in wanted]

    def acknowledged_ids(self):
        with self.lock:
            return {d.event_id for d in self.deliveries if d.acknowledged}

    def in_flight(self):
        with self.lock:
            return sum(self.under_way.values())

    # --- serving ---

    def start(self):
        ready = threading.Event()

        def serve():
            self.loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self.loop)
            self.server = self.loop.run_until_complete(asyncio.start_server(
                self._connection, self.host, self.port, ssl=self.context, backlog=1024))
            self.port = self.server.sockets[0].getsockname()[1]
            ready.set()
            self.loop.run_forever()

        self.thread = threading.Thread(target=serve, name="webhook-receiver", daemon=True)
        self.thread.start()
        assert ready.wait(10), "the webhook receiver did not start"
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exception):
        self.stop()

    def stop(self):
        if self.loop is None:
            return

        async def close():
            self.server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop = None

    async def _connection(self, reader, writer):
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
                    return
                request_line, *header_lines = head.decode("latin-1").split("\r\n")
                headers = {}
                for line in header_lines:
                    if ":" in line:
                        name, value = line.split(":", 1)
                        headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                status, answer = await self._handle(request_line, headers, body)
                writer.write(b"HTTP/1.1 %d X\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                             % (status, len(answer), answer))
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, ssl.SSLError):
            pass
        finally:
            writer.close()

    async def _handle(self, request_line, headers, body):
        if not request_line.startswith("POST /iap/events "):
            with self.lock:
                self.bad_requests.append(request_line)
            return 404, b'{"error":"not found"}'
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        event_id = headers.get("x-iap-event-id", "")
        delivery = Delivery(event_id=event_id, body=document, raw_body=body, headers=headers,
                            signature_ok=signature_valid(headers.get("x-iap-signature"), body, self.secret),
                            started=time.monotonic(), started_at=time.time())
        with self.lock:
            behaviour = self.behaviour
            ticket = self.releases      # held until a release() after its arrival
            self.deliveries.append(delivery)
            if self.under_way.get(event_id, 0) > 0:
                self.overlaps.append(event_id)
            self.under_way[event_id] = self.under_way.get(event_id, 0) + 1
        try:
            stall = behaviour.stall_seconds if (not behaviour.stall_event_ids
                                                or event_id in behaviour.stall_event_ids) else 0
            if stall:
                await asyncio.sleep(stall)
            if behaviour.hold:
                await self._wait_for_release(ticket)
            failing = behaviour.fail_all or event_id in behaviour.fail_event_ids
            status = behaviour.fail_status if failing else 200
            if not delivery.signature_ok:
                status = 401
        finally:
            with self.lock:
                self.under_way[event_id] -= 1
        delivery.answered = time.monotonic()
        delivery.answered_at = time.time()
        delivery.status = status
        return status, behaviour.answer_body if status < 300 else b'{"error":"on demand"}'

    def _still_held(self, ticket):
        with self.lock:
            return self.behaviour.hold and self.releases == ticket

    async def _wait_for_release(self, ticket):
        with self.lock:
            self.holding += 1
        try:
            while self._still_held(ticket):
                await asyncio.sleep(HOLD_POLL_SECONDS)
        finally:
            with self.lock:
                self.holding -= 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--certs", required=True)
    parser.add_argument("--secret", required=True)
    parser.add_argument("--port", type=int, required=True)
    arguments = parser.parse_args()
    receiver = WebhookReceiver(arguments.secret, arguments.certs, port=arguments.port).start()
    print(f"webhook receiver on {receiver.url}", flush=True)
    try:
        while True:
            time.sleep(5)
            with receiver.lock:
                bad = sum(1 for d in receiver.deliveries if not d.signature_ok)
                print(f"{len(receiver.deliveries)} POSTs, {bad} badly signed, {len(receiver.overlaps)} overlaps",
                      flush=True)
                receiver.deliveries.clear()   # bounded memory in long benchmarks; counts are per 5 s
    except KeyboardInterrupt:
        receiver.stop()


if __name__ == "__main__":
    main()

"""Speaking FastCGI to iap-fcgi directly, as nginx does, and starting iap-fcgi
instances of a test's own next to the stack's.

nginx never sends some requests (a negative CONTENT_LENGTH, a connection from
an address it does not have); these helpers let the tests send them.
"""
import json
import os
import socket
import struct
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
IAP_FCGI = REPO / ".build" / "release" / "iap-fcgi"

VERSION = 1
BEGIN_REQUEST, END_REQUEST, PARAMS, STDIN, STDOUT, STDERR = 1, 3, 4, 5, 6, 7
RESPONDER = 1
KEEP_CONN = 1
TIMEOUT_SECONDS = 10


class Answer:
    """A FastCGI responder's answer: the Status header's code, the headers and the body."""

    def __init__(self, stdout):
        head, _, self.body = stdout.partition(b"\r\n\r\n")
        self.headers = {}
        for line in head.decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self.status = int(self.headers.get("status", "200").split()[0])

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"Answer({self.status}, {self.body[:300]!r})"


def record(kind, content=b"", request_id=1):
    padding = -len(content) % 8
    return struct.pack(">BBHHBB", VERSION, kind, request_id, len(content), padding, 0) + content + b"\0" * padding


def name_value_pairs(params):
    encoded = b""
    for name, value in params.items():
        for part in (name.encode(), value.encode()):
            encoded += struct.pack(">B", len(part)) if len(part) < 128 else struct.pack(">I", len(part) | 1 << 31)
        encoded += name.encode() + value.encode()
    return encoded


def request_bytes(method, path, body=b"", content_length=None, keep_conn=True, remote_addr="127.0.0.1"):
    """The records nginx would send for `method path` with `body` from a client at `remote_addr`.
    CONTENT_LENGTH is the body's length unless `content_length` (any text) is given."""
    params = {
        "REQUEST_METHOD": method, "REQUEST_URI": path, "DOCUMENT_URI": path.split("?")[0],
        "QUERY_STRING": path.partition("?")[2], "CONTENT_TYPE": "application/json",
        "CONTENT_LENGTH": str(len(body)) if content_length is None else content_length,
        "REMOTE_ADDR": remote_addr, "REQUEST_ID": "fastcgi-client",
    }
    data = record(BEGIN_REQUEST, struct.pack(">HB5x", RESPONDER, KEEP_CONN if keep_conn else 0))
    data += record(PARAMS, name_value_pairs(params)) + record(PARAMS)
    for start in range(0, len(body), 65535):
        data += record(STDIN, body[start:start + 65535])
    return data + record(STDIN)


class Connection:
    """One FastCGI connection; each `request` waits for its answer. With keep_conn (nginx's
    `fastcgi_keep_conn on`) the connection stays open for the next request."""

    def __init__(self, address, source=None):
        family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        self.socket.settimeout(TIMEOUT_SECONDS)
        if source is not None:
            self.socket.bind((source, 0))
        self.socket.connect(address)

    def send(self, method, path, body=b"", content_length=None, keep_conn=True, remote_addr="127.0.0.1"):
        self.socket.sendall(request_bytes(method, path, body, content_length, keep_conn, remote_addr))

    def receive(self):
        """The answer to the request sent; None when the service closed the connection first."""
        stdout = b""
        while True:
            header = self._read_exactly(8)
            if header is None:
                return None
            _, kind, _, length, padding, _ = struct.unpack(">BBHHBB", header)
            content = self._read_exactly(length + padding)
            if content is None:
                return None
            if kind == STDOUT:
                stdout += content[:length]
            elif kind == END_REQUEST:
                return Answer(stdout)

    def request(self, method, path, body=b"", content_length=None, keep_conn=True, remote_addr="127.0.0.1"):
        self.send(method, path, body, content_length, keep_conn, remote_addr)
        return self.receive()

    def closed_by_peer(self, wait_seconds=0.0):
        """True when the service has closed its end (a read finds the end of the stream)."""
        self.socket.settimeout(wait_seconds)
        try:
            return self.socket.recv(1) == b""
        except (socket.timeout, BlockingIOError):
            return False
        except ConnectionResetError:
            return True
        finally:
            self.socket.settimeout(TIMEOUT_SECONDS)

    def _read_exactly(self, count):
        data = b""
        while len(data) < count:
            try:
                chunk = self.socket.recv(count - len(data))
            except ConnectionResetError:
                return None
            if not chunk:
                return None
            data += chunk
        return data

    def close(self):
        self.socket.close()


def request_once(address, method, path, source=None, **kwargs):
    """One request on a connection of its own (from the `source` address), closed afterwards."""
    connection = Connection(address, source)
    try:
        return connection.request(method, path, **kwargs)
    finally:
        connection.close()


def service_environment(**overrides):
    """The environment `scripts/stack` gives iap-fcgi (the stack's database, the simulator as Apple),
    with two accept threads; `overrides` set (or, with None, remove) variables."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("IAP_", "FCGI_")) or name in (
               "IAP_BUNDLE_IDS", "IAP_DB_HOST", "IAP_DB_PORT", "IAP_DB_USER", "IAP_DB_PASSWORD", "IAP_DB_NAME",
               "IAP_APPLE_PRODUCTION_URL", "IAP_APPLE_SANDBOX_URL", "IAP_CA_FILE", "IAP_APPLE_TIMEOUT_MS",
               "IAP_SANDBOX_POLICY", "IAP_SHARED_SECRET", "IAP_APPLE_MAX_CALLS")}
    env["IAP_ACCEPT_THREADS"] = "2"
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def start_service(log_path, stdin=subprocess.DEVNULL, prefix=(), **overrides):
    """An iap-fcgi of the test's own (`prefix`: e.g. prlimit and its options), output to `log_path`."""
    assert IAP_FCGI.exists(), f"{IAP_FCGI} is missing: build it with `swift build -c release`"
    with open(log_path, "ab") as log:
        return subprocess.Popen([*prefix, str(IAP_FCGI)], stdin=stdin, stdout=log, stderr=log,
                                env=service_environment(**overrides))


def start_up_refusal(log_path, stdin=subprocess.DEVNULL, **overrides):
    """Starts an iap-fcgi expected to refuse its configuration; returns its exit status and its log."""
    service = start_service(log_path, stdin=stdin, **overrides)
    try:
        status = service.wait(timeout=30)
    finally:
        stop_service(service)
    return status, Path(log_path).read_text()


def wait_until_answering(address, process, log_path, source=None, seconds=30):
    """Waits until GET /v1/version over FastCGI answers 200; fails when the process exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, f"iap-fcgi exited with {process.returncode}:\n{Path(log_path).read_text()}"
        try:
            answer = request_once(address, "GET", "/v1/version", source)
            if answer is not None and answer.status == 200:
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"iap-fcgi did not answer within {seconds} s:\n{Path(log_path).read_text()}")


def stop_service(process, seconds=40):
    """SIGTERM, then waits for the exit (SIGKILL when it takes longer than `seconds`)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


def cpu_seconds(pid):
    """User plus system CPU time the process has used so far, in seconds."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def open_descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))

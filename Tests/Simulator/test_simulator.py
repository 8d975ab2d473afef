"""Self-tests of the App Store simulator: a real process, real TLS with the test CA, on free ports."""
import concurrent.futures
import http.client
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import h2.config
import h2.connection
import h2.events
import h2.settings
import httpx
import pytest
import requests
from h2.errors import ErrorCodes

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import receipts  # noqa: E402

REPO = HERE.parent.parent
MAKE_CERTS = REPO / "scripts" / "make-test-certs"
SIMULATOR = HERE / "appstore_sim.py"
GMT_DATE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d Etc/GMT$")
PACIFIC_DATE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d America/Los_Angeles$")


# ---------- fixtures ----------

@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("certs")
    subprocess.run([str(MAKE_CERTS), str(directory)], check=True)
    return directory


@pytest.fixture(scope="module", autouse=True)
def receipt_pki(certs):
    """The receipts these tests make are signed by the PKI the simulator they start trusts."""
    receipts.use_pki(certs)
    yield
    receipts.use_pki(None)


def start_simulator(certs, *extra):
    process = subprocess.Popen(
        [sys.executable, str(SIMULATOR), "--certs", str(certs), "--production-port", "0", "--sandbox-port", "0",
         "--control-port", "0", *extra], stdout=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    match = re.match(r"appstore-sim listening production=[\d.]+:(\d+) sandbox=[\d.]+:(\d+) control=[\d.]+:(\d+)",
                     line)
    if not match:
        process.kill()
        pytest.fail(f"simulator did not start: {line!r}")
    return process, [int(port) for port in match.groups()]


class Sim:
    def __init__(self, certs, ports):
        self.ca = str(certs / "ca.pem")
        self.production_port, self.sandbox_port, self.control_port = ports

    def port(self, environment):
        return self.production_port if environment == "production" else self.sandbox_port

    def url(self, environment):
        return f"https://127.0.0.1:{self.port(environment)}/verifyReceipt"

    def verify(self, environment, receipt=None, **fields):
        body = {"receipt-data": receipt, **fields} if receipt is not None else fields
        answer = requests.post(self.url(environment), data=json.dumps(body), verify=self.ca, timeout=10)
        assert answer.status_code == 200
        return answer.json()

    def control(self, **settings):
        answer = requests.post(f"http://127.0.0.1:{self.control_port}/control", json=settings, timeout=5)
        assert answer.status_code == 200, answer.text
        return answer.json()

    def stats(self):
        return requests.get(f"http://127.0.0.1:{self.control_port}/stats", timeout=5).json()


@pytest.fixture(scope="module")
def simulator_process(certs):
    process, ports = start_simulator(certs)
    yield process, ports
    process.terminate()
    assert process.wait(timeout=10) == 0


@pytest.fixture
def sim(certs, simulator_process):
    s = Sim(certs, simulator_process[1])
    s.control(reset=True)
    return s


def app(*products, environment="Production", **options):
    return receipts.app_receipt([receipts.purchase(p) for p in products], environment=environment, **options)


# ---------- receipts.py ----------

def test_receipts_have_unique_apple_like_ids_and_round_trip():
    purchases = [receipts.purchase("p") for _ in range(1000)]
    ids = [p["transaction_id"] for p in purchases]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"1000000\d{9}", i) for i in ids)
    assert purchases[0]["original_transaction_id"] == purchases[0]["transaction_id"]
    b64 = receipts.app_receipt(purchases[:2])
    assert len(b64) > 1000 and "+" in b64 and "/" in b64
    payload = receipts.decode(receipts.wrap_lines(b64))
    assert [p["transaction_id"] for p in payload["in_app"]] == ids[:2]
    with pytest.raises(receipts.BadSignature):
        receipts.decode(receipts.tampered(b64))
    with pytest.raises(receipts.MalformedReceipt):
        receipts.decode(receipts.plus_as_space(b64))
    with pytest.raises(ValueError):
        receipts.plus_as_space("abcd")


def test_transaction_ids_differ_between_processes():
    code = "import receipts; print(receipts.purchase('p')['transaction_id'])"
    ids = {subprocess.run([sys.executable, "-c", code], cwd=HERE, capture_output=True, text=True,
                          check=True).stdout.strip() for _ in range(3)}
    assert len(ids) == 3


def test_command_lines_answer_help(certs):
    for script in (HERE / "receipts.py", SIMULATOR):
        assert subprocess.run([sys.executable, str(script), "--help"], capture_output=True).returncode == 0
    out = subprocess.run([sys.executable, str(HERE / "receipts.py"), "--certs", str(certs), "app", "p1",
                          "--refunded", "p2", "--json"],
                         capture_output=True, text=True, check=True).stdout
    made = json.loads(out)
    assert [p["cancellation_ms"] is None for p in made["purchases"]] == [True, False]
    assert receipts.decode(made["receipt_data"])["kind"] == "app"


def test_make_test_certs_is_idempotent(tmp_path):
    subprocess.run([str(MAKE_CERTS), str(tmp_path)], check=True, capture_output=True)
    before = (tmp_path / "server.pem").read_bytes()
    quiet = subprocess.run([str(MAKE_CERTS), str(tmp_path)], check=True, capture_output=True)
    assert quiet.stdout == b"" and quiet.stderr == b""
    assert (tmp_path / "server.pem").read_bytes() == before
    subprocess.run([str(MAKE_CERTS), str(tmp_path)], check=True, env={**os.environ, "FORCE": "1"})
    assert (tmp_path / "server.pem").read_bytes() != before


# ---------- verifyReceipt ----------

def test_valid_production_receipt_lists_every_transaction(sim):
    now = int(time.time()) * 1000
    bought = [receipts.purchase("p1"), receipts.purchase("p2", quantity=2),
              receipts.purchase("p1", cancellation_ms=now)]
    answer = sim.verify("production", receipts.app_receipt(bought, application_version="1.3.0"))
    assert answer["status"] == 0 and answer["environment"] == "Production"
    receipt = answer["receipt"]
    assert receipt["receipt_type"] == "Production"
    assert receipt["bundle_id"] == "com.example.game" and receipt["application_version"] == "1.3.0"
    for key in ("adam_id", "app_item_id", "download_id", "version_external_identifier"):
        assert isinstance(receipt[key], int)
    for name in ("receipt_creation_date", "request_date", "original_purchase_date"):
        assert GMT_DATE.match(receipt[name]) and PACIFIC_DATE.match(receipt[name + "_pst"])
        assert receipt[name + "_ms"].isdigit()
    assert abs(int(receipt["request_date_ms"]) - time.time() * 1000) < 60_000
    in_app = receipt["in_app"]
    assert [t["transaction_id"] for t in in_app] == [p["transaction_id"] for p in bought]
    assert [t["quantity"] for t in in_app] == ["1", "2", "1"]
    for entry in in_app:
        assert all(isinstance(value, str) for value in entry.values())
        assert entry["is_trial_period"] == "false"
        assert GMT_DATE.match(entry["purchase_date"]) and PACIFIC_DATE.match(entry["purchase_date_pst"])
    assert "cancellation_date" not in in_app[0]
    assert in_app[2]["cancellation_date_ms"] == str(now) and GMT_DATE.match(in_app[2]["cancellation_date"])
    assert in_app[2]["cancellation_reason"] == "0"


def test_empty_in_app_is_valid(sim):
    answer = sim.verify("production", app())
    assert answer["status"] == 0 and answer["receipt"]["in_app"] == []


def test_sandbox_receipt_goes_to_the_sandbox(sim):
    b64 = app("p1", environment="Sandbox")
    assert sim.verify("production", b64) == {"status": 21007}
    answer = sim.verify("sandbox", b64)
    assert answer["status"] == 0 and answer["environment"] == "Sandbox"
    assert answer["receipt"]["receipt_type"] == "ProductionSandbox" and answer["receipt"]["adam_id"] == 0


def test_production_receipt_at_the_sandbox_is_21008(sim):
    assert sim.verify("sandbox", app("p1")) == {"status": 21008}


def test_tampered_receipt_is_21003(sim):
    assert sim.verify("production", receipts.tampered(app("p1"))) == {"status": 21003}


def test_receipt_variants_answer_as_apple(sim):
    """verifyReceipt reads the PKCS#7 itself: what the service checks locally, it checks the same way."""
    bought = [receipts.purchase("p1")]
    in_2020 = 1590969600000  # 2020-06-01, while the expired leaf was valid
    for options in (dict(digest="sha1"), dict(encoding="ber"), dict(digest="sha1", encoding="ber"),
                    dict(chain="expired-leaf", creation_ms=in_2020)):
        answer = sim.verify("production", receipts.app_receipt(bought, **options))
        assert answer["status"] == 0, options
        assert [t["transaction_id"] for t in answer["receipt"]["in_app"]] == [bought[0]["transaction_id"]]
    for options in (dict(chain="untrusted"), dict(chain="leaf-without-oid"), dict(chain="intermediate-without-oid"),
                    dict(chain="expired-leaf"), dict(chain="xcode"), dict(forged=True)):
        assert sim.verify("production", receipts.app_receipt(bought, **options)) == {"status": 21003}, options
    assert sim.verify("production", receipts.truncated(receipts.app_receipt(bought))) == {"status": 21002}


def test_line_breaks_pass_and_spaces_do_not(sim):
    b64 = app("p1")
    assert sim.verify("production", receipts.wrap_lines(b64))["status"] == 0
    assert sim.verify("production", receipts.plus_as_space(b64)) == {"status": 21002}


def test_unreadable_requests(sim):
    url = sim.url("production")
    assert requests.post(url, data=b"not json", verify=sim.ca, timeout=5).json() == {"status": 21000}
    assert requests.post(url, data=b"[1]", verify=sim.ca, timeout=5).json() == {"status": 21000}
    assert requests.get(url, verify=sim.ca, timeout=5).json() == {"status": 21000}
    assert sim.verify("production") == {"status": 21002}
    assert sim.verify("production", "aGVsbG8gd29ybGQ=") == {"status": 21002}
    assert sim.verify("production", "!!!") == {"status": 21002}
    assert requests.post(url.replace("verifyReceipt", "other"), data=b"{}", verify=sim.ca,
                         timeout=5).status_code == 404


def test_ios6_receipt_has_the_flat_shape_in_either_environment(sim):
    for environment in ("production", "sandbox"):
        bought = receipts.purchase("p1")
        b64 = receipts.ios6_receipt(bought, environment=environment.capitalize(), bvrs="1.2")
        answer = sim.verify(environment, b64)
        assert set(answer) == {"status", "receipt"} and answer["status"] == 0
        receipt = answer["receipt"]
        assert set(receipt) == {
            "bid", "bvrs", "item_id", "product_id", "transaction_id", "original_transaction_id", "quantity",
            "purchase_date", "purchase_date_ms", "purchase_date_pst", "original_purchase_date",
            "original_purchase_date_ms", "original_purchase_date_pst", "unique_identifier",
            "unique_vendor_identifier"}
        assert all(isinstance(value, str) for value in receipt.values())
        assert (receipt["bid"], receipt["bvrs"], receipt["transaction_id"]) == (
            "com.example.game", "1.2", bought["transaction_id"])
    assert sim.verify("production", receipts.ios6_receipt(receipts.purchase("p"), environment="Sandbox")) == {
        "status": 21007}


def test_shared_secret(sim):
    sim.control(shared_secret="s3cret")
    b64 = app("p1")
    assert sim.verify("production", b64) == {"status": 21004}
    assert sim.verify("production", b64, password="wrong") == {"status": 21004}
    assert sim.verify("production", b64, password="s3cret")["status"] == 0


# ---------- faults ----------

def test_force_status_for_the_next_requests_only(sim):
    b64 = app("p1")
    sim.control(force_status=21100, is_retryable=True, fail_next=2)
    assert sim.verify("production", b64) == {"status": 21100, "is-retryable": True}
    assert sim.verify("sandbox", b64) == {"status": 21100, "is-retryable": True}
    assert sim.verify("production", b64)["status"] == 0
    settings = requests.get(f"http://127.0.0.1:{sim.control_port}/control", timeout=5).json()
    assert settings["force_status"] is None and settings["fail_next"] == 0


def test_force_status_until_cleared_with_the_other_spelling(sim):
    sim.control(force_status=21199, is_retryable=False, retryable_key="is_retryable")
    for _ in range(3):
        assert sim.verify("production", app("p1")) == {"status": 21199, "is_retryable": False}
    sim.control(force_status=None)
    assert sim.verify("production", app("p1"))["status"] == 0


def test_fail_next_alone_is_21005(sim):
    sim.control(fail_next=1)
    assert sim.verify("production", app("p1")) == {"status": 21005}
    assert sim.verify("production", app("p1"))["status"] == 0


def test_fail_for_ms_lasts_that_long_from_the_first_request_it_hits(sim):
    sim.control(force_status=21002, fail_for_ms=400)
    time.sleep(0.5)  # the burst has not started: no request has met it yet
    started = time.monotonic()
    assert sim.verify("production", app("p1")) == {"status": 21002}
    while time.monotonic() - started < 0.3:
        assert sim.verify("production", app("p1")) == {"status": 21002}
    time.sleep(max(0.0, started + 0.45 - time.monotonic()))
    assert sim.verify("production", app("p1"))["status"] == 0
    settings = sim.control()
    assert settings["force_status"] is None and settings["fail_for_ms"] == 0


def test_latest_receipt_info_grows_for_the_same_receipt_bytes(sim):
    first = receipts.purchase("sub.monthly")
    b64 = receipts.app_receipt([first])
    assert "latest_receipt_info" not in sim.verify("production", b64)
    renewal = receipts.purchase("sub.monthly", original_transaction_id=first["transaction_id"])
    answer = requests.post(f"http://127.0.0.1:{sim.control_port}/latest_receipt_info",
                           json={"receipt_data": receipts.wrap_lines(b64), "purchase": renewal}, timeout=5)
    assert answer.status_code == 200 and answer.json() == {"latest_receipt_info": 1}
    verified = sim.verify("production", b64)
    assert [t["transaction_id"] for t in verified["receipt"]["in_app"]] == [first["transaction_id"]]
    [latest] = verified["latest_receipt_info"]
    assert latest["transaction_id"] == renewal["transaction_id"]
    assert latest["original_transaction_id"] == first["transaction_id"]
    assert "latest_receipt_info" not in sim.verify("production", app("p1"))  # other receipts keep theirs
    for bad in ({"receipt_data": "not base64!", "purchase": renewal}, {"receipt_data": b64, "purchase": {}},
                {"receipt_data": receipts.tampered(b64), "purchase": renewal}, ["no"]):
        refused = requests.post(f"http://127.0.0.1:{sim.control_port}/latest_receipt_info", json=bad, timeout=5)
        assert refused.status_code == 400, bad
    sim.control(reset=True)
    assert "latest_receipt_info" not in sim.verify("production", b64)


def test_fault_env_limits_the_faults(sim):
    sim.control(force_status=21009, fault_env="production")
    assert sim.verify("production", app("p1")) == {"status": 21009}
    assert sim.verify("sandbox", app("p1", environment="Sandbox"))["status"] == 0


def test_drop_connection(sim):
    sim.control(drop_connection=True, fail_next=1)
    with pytest.raises(requests.ConnectionError):
        sim.verify("production", app("p1"))
    assert sim.verify("production", app("p1"))["status"] == 0
    stats = sim.stats()["production"]
    assert stats["requests"] == 2 and stats["dropped"] == 1 and stats["status"] == {"0": 1}


def test_untrusted_certificate_fails_verification(sim):
    sim.control(tls="untrusted")
    with pytest.raises(requests.exceptions.SSLError):
        sim.verify("production", app("p1"))
    # It really is the self-signed certificate, also for clients that send no SNI.
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", sim.production_port), timeout=5) as raw:
        with context.wrap_socket(raw) as tls:
            pem = ssl.DER_cert_to_PEM_cert(tls.getpeercert(binary_form=True))
    assert pem.strip() == (Path(sim.ca).parent / "untrusted.pem").read_text().strip()
    assert sim.stats()["production"]["requests"] == 0  # no request got past a handshake
    sim.control(tls="trusted")
    assert sim.verify("production", app("p1"))["status"] == 0


def post_over_tls(sim, context, body, session=None):
    """One verifyReceipt POST on a new TLS connection (offering `session` for resumption).
    Returns (the session was resumed, the answer's bytes, the session to offer next time)."""
    with socket.create_connection(("127.0.0.1", sim.production_port), timeout=5) as raw:
        with context.wrap_socket(raw, server_hostname="127.0.0.1", session=session) as tls:
            tls.sendall(b"POST /verifyReceipt HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                        b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            answer = b""
            try:
                while chunk := tls.recv(65536):
                    answer += chunk
            except (ConnectionError, ssl.SSLError):
                pass
            return tls.session_reused, answer, tls.session


def test_untrusted_certificate_cuts_off_a_resumed_session(sim):
    """A client that resumes a session made before the switch never shows a certificate: were it let
    through, a man in the middle would look trusted. The simulator cuts such a connection off."""
    context = ssl.create_default_context(cafile=sim.ca)
    body = json.dumps({"receipt-data": app("p1")}).encode()
    _, answer, session = post_over_tls(sim, context, body)
    resumed, answer, session = post_over_tls(sim, context, body, session)
    assert resumed and answer.startswith(b"HTTP/1.1 200"), answer[:100]  # resumption works while trusted
    sim.control(tls="untrusted")
    resumed, answer, _ = post_over_tls(sim, context, body, session)
    assert answer == b"", answer[:100]
    assert sim.stats()["production"]["requests"] == 2


def test_latency_delays_answers_without_queueing_them(sim):
    sim.control(latency_ms=400)
    started = time.monotonic()
    assert sim.verify("production", app("p1"))["status"] == 0
    assert time.monotonic() - started >= 0.39
    bodies = [app("p1") for _ in range(20)]
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        answers = list(pool.map(lambda b: sim.verify("production", b), bodies))
    elapsed = time.monotonic() - started
    assert all(a["status"] == 0 for a in answers)
    assert 0.39 <= elapsed < 1.5
    assert sim.stats()["max_inflight"] >= 10


def test_stats_count_per_environment_and_reset(sim):
    requests.post(f"http://127.0.0.1:{sim.control_port}/stats/reset", timeout=5)
    sandbox_receipt = app("p1", environment="Sandbox")
    sim.verify("production", sandbox_receipt)
    sim.verify("sandbox", sandbox_receipt)
    sim.verify("sandbox", app("p1"))
    sim.verify("production", receipts.tampered(app("p1")))
    stats = sim.stats()
    assert stats["production"] == {"requests": 2, "dropped": 0, "status": {"21007": 1, "21003": 1}}
    assert stats["sandbox"] == {"requests": 2, "dropped": 0, "status": {"0": 1, "21008": 1}}
    assert stats["inflight"] == 0 and stats["max_inflight"] == 1
    zeroed = requests.post(f"http://127.0.0.1:{sim.control_port}/stats/reset", timeout=5).json()
    assert zeroed["production"] == {"requests": 0, "dropped": 0, "status": {}}


def test_stats_keep_when_the_last_requests_arrived(sim):
    """arrived_ms: per endpoint, the simulator's clock at each request's arrival, the last 64 of them."""
    requests.post(f"http://127.0.0.1:{sim.control_port}/stats/reset", timeout=5)
    asked = time.monotonic()
    sim.verify("production", app("p1"))
    time.sleep(0.2)
    sim.verify("production", app("p1"))
    answered = time.monotonic()
    sim.verify("sandbox", app("p1", environment="Sandbox"))
    arrived = sim.stats()["arrived_ms"]
    first, second = arrived["production"]
    assert 200 <= second - first <= (answered - asked) * 1000, arrived
    assert len(arrived["sandbox"]) == 1 and arrived["sandbox"][0] >= second, arrived
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda _: sim.verify("production", app("p1")), range(70)))
    kept = sim.stats()["arrived_ms"]["production"]
    assert len(kept) == 64 and kept == sorted(kept) and kept[0] > second, kept
    zeroed = requests.post(f"http://127.0.0.1:{sim.control_port}/stats/reset", timeout=5).json()
    assert zeroed["arrived_ms"] == {"production": [], "sandbox": []}


def test_control_rejects_unknown_keys_and_bad_values(sim):
    url = f"http://127.0.0.1:{sim.control_port}/control"
    for bad in ({"latency": 5}, {"tls": "maybe"}, {"fail_next": -1}, {"force_status": "21005"}):
        assert requests.post(url, json=bad, timeout=5).status_code == 400
    assert requests.get(url, timeout=5).json()["tls"] == "trusted"


# ---------- HTTP details ----------

def https_connection(sim):
    context = ssl.create_default_context(cafile=sim.ca)
    return http.client.HTTPSConnection("127.0.0.1", sim.production_port, context=context, timeout=5)


def test_keep_alive_expect_continue_and_chunked_bodies(sim):
    connection = https_connection(sim)
    body = json.dumps({"receipt-data": app("p1")}).encode()
    connection.request("POST", "/verifyReceipt", body=body)
    first = connection.getresponse()
    assert json.loads(first.read())["status"] == 0
    sock = connection.sock
    connection.request("POST", "/verifyReceipt", body=iter([body[:100], body[100:]]),
                       headers={"Transfer-Encoding": "chunked"}, encode_chunked=True)
    assert json.loads(connection.getresponse().read())["status"] == 0
    assert connection.sock is sock  # the same connection served both
    # Expect: 100-continue: the headers alone must bring "100 Continue".
    sock.sendall(b"POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body))
    assert sock.recv(100).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")
    sock.sendall(body)
    answer = b""
    while b'"in_app"' not in answer or not answer.endswith(b"}"):
        answer += sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    connection.close()


def test_pipelined_requests_are_answered_in_order(sim):
    sim.control(latency_ms=100)
    bodies = [json.dumps({"receipt-data": app("p1", environment=e)}).encode() for e in ("Production", "Sandbox")]
    connection = https_connection(sim)
    connection.connect()
    connection.sock.sendall(b"".join(b"POST /verifyReceipt HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
                                     % (len(body), body) for body in bodies))
    answers = b""
    while answers.count(b"HTTP/1.1 200 OK") < 2 or not answers.endswith(b"}"):
        answers += connection.sock.recv(65536)
    assert re.findall(rb'\{"status":(\d+)', answers) == [b"0", b"21007"]
    connection.close()


def test_a_client_that_leaves_early_is_not_in_flight(sim):
    sim.control(latency_ms=1000)
    with pytest.raises(requests.exceptions.Timeout):
        requests.post(sim.url("production"), data=b"{}", verify=sim.ca, timeout=0.2)
    deadline = time.monotonic() + 2
    while sim.stats()["inflight"] and time.monotonic() < deadline:
        time.sleep(0.05)
    stats = sim.stats()
    assert stats["inflight"] == 0 and stats["production"]["requests"] == 1 and stats["production"]["status"] == {}


def test_command_line_settings_survive_reset(certs):
    process, ports = start_simulator(certs, "--untrusted", "--shared-secret", "abc", "--latency-ms", "50",
                                     "--http1-only")
    try:
        s = Sim(certs, ports)
        s.control(tls="trusted", shared_secret=None, latency_ms=0, http2=True)
        settings = s.control(reset=True)
        assert (settings["tls"], settings["shared_secret"], settings["latency_ms"], settings["http2"]) == (
            "untrusted", "abc", 50, False)
    finally:
        process.terminate()
        process.wait(timeout=5)


def test_sigterm_stops_the_simulator_cleanly(certs):
    process, ports = start_simulator(certs, "--latency-ms", "5000")
    s = Sim(certs, ports)
    idle = https_connection(s)
    idle.connect()
    waiting = H2Client(s)  # an HTTP/2 connection with a stream waiting for its delayed answer
    waiting.request(verify_body(app("p1")))
    wait_until(lambda: s.stats()["inflight"] == 1)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=5) == 0
    idle.close()
    waiting.close()


# ---------- HTTP/2 ----------

def verify_body(receipt):
    return json.dumps({"receipt-data": receipt}).encode()


def wait_until(condition, timeout=5):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def reset_stats_once_all_closed(sim):
    """Counters from zero, connection maxima included: those of earlier tests may still be closing."""
    wait_until(lambda: sim.stats()["connections"] == 0)
    requests.post(f"http://127.0.0.1:{sim.control_port}/stats/reset", timeout=5)


class H2Client:
    """A bare HTTP/2 client (the h2 library over a TLS socket), for what httpx hides: streams side by side
    on one connection, their resets, flow-control windows, GOAWAY."""

    def __init__(self, sim, environment="production", auto_ack=True, initial_window=None):
        context = ssl.create_default_context(cafile=sim.ca)
        context.set_alpn_protocols(["h2"])
        raw = socket.create_connection(("127.0.0.1", sim.port(environment)), timeout=5)
        self.sock = context.wrap_socket(raw, server_hostname="127.0.0.1")
        assert self.sock.selected_alpn_protocol() == "h2"
        self.h2 = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        if initial_window is not None:
            self.h2.local_settings = h2.settings.Settings(
                client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: initial_window})
        self.h2.initiate_connection()
        self.auto_ack = auto_ack
        self.answers = {}  # stream id -> {"status", "headers", "body", "ended", "reset"}
        self.goaway = None  # the error code of the server's GOAWAY
        self.closed = False
        self._send()
        # The server's preface: its settings, and a connection window opened wide for request bodies.
        self.wait(lambda: self.h2.remote_settings.max_concurrent_streams != 2 ** 32
                  and self.h2.outbound_flow_control_window > 65535)

    def request(self, body, path="/verifyReceipt", send=True):
        stream_id = self.h2.get_next_available_stream_id()
        self.h2.send_headers(stream_id, [(":method", "POST"), (":path", path), (":scheme", "https"),
                                         (":authority", "127.0.0.1"), ("content-type", "application/json"),
                                         ("content-length", str(len(body)))])
        self.h2.send_data(stream_id, body, end_stream=True)
        self.answers[stream_id] = {"status": None, "headers": {}, "body": bytearray(), "ended": False,
                                   "reset": None}
        if send:
            self._send()
        return stream_id

    def requests(self, bodies):
        """Sends them all in one write: they reach the server together."""
        ids = [self.request(body, send=False) for body in bodies]
        self._send()
        return ids

    def cancel(self, stream_id):
        self.h2.reset_stream(stream_id, ErrorCodes.CANCEL)
        self._send()

    def finished(self, stream_id):
        answer = self.answers[stream_id]
        return answer["ended"] or answer["reset"] is not None

    def json(self, stream_id, timeout=5):
        self.wait(lambda: self.finished(stream_id), timeout)
        answer = self.answers[stream_id]
        assert answer["reset"] is None and answer["status"] == 200
        return json.loads(answer["body"])

    def wait(self, condition, timeout=5):
        deadline = time.monotonic() + timeout
        while not condition():
            assert not self.closed, "the server closed the connection"
            self.pump(deadline - time.monotonic())

    def pump(self, timeout):
        """Reads once (up to timeout seconds) and takes in what came."""
        if timeout <= 0:
            raise AssertionError("timed out")
        self.sock.settimeout(timeout)
        data = self.sock.recv(65536)
        if not data:
            self.closed = True
            return
        for event in self.h2.receive_data(data):
            answer = self.answers.get(getattr(event, "stream_id", None))
            if isinstance(event, h2.events.ResponseReceived):
                answer["headers"] = dict(event.headers)
                answer["status"] = int(answer["headers"][":status"])
            elif isinstance(event, h2.events.DataReceived):
                answer["body"] += event.data
                if self.auto_ack:
                    self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                answer["ended"] = True
            elif isinstance(event, h2.events.StreamReset):
                answer["reset"] = event.error_code
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.goaway = event.error_code
        self._send()

    def _send(self):
        data = self.h2.data_to_send()
        if data:
            self.sock.sendall(data)

    def close(self):
        self.sock.close()


def httpx_client(sim):
    return httpx.Client(http2=True, verify=ssl.create_default_context(cafile=sim.ca), timeout=10)


def test_http2_is_negotiated_and_answers_like_http11(sim):
    with httpx_client(sim) as client:
        answer = client.post(sim.url("production"), content=verify_body(app("p1")))
        assert answer.http_version == "HTTP/2" and answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        assert int(answer.headers["content-length"]) == len(answer.content)
        assert answer.json()["status"] == 0 and answer.json()["receipt"]["in_app"][0]["product_id"] == "p1"
        sandbox_receipt = app("p1", environment="Sandbox")
        assert client.post(sim.url("production"), content=verify_body(sandbox_receipt)).json() == {"status": 21007}
        assert client.post(sim.url("sandbox"), content=verify_body(sandbox_receipt)).json()["status"] == 0
        assert client.get(sim.url("production")).json() == {"status": 21000}
        assert client.post(sim.url("production").replace("verifyReceipt", "other"), content=b"{}").status_code == 404
    stats = sim.stats()
    assert stats["production"]["status"] == {"21007": 1, "0": 1, "21000": 1}
    assert stats["sandbox"]["status"] == {"0": 1}


def test_http2_streams_share_a_connection_each_with_its_own_latency(sim):
    reset_stats_once_all_closed(sim)
    sim.control(latency_ms=300)
    client = H2Client(sim)
    assert client.h2.remote_settings.max_concurrent_streams == 128
    assert sim.stats()["http2_connections"] == 1
    started = time.monotonic()
    first = client.request(verify_body(app("p1")))
    time.sleep(0.15)
    bodies = [verify_body(app("p1", environment=("Production", "Sandbox")[i % 2])) for i in range(100)]
    rest = client.requests(bodies)
    assert client.json(first)["status"] == 0
    first_done = time.monotonic() - started
    client.wait(lambda: all(client.finished(i) for i in rest))
    all_done = time.monotonic() - started
    assert 0.29 <= first_done < 0.44  # its answer did not wait for the later streams
    assert 0.44 <= all_done < 1.5     # nor did those queue behind each other
    assert [client.json(i)["status"] for i in rest] == [0, 21007] * 50
    stats = sim.stats()
    assert stats["production"]["requests"] == 101 and stats["max_inflight"] >= 100
    assert (stats["max_http2_connections"], stats["max_http1_connections"], stats["max_connections"]) == (1, 0, 1)
    client.close()
    wait_until(lambda: sim.stats()["http2_connections"] == 0)
    assert sim.stats()["connections"] == 0


def test_http2_forced_status_and_fail_next_count_down(sim):
    sim.control(force_status=21100, is_retryable=True, fail_next=2)
    client = H2Client(sim)
    ids = client.requests([verify_body(app("p1")) for _ in range(3)])
    assert [client.json(i) for i in ids[:2]] == [{"status": 21100, "is-retryable": True}] * 2
    assert client.json(ids[2])["status"] == 0
    assert sim.stats()["production"] == {"requests": 3, "dropped": 0, "status": {"21100": 2, "0": 1}}
    sim.control(fail_next=1)
    assert client.json(client.request(verify_body(app("p1")))) == {"status": 21005, "is-retryable": True}
    client.close()


def test_http2_drop_resets_only_that_stream(sim):
    sim.control(drop_connection=True, fail_next=1, latency_ms=200)
    client = H2Client(sim)
    dropped, answered = client.requests([verify_body(app("p1")), verify_body(app("p2"))])
    client.wait(lambda: client.finished(dropped) and client.finished(answered))
    assert client.answers[dropped]["reset"] == ErrorCodes.INTERNAL_ERROR
    assert client.json(answered)["receipt"]["in_app"][0]["product_id"] == "p2"
    assert client.json(client.request(verify_body(app("p3"))))["status"] == 0  # the connection lives on
    stats = sim.stats()
    assert stats["production"] == {"requests": 3, "dropped": 1, "status": {"0": 2}}
    assert stats["inflight"] == 0
    client.close()


def test_http2_a_stream_the_client_resets_is_not_in_flight(sim):
    sim.control(latency_ms=1000)
    client = H2Client(sim)
    abandoned = client.request(verify_body(app("p1")))
    wait_until(lambda: sim.stats()["inflight"] == 1)
    client.cancel(abandoned)
    wait_until(lambda: sim.stats()["inflight"] == 0, timeout=0.8)  # well before its answer was due
    sim.control(latency_ms=0)
    assert client.json(client.request(verify_body(app("p1"))))["status"] == 0
    assert client.answers[abandoned]["status"] is None
    assert sim.stats()["production"] == {"requests": 2, "dropped": 0, "status": {"0": 1}}
    # A connection that closes with streams waiting takes them out of flight too.
    sim.control(latency_ms=1000)
    client.requests([verify_body(app("p1")) for _ in range(3)])
    wait_until(lambda: sim.stats()["inflight"] == 3)
    client.close()
    wait_until(lambda: sim.stats()["inflight"] == 0, timeout=0.8)


def test_http2_answer_waits_for_the_flow_control_window(sim):
    client = H2Client(sim, auto_ack=False, initial_window=100)  # each stream may receive 100 bytes
    stream = client.request(verify_body(app("p1")))
    answer = client.answers[stream]
    client.wait(lambda: len(answer["body"]) == 100)
    with pytest.raises(socket.timeout):
        client.pump(0.3)  # the rest waits for the window
    assert not answer["ended"] and len(answer["body"]) == 100
    while not answer["ended"]:
        client.h2.increment_flow_control_window(300, stream)
        client.h2.increment_flow_control_window(300)
        client._send()
        before = len(answer["body"])
        client.wait(lambda: answer["ended"] or len(answer["body"]) > before)
    assert len(answer["body"]) == int(answer["headers"]["content-length"]) > 1000
    assert json.loads(answer["body"])["status"] == 0
    client.close()


def test_http2_off_negotiates_http11_on_new_connections(sim):
    reset_stats_once_all_closed(sim)
    first = httpx_client(sim)
    assert first.post(sim.url("production"), content=verify_body(app("p1"))).http_version == "HTTP/2"
    assert sim.control(http2=False)["http2"] is False
    first.close()
    wait_until(lambda: sim.stats()["http2_connections"] == 0)
    with httpx_client(sim) as client:
        answer = client.post(sim.url("production"), content=verify_body(app("p1")))
        assert answer.http_version == "HTTP/1.1" and answer.json()["status"] == 0
        stats = sim.stats()
        assert (stats["http1_connections"], stats["http2_connections"]) == (1, 0)
        assert (stats["max_http1_connections"], stats["max_http2_connections"]) == (1, 1)
    sim.control(http2=True)
    with httpx_client(sim) as client:
        assert client.post(sim.url("production"), content=verify_body(app("p1"))).http_version == "HTTP/2"
    assert sim.stats()["production"]["status"] == {"0": 3}


def test_http2_certificate_switch_sends_goaway_to_idle_connections(sim):
    idle = H2Client(sim)
    assert idle.json(idle.request(verify_body(app("p1"))))["status"] == 0
    sim.control(latency_ms=500)
    busy = H2Client(sim)
    waiting = busy.request(verify_body(app("p1")))
    wait_until(lambda: sim.stats()["inflight"] == 1)
    sim.control(tls="untrusted")
    while not idle.closed:
        idle.pump(5)
    assert idle.goaway == ErrorCodes.NO_ERROR
    assert busy.json(waiting)["status"] == 0 and busy.goaway is None  # a busy connection is left alone
    idle.close()
    busy.close()
    with pytest.raises(ssl.SSLCertVerificationError):
        H2Client(sim)

"""iap-fcgi under more connections than it has file descriptors for: it keeps a
bounded number of idle kept connections, and when accept fails for want of a
descriptor (EMFILE) it pauses instead of spinning, then serves what waited."""
import subprocess
import time

from fastcgi_client import (Connection, cpu_seconds, open_descriptors, request_once, start_service, stop_service,
                            wait_until_answering)

DESCRIPTOR_LIMIT = 256
IDLE_CAP = DESCRIPTOR_LIMIT // 4   # iap-fcgi keeps at most a quarter of its descriptors idle
SPARE_DESCRIPTORS = 6
CONNECTIONS = 30
SATURATED_SECONDS = 2
# Paused accept threads use next to nothing; one that retries accept at once burns most of a core.
SATURATED_CPU_SECONDS_CEILING = 0.3
EMFILE_MESSAGE = "Too many open files"


def limit_descriptors(pid, count):
    subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={count}:{count}"], check=True)


def test_accept_pauses_on_emfile_and_serves_the_queued_connections_once_descriptors_free(tmp_path):
    path = str(tmp_path / "iap-fcgi.sock")
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, IAP_LISTEN=path)
    connections = []
    try:
        wait_until_answering(path, service, log_path)
        time.sleep(1)   # the threads started at start-up have opened their database connections
        limit_descriptors(service.pid, open_descriptors(service.pid) + SPARE_DESCRIPTORS)

        for _ in range(CONNECTIONS):
            connection = Connection(path)   # queued by the kernel even when iap-fcgi cannot accept it
            connection.send("GET", "/v1/version")
            connections.append(connection)
        time.sleep(1)
        answered, waiting = [], []
        for connection in connections:
            connection.socket.settimeout(0.2)
            try:
                answer = connection.receive()
            except TimeoutError:
                answer = None
            connection.socket.settimeout(10)
            (answered if answer is not None else waiting).append(connection)
            if answer is not None:
                assert answer.status == 200, answer
        assert 0 < len(answered) <= SPARE_DESCRIPTORS and waiting, (len(answered), len(waiting))

        # Saturated: every descriptor is taken by a kept connection, and more connections wait.
        before = cpu_seconds(service.pid)
        time.sleep(SATURATED_SECONDS)
        used = cpu_seconds(service.pid) - before
        assert used < SATURATED_CPU_SECONDS_CEILING, f"{used:.2f} s of CPU in {SATURATED_SECONDS} s: accept spins"
        log = log_path.read_text()
        assert log.count(EMFILE_MESSAGE) == 1, f"one line per burst of refused accepts:\n{log[-3000:]}"

        # Each connection closed frees a descriptor for one that waits.
        for connection in answered:
            connection.close()
        for connection in waiting:
            answer = connection.receive()
            assert answer is not None and answer.status == 200, answer
            connection.close()
        # The burst ends with the first accept a second after the last failure.
        time.sleep(1.2)
        assert request_once(path, "GET", "/v1/version").status == 200
        log = log_path.read_text()
        assert log.count(EMFILE_MESSAGE) == 1 and log.count("accepting again after") == 1, log[-3000:]
        assert service.poll() is None
    finally:
        for connection in connections:
            connection.close()
        stop_service(service)


def test_idle_kept_connections_are_bounded_and_the_oldest_are_closed(tmp_path):
    path = str(tmp_path / "iap-fcgi.sock")
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, prefix=["prlimit", f"--nofile={DESCRIPTOR_LIMIT}:{DESCRIPTOR_LIMIT}"],
                            IAP_LISTEN=path)
    connections = []
    try:
        wait_until_answering(path, service, log_path)
        for _ in range(IDLE_CAP + 40):
            connection = Connection(path)
            answer = connection.request("GET", "/v1/version")
            assert answer is not None and answer.status == 200, answer
            connections.append(connection)   # kept open, idle, as nginx keeps its pool

        closed = [index for index, connection in enumerate(connections) if connection.closed_by_peer(0.05)]
        assert closed == list(range(40)), f"closed by iap-fcgi: {closed}"
        for connection in connections[40:]:
            answer = connection.request("GET", "/v1/version")
            assert answer is not None and answer.status == 200, answer
    finally:
        for connection in connections:
            connection.close()
        stop_service(service)



SILENT_CONNECTIONS = 20
# iap-fcgi's receive timeout: a connection that sent part of a request is closed after it.
RECEIVE_TIMEOUT_SECONDS = 10


def test_connections_that_send_nothing_hold_no_accept_thread(tmp_path):
    """A peer that connects and sends nothing must not take the (two) accept threads
    from nginx's requests: a new connection is read only once it is readable."""
    path = str(tmp_path / "iap-fcgi.sock")
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, IAP_LISTEN=path)
    silent = []
    try:
        wait_until_answering(path, service, log_path)
        silent = [Connection(path) for _ in range(SILENT_CONNECTIONS)]
        time.sleep(0.5)
        started = time.monotonic()
        answer = request_once(path, "GET", "/v1/version")
        assert answer is not None and answer.status == 200, answer
        assert time.monotonic() - started < 2, "a request waited behind connections that send nothing"
        # They are still served once they speak.
        answer = silent[0].request("GET", "/v1/version")
        assert answer is not None and answer.status == 200, answer
    finally:
        for connection in silent:
            connection.close()
        stop_service(service)


def test_a_connection_that_stops_mid_request_is_closed_after_the_receive_timeout(tmp_path):
    """A peer that sends half a request holds the thread reading it for the receive
    timeout at most; then the connection is closed and the thread serves again."""
    path = str(tmp_path / "iap-fcgi.sock")
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, IAP_LISTEN=path)   # two accept threads
    half_sent = []
    try:
        wait_until_answering(path, service, log_path)
        for _ in range(2):
            connection = Connection(path)
            connection.socket.sendall(b"\x01\x01\x00\x01")   # half of a FastCGI record header
            half_sent.append(connection)
        time.sleep(RECEIVE_TIMEOUT_SECONDS + 2)
        assert all(connection.closed_by_peer(0.5) for connection in half_sent), "half-sent requests are closed"
        started = time.monotonic()
        answer = request_once(path, "GET", "/v1/version")
        assert answer is not None and answer.status == 200, answer
        assert time.monotonic() - started < 2
        assert service.poll() is None
    finally:
        for connection in half_sent:
            connection.close()
        stop_service(service)

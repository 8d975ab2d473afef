"""iap-fcgi under more connections than it has file descriptors for: it keeps a
bounded number of idle kept connections, and when accept fails for want of a
descriptor (EMFILE) it pauses instead of spinning, then serves what waited."""
import re
import subprocess
import time

from fastcgi_client import (Connection, cpu_seconds, open_descriptors, request_once, start_service, stop_service,
                            wait_until_answering)
from support import wait_until

DESCRIPTOR_LIMIT = 256
IDLE_CAP = DESCRIPTOR_LIMIT // 4   # iap-fcgi keeps at most a quarter of its descriptors idle
SPARE_DESCRIPTORS = 6
CONNECTIONS = 30
SATURATED_SECONDS = 2
# Paused accept threads use next to nothing; one that retries accept at once burns most of a core.
SATURATED_CPU_SECONDS_CEILING = 0.3
EMFILE_MESSAGE = "Too many open files"
AGAIN_MESSAGE = "accepting again after"
# ListeningSocket: after a refused accept the socket is out of the poller for 100 ms; a burst of refusals ends
# at the first accept a second or more after the last one.
PAUSE_SECONDS = 0.1
BURST_GAP_SECONDS = 1.0


def limit_descriptors(pid, count):
    subprocess.run(["prlimit", f"--pid={pid}", f"--nofile={count}:{count}"], check=True)


def queued_connections(path):
    """Connections waiting in the accept queue of the unix socket listening at `path` (ss: the Recv-Q
    of a listening socket)."""
    listing = subprocess.run(["ss", "-xlnH", "src", path], capture_output=True, text=True, check=True).stdout
    (line,) = [line for line in listing.splitlines() if path in line]
    return int(line.split()[2])


def burst_lines(log):
    """The listener's lines about refused accepts, in order: "failed" when a burst starts, the number of
    attempts when it ends."""
    lines = []
    for line in log.splitlines():
        if EMFILE_MESSAGE in line:
            lines.append("failed")
        elif AGAIN_MESSAGE in line:
            lines.append(int(re.search(r"after (\d+) failed attempts", line).group(1)))
    return lines


def test_accept_pauses_on_emfile_and_serves_the_queued_connections_once_descriptors_free(tmp_path):
    path = str(tmp_path / "iap-fcgi.sock")
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, IAP_LISTEN=path)
    connections = []
    try:
        wait_until_answering(path, service, log_path)
        # Room for a few connections: about SPARE_DESCRIPTORS (one more while the probe's connection closes,
        # less if a thread opens a database connection later); the test needs at least 1 and fewer than 30.
        limited_at = time.monotonic()
        limit_descriptors(service.pid, open_descriptors(service.pid) + SPARE_DESCRIPTORS)

        for _ in range(CONNECTIONS):
            connection = Connection(path)   # queued by the kernel even when iap-fcgi cannot accept it
            connection.send("GET", "/v1/version")
            connections.append(connection)
        # Saturated: an accept was refused for want of a descriptor (nothing frees one until the test closes a
        # connection), the first connection was taken and answered, and the others wait in the queue.
        wait_until(lambda: EMFILE_MESSAGE in log_path.read_text(), 30, "an accept refused for want of descriptors")
        first = connections[0].receive()
        assert first is not None and first.status == 200, first
        assert queued_connections(path) > 0, "no connection waits: the descriptor limit did not bite"

        before = cpu_seconds(service.pid)
        time.sleep(SATURATED_SECONDS)
        used = cpu_seconds(service.pid) - before
        assert queued_connections(path) > 0, "the queue emptied: the CPU was not measured while saturated"
        assert used < SATURATED_CPU_SECONDS_CEILING, f"{used:.2f} s of CPU in {SATURATED_SECONDS} s: accept spins"
        assert burst_lines(log_path.read_text()) == ["failed"], f"one line per burst:\n{log_path.read_text()[-3000:]}"

        # Each connection closed frees a descriptor for the next that waits: in the queue's order, each one is
        # taken at the latest once every one before it is closed.
        for index, connection in enumerate(connections):
            answer = first if index == 0 else connection.receive()
            assert answer is not None and answer.status == 200, (index, answer)
            connection.close()
        # The last refusal came before the last queued connection was taken, so before its answer: after the
        # gap, the next accept ends the burst.
        time.sleep(BURST_GAP_SECONDS + 0.2)
        assert request_once(path, "GET", "/v1/version").status == 200
        elapsed = time.monotonic() - limited_at
        log = log_path.read_text()
        # Each burst logged once as it starts and once as it ends (the accept thread being held up for the gap
        # mid-drain splits one burst in two; one line per refused accept would show "failed" twice in a row).
        lines = burst_lines(log)
        starts, ends = lines[0::2], lines[1::2]
        assert lines and len(starts) == len(ends) and set(starts) == {"failed"} and all(
            isinstance(attempts, int) and attempts > 0 for attempts in ends), (lines, log[-3000:])
        # Paused, not spinning: one refused accept per pause at most (the socket is out of the poller meanwhile),
        # whatever the load; spinning refuses thousands a second.
        attempts = sum(ends)
        assert attempts <= elapsed / PAUSE_SECONDS + 2, f"{attempts} refused accepts in {elapsed:.1f} s"
        assert service.poll() is None
    finally:
        for connection in connections:
            connection.close()
        stop_service(service)


def test_idle_kept_connections_are_bounded_and_the_oldest_are_closed(tmp_path):
    """Each new connection is parked idle as it is accepted, before its request is read: parking the
    (IDLE_CAP + 1)th idle one closes the oldest, so by the time a connection's answer arrives, every
    closing it causes is done. One accept thread parks each answered connection before it accepts the
    next, so "oldest" is the order the test used them in (with two, a thread held up between an answer
    and its parking could park two connections in the other order)."""
    path = str(tmp_path / "iap-fcgi.sock")
    log_path = tmp_path / "iap-fcgi.log"
    service = start_service(log_path, prefix=["prlimit", f"--nofile={DESCRIPTOR_LIMIT}:{DESCRIPTOR_LIMIT}"],
                            IAP_LISTEN=path, IAP_ACCEPT_THREADS="1")
    connections = []
    try:
        wait_until_answering(path, service, log_path)
        for _ in range(IDLE_CAP + 40):
            connection = Connection(path)
            answer = connection.request("GET", "/v1/version")
            assert answer is not None and answer.status == 200, answer
            connections.append(connection)   # kept open, idle, as nginx keeps its pool

        closed = [index for index, connection in enumerate(connections) if connection.closed_by_peer()]
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
        # Queued before the request, so accepted before it (the accept queue is first in, first out).
        silent = [Connection(path) for _ in range(SILENT_CONNECTIONS)]
        answer = request_once(path, "GET", "/v1/version")
        assert answer is not None and answer.status == 200, answer
        # A thread that read a silent connection would have been held until the receive timeout closed it:
        # the answer came with every silent connection still open, so no thread waited on one.
        closed = [index for index, connection in enumerate(silent) if connection.closed_by_peer()]
        assert closed == [], f"a request waited until silent connections {closed} were closed by the receive timeout"
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
        # Closed once the receive timeout passes (the wait only bounds a failure: it returns at the close).
        assert all(connection.closed_by_peer(RECEIVE_TIMEOUT_SECONDS + 30) for connection in half_sent), (
            "half-sent requests are closed")
        # Both threads were reading them: answered now, they serve again.
        answer = request_once(path, "GET", "/v1/version")
        assert answer is not None and answer.status == 200, answer
        assert service.poll() is None
    finally:
        for connection in half_sent:
            connection.close()
        stop_service(service)

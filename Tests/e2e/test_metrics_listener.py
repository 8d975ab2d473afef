"""The metrics listener (IAP_METRICS_LISTEN) never lets one connection hold up another: a client that
connects and sends nothing, or sends its request a byte at a time, only holds its own connection, which
the server closes IDLE_DEADLINE_S after accepting it whatever it does (MetricsListener.ioTimeoutSeconds).

Served one connection at a time, each idle connection stopped /metrics (and the backlog probes of the same
thread) for 2 s, and one that sent a byte now and then stopped it for as long as it kept sending.
"""
import os
import socket
import threading
import time

import requests

IDLE_DEADLINE_S = 2
# How long a scrape may take while other connections hang: well past a scrape's few milliseconds on a
# loaded machine. (Whether it waited for them is checked by order, not by time: see still_open.)
SCRAPE_BOUND_S = 5
# How long the server may take to close a silent connection: its deadline, and room for a loaded machine.
CLOSE_BOUND_S = IDLE_DEADLINE_S + 6


def listen_address():
    listen = os.environ.get("IAP_METRICS_LISTEN")
    assert listen, "IAP_METRICS_LISTEN is not set: export the stack's environment (scripts/stack env)"
    host, port = listen.rsplit(":", 1)
    return host, int(port)


def open_connection():
    connection = socket.create_connection(listen_address(), timeout=10)
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def scrape():
    """GET /metrics, answered 200 with the exposition within SCRAPE_BOUND_S."""
    host, port = listen_address()
    started = time.monotonic()
    try:
        response = requests.get(f"http://{host}:{port}/metrics", timeout=SCRAPE_BOUND_S)
    except requests.exceptions.Timeout:
        raise AssertionError(f"GET /metrics gave no answer within {SCRAPE_BOUND_S} s while other connections hang")
    assert time.monotonic() - started < SCRAPE_BOUND_S
    assert response.status_code == 200, response.status_code
    assert "iap_build_info" in response.text


def still_open(connection):
    """True when the server has neither closed nor answered `connection` yet (nothing to read now).
    A listener that served the silent connections first answered a scrape only once it had dropped them."""
    connection.setblocking(False)
    try:
        connection.recv(1)
    except BlockingIOError:
        return True
    except ConnectionResetError:
        return False
    finally:
        connection.setblocking(True)
    return False


def assert_closed_by_server(connection, what):
    """The server closes `connection` (end of file, no answer) within CLOSE_BOUND_S."""
    connection.settimeout(CLOSE_BOUND_S)
    try:
        received = connection.recv(4096)
    except socket.timeout:
        raise AssertionError(f"{what}: still open {CLOSE_BOUND_S} s later")
    except ConnectionResetError:
        received = b""
    assert received == b"", f"{what}: answered {received[:80]!r} instead of closed"


def test_a_silent_connection_does_not_hold_up_a_scrape():
    silent = open_connection()
    try:
        scrape()
        assert still_open(silent), "the scrape was answered only after the silent connection was dropped"
        assert_closed_by_server(silent, "a connection that sent nothing")
    finally:
        silent.close()


def test_several_silent_connections_do_not_hold_up_scrapes():
    silent = [open_connection() for _ in range(8)]
    try:
        for _ in range(3):
            scrape()
        dropped = [number for number, connection in enumerate(silent, 1) if not still_open(connection)]
        assert not dropped, f"the scrapes were answered only after silent connections {dropped} were dropped"
        for number, connection in enumerate(silent, 1):
            assert_closed_by_server(connection, f"silent connection {number} of {len(silent)}")
        # Once they are gone, the listener serves as before.
        scrape()
    finally:
        for connection in silent:
            connection.close()


def test_a_request_sent_a_byte_at_a_time_is_cut_off_at_its_deadline():
    """A byte every 0.2 s never finishes a request head: each read succeeds, so only a deadline for the
    whole request ends it. The scrape beside it is answered meanwhile, and the slow one is closed."""
    dripping = open_connection()
    stop, sending = threading.Event(), threading.Event()

    def drip():
        for byte in b"GET /metrics HTTP/1.1\r\nX-Slow: " + b"x" * 1000:
            if stop.wait(0.2):
                return
            try:
                dripping.send(bytes([byte]))
            except OSError:   # closed by the server
                return
            sending.set()

    sender = threading.Thread(target=drip, daemon=True)
    sender.start()
    try:
        assert sending.wait(SCRAPE_BOUND_S), "the slow request did not start"
        scrape()
        assert_closed_by_server(dripping, "a connection sending a byte every 0.2 s")
    finally:
        stop.set()
        sender.join()
        dripping.close()

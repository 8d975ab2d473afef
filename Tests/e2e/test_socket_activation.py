"""Socket activation (deploy/iap-fcgi.socket, spawn-fcgi): the listening socket
belongs to a parent process that hands it over as fd 0 and keeps it across
restarts of iap-fcgi. Stopping iap-fcgi must leave that socket as it found it:
while no iap-fcgi runs, nginx's connections wait in its queue, and the next
iap-fcgi answers them."""
import socket
import time

from fastcgi_client import (Connection, cpu_seconds, request_once, start_service, start_up_refusal, stop_service,
                            wait_until_answering)

REQUESTS_PER_RUN = 20
# An idle service wakes each accept thread once a second; a spinning one burns a core.
IDLE_CPU_SECONDS_CEILING = 0.3
IDLE_SECONDS = 2


def test_a_restart_on_the_inherited_socket_serves_and_loses_no_queued_connection(tmp_path):
    path = str(tmp_path / "activated.sock")
    log_path = tmp_path / "iap-fcgi.log"
    # The launcher's part (systemd's): the socket is bound, listened on and kept open by this process.
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(path)
    listening.listen(64)
    processes = []
    try:
        for run in range(2):
            service = start_service(log_path, stdin=listening, IAP_LISTEN=None)
            processes.append(service)
            wait_until_answering(path, service, log_path)
            for _ in range(REQUESTS_PER_RUN):
                answer = request_once(path, "GET", "/v1/version")
                assert answer is not None and answer.status == 200, (run, answer)

            # Nothing to do: the accept threads wait without burning CPU.
            before = cpu_seconds(service.pid)
            time.sleep(IDLE_SECONDS)
            assert cpu_seconds(service.pid) - before < IDLE_CPU_SECONDS_CEILING, "accept threads spin"

            assert stop_service(service) == 0, log_path.read_text()

            # No iap-fcgi now: a connection is queued by the kernel, not refused, and its
            # request is answered by the next iap-fcgi.
            try:
                queued = Connection(path)
            except ConnectionRefusedError:
                raise AssertionError(f"run {run}: the stopped iap-fcgi left the inherited socket refusing "
                                     f"connections:\n{log_path.read_text()}")
            queued.send("GET", "/v1/version")
            successor = start_service(log_path, stdin=listening, IAP_LISTEN=None)
            processes.append(successor)
            answer = queued.receive()
            queued.close()
            assert answer is not None and answer.status == 200, (run, answer, log_path.read_text())
            assert "review_version" in answer.json()
            assert stop_service(successor) == 0, log_path.read_text()
    finally:
        for process in processes:
            stop_service(process)
        listening.close()


def inherited_tcp_socket():
    """A TCP socket listening on every address, as `ListenStream=0.0.0.0:PORT` gives it."""
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("0.0.0.0", 0))
    listening.listen(64)
    return listening


def test_an_inherited_tcp_socket_on_every_address_needs_allowed_addresses(tmp_path):
    log_path = tmp_path / "iap-fcgi.log"
    listening = inherited_tcp_socket()
    try:
        status, log = start_up_refusal(log_path, stdin=listening, IAP_LISTEN=None)
        assert status == 2, log
        assert "IAP_FCGI_ALLOWED_ADDRESSES: is required" in log and "0.0.0.0" in log, log

        address = ("127.0.0.1", listening.getsockname()[1])
        service = start_service(log_path, stdin=listening, IAP_LISTEN=None, IAP_FCGI_ALLOWED_ADDRESSES="127.0.0.1")
        try:
            wait_until_answering(address, service, log_path)
        finally:
            assert stop_service(service) == 0, log_path.read_text()
    finally:
        listening.close()

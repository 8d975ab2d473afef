"""The support console's HTTPS port is one a browser opens, whatever the stack's HTTP port: scripts/stack takes
it from console_https_port (scripts/lib/browser-ports.sh), the HTTP port + 2000 stepped past the ports
browsers refuse. The local run's 8080 once gave 10080, which Chromium and Firefox both refuse
(ERR_UNSAFE_PORT): the URL scripts/start printed did not open."""
import os
import re
import socket
import subprocess
import threading
from contextlib import contextmanager
from urllib.parse import urlsplit

import pytest
from selenium.webdriver.common.by import By

from conftest import REPO, STACK_SCRIPT
from support import headless_chromium

BROWSER_PORTS = REPO / "scripts" / "lib" / "browser-ports.sh"
# The Fetch standard's bad ports (fetch.spec.whatwg.org, "bad port"): Firefox refuses each
# (netwerk/base/nsIOService.cpp, gBadPortList), Chromium each but 4190 and 6679 (net/base/port_util.cc,
# kRestrictedPorts; Debian's Chromium 156 opens those two). The reference the script's list is checked against.
FETCH_BAD_PORTS = {
    1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109,
    110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530,
    531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190,
    5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080}
HIGHEST_HTTP_PORT = 65535 - 2000


def browser_ports(script):
    """Runs `script` in bash with scripts/lib/browser-ports.sh sourced; returns its standard output."""
    result = subprocess.run(["bash", "-c", f'. "{BROWSER_PORTS}"\n{script}'], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and result.stderr == "", (result.returncode, result.stderr)
    return result.stdout


def test_the_scripts_list_holds_every_port_browsers_refuse():
    listed = {int(port) for port in browser_ports('echo "${BROWSER_BLOCKED_PORTS[@]}"').split()}
    assert FETCH_BAD_PORTS <= listed, f"not listed: {sorted(FETCH_BAD_PORTS - listed)}"


def test_no_http_port_gives_a_console_port_a_browser_refuses():
    chosen = [int(line) for line in browser_ports(
        f"for ((port = 1; port <= {HIGHEST_HTTP_PORT}; port++)); do console_https_port $port; done").split()]
    assert len(chosen) == HIGHEST_HTTP_PORT
    refused = [(http, console) for http, console in enumerate(chosen, start=1) if console in FETCH_BAD_PORTS]
    assert not refused, f"(HTTP port, console port) a browser refuses: {refused[:10]}"
    # HTTP port + 2000 unless a browser refuses that, then the next port it does not.
    for http, console in enumerate(chosen, start=1):
        assert console == next(port for port in range(http + 2000, 65536) if port not in FETCH_BAD_PORTS), http
    assert browser_ports(f"console_https_port {HIGHEST_HTTP_PORT + 1} || echo none").strip() == "none"


def local_run_console_url():
    """The console URL the local run prints: scripts/stack's, in a shell with none of a stack's variables."""
    result = subprocess.run([str(STACK_SCRIPT), "env"], cwd=REPO, capture_output=True, text=True, timeout=30,
                            env={"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root")})
    assert result.returncode == 0, result.stderr
    match = re.search(r"^export IAP_CONSOLE_URL=(\S+)", result.stdout, re.MULTILINE)
    assert match, result.stdout
    return match.group(1)


@contextmanager
def forwarded(listen_port, target_port):
    """Connections to 127.0.0.1:listen_port passed through, byte for byte, to 127.0.0.1:target_port."""
    try:
        listener = socket.create_server(("127.0.0.1", listen_port))
    except OSError as error:
        pytest.fail(f"port {listen_port} is taken ({error}): is the local run up?", pytrace=False)

    def pipe(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def accept():
        while True:
            try:
                client, _ = listener.accept()
            except OSError:   # closed: the block is over
                return
            server = socket.create_connection(("127.0.0.1", target_port), timeout=10)
            server.settimeout(None)
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=pipe, args=(source, sink), daemon=True).start()

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield
    finally:
        listener.shutdown(socket.SHUT_RDWR)   # wakes the accept() under way
        listener.close()
        acceptor.join(timeout=10)


@pytest.fixture(scope="module")
def chromium():
    driver = headless_chromium()
    yield driver
    driver.quit()


def test_the_console_url_the_local_run_prints_opens_in_chromium(chromium):
    url = local_run_console_url()
    local_port = urlsplit(url).port
    stack_port = urlsplit(os.environ["IAP_CONSOLE_URL"]).port
    assert local_port != stack_port, "this stack runs with the local run's ports"
    # The local run is not up here: its port leads to this stack's console server.
    with forwarded(local_port, stack_port):
        chromium.get(url + "/console/login")
        refused = "ERR_UNSAFE_PORT" in chromium.page_source
        assert chromium.find_elements(By.ID, "password"), f"{url}: no login form{' (ERR_UNSAFE_PORT)' * refused}"


def test_chromium_refuses_ports_of_the_list(chromium):
    """The list is the browsers' own: Chromium stops these navigations before connecting (a port it opens
    would fail to connect instead, ERR_CONNECTION_REFUSED, raised by selenium)."""
    for port in (10080, 6000, 5060, 6697, 1):
        chromium.get(f"http://127.0.0.1:{port}/")
        assert "ERR_UNSAFE_PORT" in chromium.page_source, port


def test_the_stack_refuses_a_console_port_browsers_refuse(stack):
    result = subprocess.run([str(STACK_SCRIPT), "reload", "nginx"], cwd=REPO, capture_output=True, text=True,
                            timeout=60, env={**os.environ, "IAP_CONSOLE_HTTPS_PORT": "10080"})
    try:
        assert result.returncode == 1, (result.stdout, result.stderr)
        assert "IAP_CONSOLE_HTTPS_PORT=10080" in result.stderr and "ERR_UNSAFE_PORT" in result.stderr, result.stderr
    finally:
        if result.returncode == 0:
            stack("reload nginx")   # back to this stack's own console port

"""nginx keeps its FastCGI connections to iap-fcgi open between requests
(fastcgi_keep_conn and the upstream's keepalive pool). An idle kept connection
must hold none of iap-fcgi's few accept threads: were a thread to wait on each
one, requests sent after a burst on more connections than threads would queue
behind connections nginx no longer uses, until nginx's 120 s timeout."""
import os
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor

from support import PAY_6, assert_verify_answer, new_transaction_id, new_user_id

ACCEPT_THREADS = int(os.environ.get("IAP_ACCEPT_THREADS", "8"))   # iap-fcgi's default


def open_fastcgi_connections(run_dir):
    """Connections on iap-fcgi's FastCGI socket, from iap-fcgi's side (`ss` lists a unix socket's
    accepted connections under the socket's path)."""
    listing = subprocess.run(["ss", "-x", "-H", "state", "connected"], capture_output=True, text=True, check=True)
    socket_path = str(run_dir / "iap-fcgi.sock")
    return sum(1 for line in listing.stdout.splitlines() if socket_path in line.split())


def test_connections_stay_open_between_requests(api, run_dir):
    for _ in range(20):
        assert api.get("/v1/version").status_code == 200
    # No request is under way: whatever is connected is kept for the next request.
    assert open_fastcgi_connections(run_dir) >= 1


def test_more_kept_connections_than_accept_threads_do_not_hold_requests_up(api, receipts, simulator, run_dir):
    """Verifies waiting 500 ms on Apple make nginx open three times as many connections as iap-fcgi has
    accept threads; afterwards every one of them is idle and kept, and requests keep being answered at
    once."""
    simulator.control(latency_ms=500)
    user_id = new_user_id()
    count = ACCEPT_THREADS * 3
    made = [receipts.app_receipt([receipts.purchase(PAY_6, transaction_id=new_transaction_id())])
            for _ in range(count)]
    start = threading.Barrier(count, timeout=30)

    def post(receipt):
        start.wait()
        return api.verify(receipt, user_id=user_id)

    with ThreadPoolExecutor(count) as pool:
        for answer in pool.map(post, made):
            assert_verify_answer(answer, "delivered")
    assert open_fastcgi_connections(run_dir) > ACCEPT_THREADS, "nginx kept more connections than there are threads"

    # A request stuck behind an idle connection would wait for nginx's 120 s timeout: 10 s tells it apart.
    for _ in range(3 * count):
        assert api.get("/v1/version", timeout=10).status_code == 200

"""Exactly once across a MariaDB Galera cluster (`scripts/stack up --galera 3 --instances 2`).

Each test posts a burst of purchases, receipts and StoreKit 2 JWS, every one
through both iap-fcgi instances at the same moment (FastCGI straight to each
instance's socket: instance 1 writes through node 1, instance 2 through node 2,
so the two requests of a purchase race on two nodes and one loses Galera's
certification). A fault may strike mid-burst. Then, as clients do, what was
answered `retry_later` is posted again, `iapctl retry-pending` runs, and every
node must hold the same truth: no transaction delivered twice, every answered
delivery stored, one order per transaction, every audit row, the events, and
equal row counts and checksums. Each test prints its figures (scripts/test
shows them): requests, certification failures, transactions run again, and
`retry_later` answers.
"""
import json
import os
import re
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import fastcgi_client
from invariants import Ledger, assert_events_follow_transactions
from support import PAY_6, new_user_id, wait_until

CERTS = Path(os.environ.get("IAP_RUN", "/tmp/iap")) / "certs"
REPO = Path(__file__).resolve().parents[2]
STACK_SCRIPT = REPO / "scripts" / "stack"
IAPCTL = REPO / ".build" / "release" / "iapctl"
SQL_DIR = REPO / "sql"
PURCHASES = 120           # per burst: half receipts, half JWS
CLIENT_THREADS = 16       # purchases in flight at once (each posted twice)
TABLES = ("orders", "receipts", "transactions", "events")
# iap-fcgi's log line for a database transaction that lost and runs again (DeliveryTransaction.swift).
RETRY_LINE = re.compile(r"database: transaction lost")
# A client waits as long as nginx does for iap-fcgi (fastcgi_read_timeout 120s); a fault may hold an
# answer for several seconds (Galera evicts a dead node after its suspect timeout, PT5S by default).
fastcgi_client.TIMEOUT_SECONDS = 120


class Purchase:
    """One purchase and the document that proves it."""

    def __init__(self, receipts, signer, index):
        self.user_id = new_user_id()
        if index % 2 == 0:
            purchase = receipts.purchase(PAY_6)
            self.transaction_id = purchase["transaction_id"]
            self.route, self.field = "/v1/receipts/verify", "receipt_data"
            self.document = receipts.app_receipt([purchase])
        else:
            payload = signer.transaction(PAY_6)
            self.transaction_id = payload["transactionId"]
            self.route, self.field = "/v1/transactions/verify", "signed_transaction"
            self.document = signer.sign(payload, str(CERTS))

    def body(self):
        return json.dumps({self.field: self.document, "user_id": self.user_id}).encode()


class LedgerAnswer:
    """What Ledger.record reads of an answer (a FastCGI answer, or None when the connection failed)."""

    def __init__(self, answer):
        self.status_code = answer.status
        self._body = answer.json()

    def json(self):
        return self._body


def post(socket_path, purchase, latencies):
    started = time.monotonic()
    try:
        answer = fastcgi_client.request_once(socket_path, "POST", purchase.route, body=purchase.body())
    except OSError:
        return None
    finally:
        latencies.append(time.monotonic() - started)
    return None if answer is None else LedgerAnswer(answer)


def post_through_both(instance_sockets, purchase, ledger, latencies):
    """The purchase posted to every instance at the same moment."""
    start = threading.Barrier(len(instance_sockets))

    def one(socket_path):
        start.wait()
        ledger.record(purchase.document, post(socket_path, purchase, latencies), purchase.user_id)
    threads = [threading.Thread(target=one, args=(path,)) for path in instance_sockets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


class Cluster:
    """The nodes as their administrator sees them, and the service's retries."""

    def __init__(self, nodes, run_dir):
        self.nodes = nodes
        self.sockets = os.environ["IAP_GALERA_SOCKETS"].split()
        self.instance_sockets = [str(run_dir / f"iap-fcgi-{i}.sock") for i in range(1, int(os.environ["IAP_INSTANCES"]) + 1)]
        self.run_dir = run_dir

    def root_sql(self, node, sql):
        result = subprocess.run(["mariadb", "--no-defaults", f"--socket={self.sockets[node - 1]}", "--user=root",
                                 "--batch", "--skip-column-names", "--connect-timeout=2", "-e", sql],
                                capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, f"node {node}: {sql!r}: {result.stderr}"
        return [line.split("\t") for line in result.stdout.splitlines()]

    def status(self, node, name):
        rows = self.root_sql(node, f"SHOW GLOBAL STATUS LIKE '{name}'")
        return rows[0][1] if rows else None

    def synced(self):
        try:
            return all(self.status(k, "wsrep_local_state_comment") == "Synced"
                       and self.status(k, "wsrep_cluster_size") == str(len(self.sockets))
                       for k in range(1, len(self.sockets) + 1))
        except AssertionError:
            return False

    def wait_synced(self, seconds=120):
        wait_until(self.synced, seconds, "every node Synced in a cluster of all nodes")

    def certification_failures(self):
        """By node: transactions Galera aborted there, certification failures and brute-force aborts."""
        return [sum(int(self.status(k, name) or 0) for name in ("wsrep_local_cert_failures", "wsrep_local_bf_aborts"))
                for k in range(1, len(self.sockets) + 1)]

    def certification_failures_since(self, before):
        """Summed over the nodes; a node restarted since counts from its restart."""
        return sum(now - then if now >= then else now
                   for now, then in zip(self.certification_failures(), before))

    def service_retries(self):
        return sum(len(RETRY_LINE.findall(log.read_text(errors="replace")))
                   for log in (self.run_dir / "logs").glob("iap-fcgi-*.log"))

    def assert_nodes_agree(self):
        """Equal row counts and checksums of every table on every node (nothing writes now)."""
        tables = ", ".join(TABLES)
        seen = {}
        for k in range(1, len(self.sockets) + 1):
            checksums = tuple(tuple(row) for row in self.root_sql(k, f"CHECKSUM TABLE {', '.join('iap.' + t for t in TABLES)}"))
            counts = tuple(self.root_sql(k, "SELECT " + ", ".join(f"(SELECT COUNT(*) FROM iap.{t})" for t in TABLES))[0])
            seen[k] = (counts, checksums)
        assert len(set(seen.values())) == 1, f"the nodes differ ({tables}): {seen}"


@pytest.fixture
def cluster(nodes, run_dir):
    cluster = Cluster(nodes, run_dir)
    cluster.wait_synced()
    return cluster


def post_burst(cluster, instance_sockets, receipts, signer, ledger, latencies, fault):
    """CLIENT_THREADS clients post new purchases, each through both instances at once: PURCHASES of
    them, and with a fault, for as long as the fault lasts (it strikes 0.5 s in; `fault(cluster, ledger)`
    returns the purchases it posted itself). Returns them all."""
    purchases, lock = [], threading.Lock()
    fault_over = threading.Event()
    if fault is None:
        fault_over.set()
    else:
        def strike():
            time.sleep(0.5)
            try:
                posted = fault(cluster, ledger)
                with lock:
                    purchases.extend(posted)
            finally:
                fault_over.set()
        threading.Thread(target=strike).start()

    def client():
        while True:
            with lock:
                if len(purchases) >= PURCHASES and fault_over.is_set():
                    return
                purchase = Purchase(receipts, signer, len(purchases))
                purchases.append(purchase)
            post_through_both(instance_sockets, purchase, ledger, latencies)
    clients = [threading.Thread(target=client) for _ in range(CLIENT_THREADS)]
    for thread in clients:
        thread.start()
    for thread in clients:
        thread.join()
    fault_over.wait()
    return purchases


def run_burst(name, cluster, instance_sockets, receipts, signer, iapctl, fault=None):
    """The burst with `fault(cluster, ledger)` striking mid-burst, the clients' re-posts, retry-pending,
    and the checks on every node. Returns the ledger, the certification failures (and brute-force
    aborts) and the transactions run again."""
    ledger = Ledger(name)
    failures_before, retries_before = cluster.certification_failures(), cluster.service_retries()
    started = time.monotonic()
    latencies = []
    purchases = post_burst(cluster, instance_sockets, receipts, signer, ledger, latencies, fault)
    burst_seconds = time.monotonic() - started
    cluster.wait_synced()

    # Clients post again what was not settled (retry_later, or no answer), until it is.
    for _ in range(5):
        settled = {row["transaction_id"] for row in cluster.nodes[0].query(
            "SELECT transaction_id FROM transactions WHERE state = 'delivered' AND transaction_id IN ("
            + ", ".join(["%s"] * len(purchases)) + ")", *[p.transaction_id for p in purchases])}
        unsettled = [p for p in purchases if p.transaction_id not in settled]
        if not unsettled:
            break
        with ThreadPoolExecutor(max_workers=CLIENT_THREADS) as pool:
            list(pool.map(lambda p: post_through_both(instance_sockets, p, ledger, latencies), unsettled))
    output = iapctl("retry-pending", "--minimum-age", "0").strip().splitlines()
    ledger.note(f"retry-pending: {output[-1] if output else 'nothing'}")

    failures = cluster.certification_failures_since(failures_before)
    retries = cluster.service_retries() - retries_before
    ledger.note(f"certification failures {failures}, transactions run again {retries}")
    print(f"\n{name}: {len(purchases)} purchases in {burst_seconds:.1f} s, {ledger.requests} requests, {failures} certification failures (and brute-force aborts), "
          f"{retries} database transactions run again, {ledger.statuses['retry_later']} retry_later, "
          f"{ledger.statuses['connection_error']} without an answer, slowest answer {max(latencies):.1f} s, "
          f"answers {dict(ledger.statuses)}")
    assert ledger.statuses["connection_error"] == 0, "every request is answered"

    expected = [p.transaction_id for p in purchases]
    for node, database in enumerate(cluster.nodes, start=1):
        try:
            ledger.check(database, expected, write_counts=node == 1)
        except AssertionError as error:
            raise AssertionError(f"on node {node}: {error}") from None
        assert_events_follow_transactions(database, expected)
    cluster.assert_nodes_agree()
    return ledger, failures, retries


def failover_forced(cluster, instance, signer, ledger):
    """A purchase posted to `instance` while its first node is out: answered `delivered`, it went
    through another node. Returns it."""
    purchase = Purchase(None, signer, 1)
    answer = post(cluster.instance_sockets[instance - 1], purchase, [])
    ledger.record(purchase.document, answer, purchase.user_id)
    assert answer is not None and answer.json().get("status") == "delivered", \
        f"instance {instance} did not fail over: {answer and answer.json()}"
    return purchase


def test_each_purchase_posted_through_both_instances_at_once_is_delivered_once(
        cluster, instance_sockets, receipts, signer, iapctl):
    ledger, failures, retries = run_burst("Galera: each purchase through both instances at once", cluster,
                                          instance_sockets, receipts, signer, iapctl)
    assert ledger.statuses["delivered"] >= PURCHASES, ledger.statuses
    # 120 purchases, each racing through two nodes from a barrier: 6 to 37 conflicts a run so far.
    assert failures >= 1, "no certification conflict: the burst did not race"


def test_a_node_killed_mid_burst_and_restarted(cluster, instance_sockets, receipts, signer, iapctl, stack):
    def kill_node_one(cluster, ledger):
        stack("kill mariadb-1")   # instance 1's first node: it fails over to node 2
        posted = [failover_forced(cluster, 1, signer, ledger)]
        # Started again (it rejoins by IST) while the burst ends; the checks wait until it is Synced.
        subprocess.Popen([str(STACK_SCRIPT), "start", "mariadb-1"], env=os.environ, stdout=subprocess.DEVNULL)
        return posted
    run_burst("Galera: node 1 SIGKILLed mid-burst, restarted", cluster, instance_sockets, receipts, signer,
              iapctl, fault=kill_node_one)


def test_a_node_isolated_for_ten_seconds(cluster, instance_sockets, receipts, signer, iapctl):
    def isolate_node_two(cluster, ledger):
        # Instance 2's first node loses the cluster: its statements answer 1047 until it is back.
        isolated = time.monotonic()
        cluster.root_sql(2, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'")
        wait_until(lambda: cluster.status(2, "wsrep_cluster_status") != "Primary", 60,
                   "node 2 out of the primary component", interval=0.1)
        posted = [failover_forced(cluster, 2, signer, ledger)]
        time.sleep(max(0.0, 10 - (time.monotonic() - isolated)))   # the fault lasts 10 s
        cluster.root_sql(2, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'")
        return posted
    run_burst("Galera: node 2 isolated for 10 s", cluster, instance_sockets, receipts, signer, iapctl,
              fault=isolate_node_two)


def iapctl_on_node(port, *arguments):
    """The release iapctl against one node only, its output (stdout and stderr) in a pipe."""
    return subprocess.Popen([str(IAPCTL), *arguments], env={**os.environ, "IAP_DB_HOST": f"127.0.0.1:{port}"},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def hold_lock(database, name):
    """The lock `name` of cluster_locks taken by the test itself, as another run would hold it."""
    database.execute("INSERT INTO cluster_locks (name, holder, acquired_at, expires_at) VALUES "
                     "(%s, 'galera-test', UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 600 SECOND)", name)


def release_lock(database, name):
    assert database.execute("DELETE FROM cluster_locks WHERE name = %s AND holder = 'galera-test'", name) == 1


def test_admin_jobs_on_two_nodes_at_once_exclude_each_other(cluster, instance_sockets, receipts, simulator,
                                                              node_ports):
    """`iapctl retry-pending` and `iapctl migrate` against two nodes: the lock is a row of
    `cluster_locks` (GET_LOCK is local to a node). A run finds the lock another node's run holds (the
    test holds it on node 3, so the interleaving is forced, not hoped for); and two runs started at the
    same moment, however they interleave, ask Apple once per receipt and both end well."""
    simulator.control(force_status=21005)   # Apple unavailable: every receipt is left for retry-pending
    purchases = [Purchase(receipts, None, 2 * i) for i in range(20)]
    for index, purchase in enumerate(purchases):
        answer = post(instance_sockets[index % 2], purchase, [])
        assert answer is not None and answer.json()["status"] == "retry_later", answer and answer.json()
    simulator.reset()
    simulator.reset_stats()
    holder = cluster.nodes[2]

    hold_lock(holder, "retry_pending")
    run = iapctl_on_node(node_ports[0], "retry-pending", "--minimum-age", "0")
    output = run.communicate(timeout=120)[0]
    release_lock(holder, "retry_pending")
    assert run.returncode == 0 and "another retry-pending run is under way" in output, output
    assert simulator.requests_to("production") == 0, f"Apple asked while another run held the lock: {output}"

    runs = [iapctl_on_node(port, "retry-pending", "--minimum-age", "0") for port in node_ports[:2]]
    outputs = [run.communicate(timeout=120)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    calls = simulator.requests_to("production")
    assert calls == len(purchases), f"Apple was asked {calls} times about {len(purchases)} receipts: {outputs}"
    expected = [purchase.transaction_id for purchase in purchases]
    for database in cluster.nodes:
        assert database.delivered_count(expected) == len(expected)

    # migrate waits for the lock: held by the test until the run says it waits, then released on node 2.
    hold_lock(holder, "migrate")
    run = iapctl_on_node(node_ports[0], "migrate", "--sql-dir", str(SQL_DIR))
    try:
        first_line = run.stdout.readline()
        assert "waiting up to 60 s" in first_line, first_line
    finally:
        release_lock(cluster.nodes[1], "migrate")
    output = first_line + run.communicate(timeout=120)[0]
    assert run.returncode == 0 and "schema is up to date" in output, output

    migrations = [iapctl_on_node(port, "migrate", "--sql-dir", str(SQL_DIR)) for port in node_ports[:2]]
    outputs = [run.communicate(timeout=120)[0] for run in migrations]
    assert [run.returncode for run in migrations] == [0, 0], outputs
    assert all("schema is up to date" in output for output in outputs), outputs
    for node, database in enumerate(cluster.nodes, start=1):
        assert database.scalar("SELECT COUNT(*) FROM cluster_locks") == 0, f"node {node}: a lock was left held"


def test_each_notification_posted_through_both_instances_at_once_applies_once(
        cluster, instance_sockets, receipts, signer):
    """Apple sends a notification again while the first is being applied, and each may reach another
    instance, so another node: one row per notificationUUID and one effect, on every node."""
    import notifications as simulated
    ledger = Ledger("Galera: REFUND notifications through both instances at once")
    purchases = [Purchase(receipts, signer, 2 * i + 1) for i in range(40)]   # JWS, delivered first
    for index, purchase in enumerate(purchases):
        ledger.record(purchase.document, post(instance_sockets[index % 2], purchase, []), purchase.user_id)
    refunds = []
    for purchase in purchases:
        payload = signer.transaction(PAY_6, transaction_id=purchase.transaction_id, revocation_ms=int(time.time() * 1000))
        jws, notification = simulated.signed_notification(str(CERTS), "REFUND", payload)
        refunds.append((json.dumps({"signedPayload": jws}).encode(), notification["notificationUUID"]))
    answers, lock = [], threading.Lock()

    def both(refund):
        start = threading.Barrier(len(instance_sockets))

        def one(socket_path):
            start.wait()
            answer = fastcgi_client.request_once(socket_path, "POST", "/v1/notifications/apple", body=refund[0])
            with lock:
                answers.append(answer.status)
        threads = [threading.Thread(target=one, args=(path,)) for path in instance_sockets]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    with ThreadPoolExecutor(max_workers=CLIENT_THREADS) as pool:
        list(pool.map(both, refunds))

    assert answers.count(200) == len(answers), f"answers {sorted(set(answers))}: Apple would send them again"
    ids = [purchase.transaction_id for purchase in purchases]
    uuids = [uuid for _, uuid in refunds]
    for node, database in enumerate(cluster.nodes, start=1):
        assert database.scalar(f"SELECT COUNT(*) FROM notifications WHERE notification_uuid IN "
                               f"({', '.join(['%s'] * len(uuids))})", *uuids) == len(uuids), f"node {node}"
        states = {row["state"] for row in database.query(
            f"SELECT state FROM transactions WHERE transaction_id IN ({', '.join(['%s'] * len(ids))})", *ids)}
        assert states == {"refunded"}, f"node {node}: {states}"
        assert_events_follow_transactions(database, ids)
        taken_back = database.scalar(f"SELECT COUNT(*) FROM events WHERE type = 'refunded' AND transaction_id IN "
                                     f"({', '.join(['%s'] * len(ids))})", *ids)
        assert taken_back == len(ids), f"node {node}: {taken_back} refunded events for {len(ids)} refunds"
    cluster.assert_nodes_agree()
    print(f"\n{ledger.name}: {len(answers)} notifications posted, all 200, one row and one effect each")

"""Fixtures of the end-to-end suite.

The suite runs against a stack started by `scripts/stack up`, with the stack's
environment exported: `eval "$(scripts/stack env)"`. Nothing here starts or
skips anything: when the stack is not there, every test fails and says why.
"""
import importlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from support import Api, Database, Simulator, wait_until

REPO = Path(__file__).resolve().parents[2]
STACK_SCRIPT = REPO / "scripts" / "stack"
IAPCTL = REPO / ".build" / "release" / "iapctl"
SIMULATOR_DIR = REPO / "Tests" / "Simulator"
sys.path.insert(0, str(SIMULATOR_DIR))

# The service reads operator settings within 5 s (ServiceSettings waits for them to show).
SETTINGS_REFRESH_SECONDS = 6
SETTINGS_DEFAULTS = {"review_version": "", "sandbox_users": ""}


# Tests marked outage("<daemon>") stop or restart that daemon of the stack.
# They run last, the simulator's before MariaDB's, so whatever a restart leaves
# behind shows in the tests about that restart and not in every test after them.
OUTAGE_ORDER = {"simulator": 1, "nginx": 2, "iap-fcgi": 3, "mariadb": 4}
# Tests marked runs_last look at what the whole run produced (every error answer,
# every log line): they run after everything else, the outages included.
RUNS_LAST_RANK = 5


def pytest_configure(config):
    config.addinivalue_line("markers", "runs_last: checks what the whole run produced; runs after every other test")


def pytest_sessionstart(session):
    """fault-counts.txt holds the counts of this run only (invariants.py appends to it)."""
    run = os.environ.get("IAP_RUN")
    if run and Path(run).is_dir():
        (Path(run) / "fault-counts.txt").unlink(missing_ok=True)


def pytest_collection_modifyitems(items):
    def rank(item):
        if item.get_closest_marker("runs_last") is not None:
            return RUNS_LAST_RANK
        marker = item.get_closest_marker("outage")
        return 0 if marker is None else OUTAGE_ORDER[marker.args[0]]
    items.sort(key=rank)


def required_env(name):
    value = os.environ.get(name)
    if value is None:
        pytest.fail(f"{name} is not set: start the stack with `scripts/stack up` and export its environment "
                    f"with `eval \"$(scripts/stack env)\"` before running the suite", pytrace=False)
    return value


@pytest.fixture(scope="session")
def base_url():
    """The service through nginx, e.g. http://127.0.0.1:8090."""
    url = os.environ.get("IAP_BASE_URL")
    if not url and os.environ.get("IAP_HTTP_PORT"):
        url = f"http://127.0.0.1:{os.environ['IAP_HTTP_PORT']}"
    return url or required_env("IAP_BASE_URL")


@pytest.fixture(scope="session")
def run_dir():
    """The stack's run directory ($IAP_RUN): logs/, pids/, certs/."""
    return Path(required_env("IAP_RUN"))


@pytest.fixture(scope="session")
def api(base_url):
    try:
        requests.get(base_url + "/v1/health", timeout=10)
    except requests.RequestException as error:
        pytest.fail(f"the service is not reachable at {base_url}: {error}", pytrace=False)
    return Api(base_url)


@pytest.fixture(scope="session")
def db():
    """A pymysql connection (autocommit) to the stack's database, behind small query helpers."""
    connect_args = dict(host=required_env("IAP_DB_HOST"), port=int(required_env("IAP_DB_PORT")),
                        user=required_env("IAP_DB_USER"), password=required_env("IAP_DB_PASSWORD"),
                        database=required_env("IAP_DB_NAME"))
    try:
        database = Database(**connect_args)
    except Exception as error:  # pymysql raises several unrelated types on connect
        pytest.fail(f"the stack's MariaDB is not reachable at {connect_args['host']}:{connect_args['port']}: "
                    f"{error}", pytrace=False)
    yield database
    database.close()


@pytest.fixture(scope="session")
def simulator():
    sim = Simulator(required_env("SIM_CONTROL_PORT"))
    try:
        sim.stats()
    except requests.RequestException as error:
        pytest.fail(f"the App Store simulator's control port is not reachable: {error}", pytrace=False)
    return sim


@pytest.fixture(scope="session")
def google():
    """The Google Play double's control URL (Tests/Simulator/googleplay_sim.py): purchases, push signing, calls."""
    return required_env("GOOGLE_SIM_CONTROL_URL")


@pytest.fixture(scope="session")
def receipts():
    """Tests/Simulator/receipts.py: makes the receipts the simulator accepts."""
    return importlib.import_module("receipts")


@pytest.fixture(scope="session")
def create_order(api):
    """create_order(user_id, product_id=PAY_6, **fields) -> the 201 answer of POST /v1/orders."""
    return api.create_order


@pytest.fixture(scope="session")
def stack():
    """stack("stop mariadb") runs `scripts/stack stop mariadb` against this suite's stack;
    stack("start iap-fcgi", IAP_CONSUMPTION="off") sets variables over the suite's environment for that
    run (scripts/stack hands IAP_* ones to iap-fcgi; an empty one is unset)."""
    assert STACK_SCRIPT.exists(), f"{STACK_SCRIPT} is missing"

    def run(command, **extra_env):
        result = subprocess.run([str(STACK_SCRIPT), *command.split()], cwd=REPO, env={**os.environ, **extra_env},
                                capture_output=True, text=True, timeout=180)
        assert result.returncode == 0, (
            f"scripts/stack {command} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
        return result.stdout
    return run


@pytest.fixture(scope="session")
def iapctl():
    """iapctl("review-version", "1.4.0") runs the release iapctl with the stack's IAP_DB_* environment."""
    assert IAPCTL.exists(), f"{IAPCTL} is missing: build it with `swift build -c release`"

    def run(*arguments):
        result = subprocess.run([str(IAPCTL), *arguments], cwd=REPO, env=os.environ,
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, (
            f"iapctl {' '.join(arguments)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
        return result.stdout
    return run


class ServiceSettings:
    """The operator switches in the `settings` table, applied and waited for
    until the service has read them."""

    def __init__(self, db, api):
        self.db = db
        self.api = api

    def apply(self, review_version=None, sandbox_users=None):
        """Writes the given settings, then returns once the service uses them."""
        changes = {name: value for name, value in
                   (("review_version", review_version), ("sandbox_users", sandbox_users)) if value is not None}
        self._write_and_wait(changes)

    def restore_defaults(self):
        """review_version and sandbox_users back to '' (waiting for the service) when a test changed them."""
        changes = {name: value for name, value in SETTINGS_DEFAULTS.items() if self.db.setting(name) != value}
        if changes:
            self._write_and_wait(changes)

    def _write_and_wait(self, changes):
        """The service reads both settings in one snapshot, and /v1/version shows its review_version: a
        sandbox_users change is written with a review_version no one uses, which shows once that snapshot
        is in use; then review_version gets its value and is waited for in turn."""
        expected = changes.get("review_version", self.db.setting("review_version"))
        if "sandbox_users" in changes:
            ServiceSettings._probes += 1
            probe = f"1.{ServiceSettings._probes}.{os.getpid()}-settings-probe"
            self.db.set_setting("sandbox_users", changes["sandbox_users"])
            self.db.set_setting("review_version", probe)
            self._wait_for_review_version(probe)
        self.db.set_setting("review_version", expected)
        self._wait_for_review_version(expected)

    _probes = 0

    def _wait_for_review_version(self, expected):
        wait_until(lambda: self.api.version()["review_version"] == expected, SETTINGS_REFRESH_SECONDS + 1,
                   f"GET /v1/version showing review_version {expected!r}")


@pytest.fixture(scope="session")
def service_settings(db, api):
    return ServiceSettings(db, api)


@pytest.fixture(autouse=True)
def clean_slate(simulator, service_settings):
    """Every test starts and ends with a simulator without faults, zeroed call
    counters, no review version and no sandbox users."""
    simulator.reset()
    simulator.reset_stats()
    service_settings.restore_defaults()
    yield
    simulator.reset()
    service_settings.restore_defaults()


@pytest.fixture
def iap_fcgi_pid(run_dir):
    """Reads the PID file of the running iap-fcgi."""
    def read():
        return int((run_dir / "pids" / "iap-fcgi.pid").read_text().split()[0])
    return read


@pytest.fixture
def simulator_restarted(stack):
    """The simulator stopped and started again: the service's kept-alive
    connections to it are closed, so its next call makes a new TLS handshake."""
    stack("stop simulator")
    stack("start simulator")


@pytest.fixture
def database_down(stack, api):
    """MariaDB stopped for the test's duration; started again (and the service
    healthy again) afterwards, whatever the test did."""
    stack("stop mariadb")
    try:
        yield
    finally:
        stack("start mariadb")
        wait_until(lambda: api.get("/v1/health").status_code == 200, 30,
                   "the service healthy again after MariaDB was started")

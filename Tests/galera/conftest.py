"""Fixtures of the Galera suite: a cluster of `scripts/stack up --galera N --instances M`.

Each node is read as a DBA would read it, with `wsrep_sync_wait = 1` so that a
read sees every commit the cluster has made (a plain read on one node can miss
a commit made through another). Nothing here starts or skips anything.
"""
import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "Tests" / "e2e"))
sys.path.insert(0, str(REPO / "Tests" / "Simulator"))

from support import Database, Simulator  # noqa: E402

STACK_SCRIPT = REPO / "scripts" / "stack"
IAPCTL = REPO / ".build" / "release" / "iapctl"


def required_env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: start the cluster with `scripts/stack up --galera 3 --instances 2` and "
                    f"export its environment with `eval \"$(scripts/stack env)\"`", pytrace=False)
    return value


@pytest.fixture(scope="session")
def run_dir():
    return Path(required_env("IAP_RUN"))


@pytest.fixture(scope="session")
def node_ports():
    ports = [int(port) for port in required_env("IAP_GALERA_PORTS").split()]
    assert len(ports) >= 3, f"the Galera suite needs 3 nodes or more, the stack has {ports}"
    return ports


@pytest.fixture(scope="session")
def nodes(node_ports):
    """One Database per node, in node order, reading with wsrep_sync_wait = 1."""
    databases = [Database(host="127.0.0.1", port=port, user=required_env("IAP_DB_USER"),
                          password=required_env("IAP_DB_PASSWORD"), database=required_env("IAP_DB_NAME"),
                          init_command="SET SESSION wsrep_sync_wait = 1") for port in node_ports]
    yield databases
    for database in databases:
        database.close()


@pytest.fixture(scope="session")
def instance_sockets(run_dir):
    count = int(required_env("IAP_INSTANCES"))
    assert count >= 2, f"the Galera suite needs 2 iap-fcgi instances or more, the stack has {count}"
    return [str(run_dir / f"iap-fcgi-{i}.sock") for i in range(1, count + 1)]


@pytest.fixture(scope="session")
def simulator():
    return Simulator(required_env("SIM_CONTROL_PORT"))


@pytest.fixture(scope="session")
def receipts():
    return importlib.import_module("receipts")


@pytest.fixture(scope="session")
def signer():
    return importlib.import_module("signed_data")


@pytest.fixture(scope="session")
def stack():
    def run(command):
        result = subprocess.run([str(STACK_SCRIPT), *command.split()], cwd=REPO, env=os.environ,
                                capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, f"scripts/stack {command}: {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result.stdout
    return run


@pytest.fixture(scope="session")
def iapctl(node_ports):
    """The release iapctl, given every node as IAP_DB_HOST (node 2 first: not the one the burst kills)."""
    hosts = ",".join(f"127.0.0.1:{port}" for port in node_ports[1:] + node_ports[:1])

    def run(*arguments):
        result = subprocess.run([str(IAPCTL), *arguments], cwd=REPO, env={**os.environ, "IAP_DB_HOST": hosts},
                                capture_output=True, text=True, timeout=120)
        assert result.returncode == 0, f"iapctl {' '.join(arguments)}: {result.returncode}\n{result.stdout}\n{result.stderr}"
        return result.stdout
    return run


@pytest.fixture(autouse=True)
def clean_simulator(simulator):
    simulator.reset()
    yield
    simulator.reset()

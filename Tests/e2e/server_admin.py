"""The stack's MariaDB as its administrator (root over the unix socket): server
variables the service cannot set itself, and the sessions the service holds.
Used by the tests that change the server under the service and put it back."""
import os
import subprocess
from contextlib import contextmanager


def root_sql(sql):
    """Runs `sql` as root over the stack's socket; returns the rows as lists of strings."""
    socket = os.environ.get("IAP_MARIADB_SOCKET")
    assert socket, "IAP_MARIADB_SOCKET is not set: export the stack's environment (scripts/stack env)"
    result = subprocess.run(["mariadb", "--no-defaults", f"--socket={socket}", "--user=root", "--batch",
                             "--skip-column-names", "-e", sql], capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, f"mariadb as root: {sql!r} failed: {result.stderr}"
    return [line.split("\t") for line in result.stdout.splitlines()]


def global_value(name):
    return root_sql(f"SELECT @@GLOBAL.{name}")[0][0]


def status_value(name):
    """A global status counter, e.g. Prepared_stmt_count."""
    return int(root_sql(f"SHOW GLOBAL STATUS LIKE '{name}'")[0][1])


def end_service_sessions(spare_ids=()):
    """Ends every session of the service's user (`iap`) but `spare_ids`, as a failover
    would: the service opens new sessions, which take the server's current globals."""
    spared = {str(i) for i in spare_ids}
    for (session,) in root_sql("SELECT id FROM information_schema.processlist WHERE user = 'iap'"):
        if session not in spared:
            root_sql(f"KILL CONNECTION {session}")


@contextmanager
def globals_set(**values):
    """SET GLOBAL name = value for each keyword, put back as they were on exit."""
    before = {name: global_value(name) for name in values}
    try:
        for name, value in values.items():
            root_sql(f"SET GLOBAL {name} = {sql_literal(value)}")
        yield before
    finally:
        for name, value in before.items():
            root_sql(f"SET GLOBAL {name} = {sql_literal(value)}")


def sql_literal(value):
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return text if text.isdigit() else "'" + text.replace("'", "''") + "'"

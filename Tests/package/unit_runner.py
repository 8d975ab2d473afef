#!/usr/bin/env python3
"""Runs the packaged iap-fcgi in a Debian root as its systemd units say, for scripts/package-install-test
(the root is a chroot: no systemd runs there). What it takes from the installed units, and does as
systemd does:

- iap-fcgi.socket: ListenStream's unix socket, made once with SocketUser, SocketGroup, SocketMode and
  Backlog, and held across restarts (requests wait in its queue while the service restarts);
- iap-fcgi.service: EnvironmentFile (read by systemd's rules, not a shell's), User, Group,
  SupplementaryGroups (and the user's own groups), RuntimeDirectory with its mode and
  RuntimeDirectoryPreserve, each ExecStartPre in turn (a failing one fails the start; "-" ignores the
  failure, "+" runs as root), then ExecStart with the socket as standard input; Restart=on-failure
  (at most 5 starts in 10 s, then it gives up, as systemd's default start limit does).

Usage: unit_runner.py ROOT LOG. SIGHUP restarts the service (what `systemctl restart` or the postinst's
try-restart does), reading the units and the env file again; SIGTERM stops it and exits. Each step is
a line in LOG (the journal), e.g. "runner: started iap-fcgi pid 123".
"""
import grp
import os
import pwd
import shlex
import signal
import socket
import subprocess
import sys
import time

UNIT_DIR = "lib/systemd/system"
START_LIMIT = (5, 10.0)   # starts, seconds: systemd's StartLimitBurst and StartLimitIntervalSec


def parse_unit(path):
    """{(section, key): [values]} of a unit file (comments and blank lines skipped)."""
    values = {}
    section = None
    with open(path) as unit:
        for line in unit:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            if line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
                continue
            key, _, value = line.partition("=")
            values.setdefault((section, key.strip()), []).append(value.strip())
    return values


def append_tracking_trailing_space(characters, trailing_start, c, space):
    """Appends c; returns where the run of spaces at the end starts (None: it ends in another character)."""
    characters.append(c)
    if not space:
        return None
    return len(characters) - 1 if trailing_start is None else trailing_start


def parse_environment_file(text):
    """systemd's EnvironmentFile= rules (src/basic/env-file.c): NAME=value, the value as written to the end
    of the line (trailing spaces dropped, a backslash escapes), or in '...' (literal) or "..." (a
    backslash escapes only " \\ ` $); # and ; start comment lines."""
    variables = {}
    state, name, value, name_end, value_end = "pre_key", [], [], None, None

    def push():
        key = "".join(name[:name_end] if name_end is not None else name)
        if key and not key[0].isdigit() and all(c.isascii() and (c.isalnum() or c == "_") for c in key):
            variables[key] = "".join(value[:value_end] if value_end is not None else value)

    for c in text:
        newline = c in "\n\r"
        space = newline or c in " \t"
        if state == "pre_key":
            if c in "#;":
                state = "comment"
            elif not space:
                state, name, value, name_end, value_end = "key", [c], [], None, None
        elif state == "key":
            if newline:
                state = "pre_key"
            elif c == "=":
                state = "pre_value"
            else:
                name_end = append_tracking_trailing_space(name, name_end, c, space)
        elif state == "pre_value":
            if newline:
                push()
                state = "pre_key"
            elif c == "'":
                state = "single"
            elif c == '"':
                state = "double"
            elif c == "\\":
                state = "value_escape"
            elif not space:
                state = "value"
                value.append(c)
        elif state == "value":
            if newline:
                push()
                state = "pre_key"
            elif c == "\\":
                state, value_end = "value_escape", None
            else:
                value_end = append_tracking_trailing_space(value, value_end, c, space)
        elif state == "value_escape":
            state = "value"
            if not newline:
                value.append(c)
        elif state == "single":
            if c == "'":
                state = "pre_value"
            else:
                value.append(c)
        elif state == "double":
            if c == '"':
                state = "pre_value"
            elif c == "\\":
                state = "double_escape"
            else:
                value.append(c)
        elif state == "double_escape":
            state = "double"
            if c in '"\\`$':
                value.append(c)
            elif not newline:
                value.extend(["\\", c])
        elif state == "comment":
            if newline:
                state = "pre_key"
    if state not in ("pre_key", "key", "comment"):
        push()
    return variables


class Root:
    """Users and groups as the root's own /etc/passwd and /etc/group have them."""

    def __init__(self, path):
        self.path = path

    def _entries(self, name):
        with open(os.path.join(self.path, "etc", name)) as table:
            return [line.rstrip("\n").split(":") for line in table if line.strip()]

    def uid(self, user):
        return next(int(e[2]) for e in self._entries("passwd") if e[0] == user)

    def user_gid(self, user):
        return next(int(e[3]) for e in self._entries("passwd") if e[0] == user)

    def gid(self, group):
        return next(int(e[2]) for e in self._entries("group") if e[0] == group)

    def groups_of(self, user):
        return [int(e[2]) for e in self._entries("group") if user in e[3].split(",")]

    def host_path(self, path):
        return os.path.join(self.path, path.lstrip("/"))


class Runner:
    def __init__(self, root, log):
        self.root = Root(root)
        self.log = log
        self.process = None
        self.starts = []
        self.failed = False
        socket_unit = parse_unit(self.root.host_path(f"{UNIT_DIR}/iap-fcgi.socket"))
        self.socket = self.listen(socket_unit)

    def say(self, text):
        self.log.write(f"runner: {text}\n")
        self.log.flush()

    def listen(self, unit):
        path = unit[("Socket", "ListenStream")][0]
        host_path = self.root.host_path(path)
        os.makedirs(os.path.dirname(host_path), mode=0o755, exist_ok=True)
        if os.path.exists(host_path):
            os.unlink(host_path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(host_path)
        user = unit.get(("Socket", "SocketUser"), ["root"])[0]
        group = unit.get(("Socket", "SocketGroup"), ["root"])[0]
        os.chown(host_path, self.root.uid(user), self.root.gid(group))
        os.chmod(host_path, int(unit.get(("Socket", "SocketMode"), ["0666"])[0], 8))
        listener.listen(int(unit.get(("Socket", "Backlog"), ["4096"])[0]))
        self.say(f"listening on {path} ({user}:{group})")
        return listener

    def start(self):
        """ExecStartPre in turn, then ExecStart; False when the start failed."""
        now = time.monotonic()
        self.starts = [t for t in self.starts if now - t < START_LIMIT[1]] + [now]
        if len(self.starts) > START_LIMIT[0]:
            self.say("start request repeated too quickly: gave up (failed)")
            self.failed = True
            return False
        unit = parse_unit(self.root.host_path(f"{UNIT_DIR}/iap-fcgi.service"))
        service = lambda key, default=None: unit.get(("Service", key), [default] if default is not None else [])
        environment = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
        for name in service("EnvironmentFile"):
            optional = name.startswith("-")
            try:
                with open(self.root.host_path(name.lstrip("-"))) as env_file:
                    environment.update(parse_environment_file(env_file.read()))
            except OSError as error:
                if not optional:
                    self.say(f"EnvironmentFile {name}: {error}: failed")
                    return False
        user = service("User", "root")[0]
        uid, gid = self.root.uid(user), self.root.gid(service("Group")[0]) if service("Group") else self.root.user_gid(user)
        groups = sorted({*self.root.groups_of(user), *(self.root.gid(g) for line in service("SupplementaryGroups")
                                                        for g in line.split())})
        for directory in service("RuntimeDirectory"):
            path = self.root.host_path(f"/run/{directory}")
            os.makedirs(path, exist_ok=True)
            os.chown(path, uid, gid)
            os.chmod(path, int(service("RuntimeDirectoryMode", "0755")[0], 8))
        for line in service("ExecStartPre"):
            prefix = line[:len(line) - len(line.lstrip("-+"))]
            command = shlex.split(line[len(prefix):])
            credentials = (0, 0, []) if "+" in prefix else (uid, gid, groups)
            result = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
                                    env=environment, preexec_fn=self.enter(*credentials))
            self.say(f"ExecStartPre {line}: exited {result.returncode}")
            if result.returncode != 0 and "-" not in prefix:
                self.say("start failed")
                return False
        command = shlex.split(service("ExecStart")[0])
        self.process = subprocess.Popen(command, stdin=self.socket.fileno(), stdout=self.log, stderr=self.log,
                                        env=environment, preexec_fn=self.enter(uid, gid, groups))
        self.say(f"started iap-fcgi pid {self.process.pid}")
        return True

    def enter(self, uid, gid, groups):
        root = self.root.path

        def in_child():
            signal.pthread_sigmask(signal.SIG_SETMASK, [])   # the runner's blocked signals are its own
            os.chroot(root)
            os.chdir("/")
            os.setgroups(groups)
            os.setgid(gid)
            os.setuid(uid)
        return in_child

    def stop(self, restarting):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.say(f"stopped iap-fcgi pid {self.process.pid}: exited {self.process.returncode}")
        self.process = None
        unit = parse_unit(self.root.host_path(f"{UNIT_DIR}/iap-fcgi.service"))
        preserve = unit.get(("Service", "RuntimeDirectoryPreserve"), ["no"])[0]
        if preserve == "yes" or (restarting and preserve == "restart"):
            return
        for directory in unit.get(("Service", "RuntimeDirectory"), []):
            subprocess.run(["rm", "-rf", self.root.host_path(f"/run/{directory}")])
            self.say(f"removed /run/{directory} (RuntimeDirectoryPreserve={preserve})")

    def restart_on_failure(self):
        """Restart=on-failure: a failed start or a non-zero exit starts it again after RestartSec=1s."""
        if self.failed or (self.process and self.process.poll() in (None, 0)):
            return
        if self.process:
            self.say(f"iap-fcgi exited {self.process.returncode}: restarting (Restart=on-failure)")
        self.process = None
        time.sleep(1)
        self.start()

    def run(self):
        watched = {signal.SIGHUP, signal.SIGTERM, signal.SIGCHLD}
        signal.pthread_sigmask(signal.SIG_BLOCK, watched)
        self.start()
        while True:
            received = signal.sigtimedwait(watched, 1.0)
            if received is None or received.si_signo == signal.SIGCHLD:
                self.restart_on_failure()
            elif received.si_signo == signal.SIGHUP:
                self.say("restart")
                self.stop(restarting=True)
                self.starts, self.failed = [], False
                self.start()
            elif received.si_signo == signal.SIGTERM:
                self.stop(restarting=False)
                self.socket.close()
                self.say("exit")
                return


def main():
    root, log_path = sys.argv[1:3]
    with open(log_path, "a") as log:
        Runner(root, log).run()


if __name__ == "__main__":
    main()

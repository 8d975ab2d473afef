"""Many verify requests posted at once, each on a connection of its own, and
what came back: for the overload e2e test and scripts/overload.

A plain asyncio HTTP/1.1 client (one request per connection, `Connection:
close`): tens of thousands of connections at once cost it a few hundred bytes
each, where a pooled client would queue them. Also reads a process's peak RSS.
"""
import asyncio
import json
import multiprocessing
import resource
import time
from collections import Counter
from dataclasses import dataclass, field

# Connections one client process opens at most: under the open files limit of this machine (20,000).
SOCKETS_PER_PROCESS = 8000


@dataclass
class Answer:
    """One request's outcome: HTTP status (0: no answer), headers, JSON body, seconds after the start."""
    status: int
    headers: dict
    body: dict
    seconds: float


@dataclass
class BurstResult:
    answers: list = field(default_factory=list)
    seconds: float = 0.0

    def by_class(self):
        """`200 delivered`, `503 retry_later`, `503 service_unavailable`, `no answer: ...`: how many of each."""
        classes = Counter()
        for answer in self.answers:
            if answer.status == 0:
                classes[f"no answer: {answer.body.get('error')}"] += 1
                continue
            what = answer.body.get("status") or (answer.body.get("error") or {}).get("code") or "?"
            classes[f"{answer.status} {what}"] += 1
        return classes

    def misfits(self):
        """Answers that are neither a 200 nor a 503 `retry_later` with Retry-After."""
        return [a for a in self.answers if not (
            a.status == 200 or (a.status == 503 and "retry-after" in a.headers and a.body.get("status") == "retry_later"))]


class LedgerResponse:
    """What invariants.Ledger.record reads of a requests.Response, for an Answer."""

    def __init__(self, answer):
        self.status_code = answer.status
        self._body = answer.body

    def json(self):
        return self._body


def raise_open_files_limit(wanted):
    """Raises this process's soft RLIMIT_NOFILE towards `wanted` (at most the hard limit); returns it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return max(soft, target)


def peak_rss_mib(pid):
    """VmHWM of /proc/PID/status (the peak resident set since the process started), in MiB."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


def verify_request(host, port, document):
    body = json.dumps(document).encode()
    head = (f"POST /v1/receipts/verify HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()
    return head + body


async def _post(host, port, payload, started, timeout, connect_slots):
    try:
        async with connect_slots:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
        try:
            writer.write(payload)
            raw = await asyncio.wait_for(reader.read(), timeout)
        finally:
            writer.close()
    except (OSError, asyncio.TimeoutError) as error:
        return Answer(0, {}, {"error": type(error).__name__}, time.monotonic() - started)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    try:
        status = int(lines[0].split()[1])
    except (IndexError, ValueError):
        return Answer(0, {}, {"error": "unreadable answer"}, time.monotonic() - started)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    try:
        document = json.loads(body) if body else {}
    except ValueError:
        document = {}
    return Answer(status, headers, document if isinstance(document, dict) else {}, time.monotonic() - started)


async def _burst(host, port, documents, timeout, connecting_at_once):
    payloads = [verify_request(host, port, document) for document in documents]
    connect_slots = asyncio.Semaphore(connecting_at_once)
    started = time.monotonic()
    answers = await asyncio.gather(*(_post(host, port, p, started, timeout, connect_slots) for p in payloads))
    return BurstResult(list(answers), time.monotonic() - started)


def _post_share(host, port, documents, timeout, connecting_at_once):
    raise_open_files_limit(len(documents) + 1024)
    return asyncio.run(_burst(host, port, documents, timeout, connecting_at_once))


def post_at_once(host, port, documents, timeout=180, connecting_at_once=1000):
    """POSTs every verify document at once, each on its own connection; waits for all answers (in order).
    `connecting_at_once` bounds only the connects in progress (the listen backlog), not the requests.
    Past `SOCKETS_PER_PROCESS` documents the clients are shared among processes (the open files limit)."""
    processes = max(1, -(-len(documents) // SOCKETS_PER_PROCESS))
    if processes == 1:
        return _post_share(host, port, documents, timeout, connecting_at_once)
    shares = [documents[index::processes] for index in range(processes)]
    with multiprocessing.get_context("fork").Pool(processes) as pool:
        results = pool.starmap(_post_share, [(host, port, share, timeout, connecting_at_once // processes)
                                             for share in shares])
    answers = [None] * len(documents)
    for index, result in enumerate(results):
        answers[index::processes] = result.answers
    return BurstResult(answers, max(result.seconds for result in results))

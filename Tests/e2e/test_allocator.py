"""iap-fcgi allocates through jemalloc (Sources/CMalloc, Server/HeapReturn.swift): with glibc's malloc,
the requests after a burst paid for its fragmented arenas. The service checks at start that jemalloc
serves malloc and sets it to return freed pages from background threads of its own; either failing
is logged, and the process then runs on the allocator's defaults, which these checks would catch."""
from pathlib import Path

from test_static_runtime import mapped_files


def thread_names(pid):
    return [Path(task, "comm").read_text().strip() for task in Path(f"/proc/{pid}/task").iterdir()]


def test_the_service_allocates_through_jemalloc_and_returns_memory_in_the_background(iap_fcgi_pid, run_dir):
    pid = iap_fcgi_pid()
    files = mapped_files(pid)
    assert any(Path(file).name.startswith("libjemalloc.so") for file in files), sorted(files)
    # jemalloc's background purging threads run only once the service has turned them on.
    assert "jemalloc_bg_thd" in thread_names(pid), sorted(set(thread_names(pid)))
    warnings = [line for line in (run_dir / "logs" / "iap-fcgi.log").read_text().splitlines()
                if line.startswith("iap-fcgi: memory:")]
    assert warnings == []


def test_the_service_threads_are_named_for_their_work(iap_fcgi_pid):
    """`top -H`, `ps -L` and `perf` show each thread's job (Support/Threads.swift), so that an operator
    can tell where the CPU goes: the accept threads, the receipt recorder, the Apple client, delivery."""
    names = thread_names(iap_fcgi_pid())
    for name in ("accept", "recorder", "apple-client", "delivery", "settings", "replay-audit"):
        assert name in names, sorted(set(names))
    assert names.count("accept") >= 2, sorted(names)

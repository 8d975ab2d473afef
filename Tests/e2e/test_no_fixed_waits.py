"""The end-to-end suite waits for conditions, not for fixed times: a `time.sleep(<seconds>)` on its own line
(not inside a loop that checks something between sleeps) waits for something asynchronous by guessing how
long it takes, which passes on a fast machine and races on a slow one. wait_until (support.py) polls the
condition instead, with a deadline. Sleeps of a named or computed duration (how long a fault lasts, pacing
a burst) are durations, not waits, and are left alone; so are the few literal durations listed here."""
import ast
from pathlib import Path

E2E = Path(__file__).resolve().parent

# (file, function): a literal sleep there is a duration the test imposes, not a wait for anything.
DURATIONS = {
    ("test_faults.py", "crash_and_restart"): "iap-fcgi stays killed for a second while the burst goes on",
}


def fixed_sleeps(path):
    """(function, line, source) of each time.sleep(<number>) outside any loop in the file."""
    found = []

    def visit(node, function, in_loop):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name, False)
                continue
            if isinstance(child, ast.Lambda):
                visit(child, function, False)
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute) and child.func.attr == "sleep"
                    and isinstance(child.func.value, ast.Name) and child.func.value.id == "time"
                    and len(child.args) == 1 and isinstance(child.args[0], ast.Constant) and not in_loop):
                found.append((function, child.lineno, ast.unparse(child)))
            visit(child, function, in_loop or isinstance(child, (ast.For, ast.While, ast.AsyncFor)))

    visit(ast.parse(path.read_text(), str(path)), "<module>", False)
    return found


def test_no_test_waits_a_fixed_time_for_something_asynchronous():
    waits = [f"{path.name}:{line} in {function}(): {source}"
             for path in sorted(E2E.glob("*.py"))
             for function, line, source in fixed_sleeps(path)
             if (path.name, function) not in DURATIONS]
    assert not waits, "fixed sleeps (wait for the condition with support.wait_until):\n" + "\n".join(waits)


def test_the_listed_durations_are_still_there():
    """An entry of DURATIONS that no longer matches a sleep would excuse the next one written there."""
    for (name, function), why in DURATIONS.items():
        assert any(found == function for found, _, _ in fixed_sleeps(E2E / name)), (name, function, why)

"""The reference in docs/ against the code it describes. No stack needed: it reads files only.

- docs/api.md, openapi.yaml and the routes the service serves (Sources/IAPCore/Route/Route.swift, each
  case of which Sources/IAPService/Route/Router.swift must dispatch) name the same routes, and api.md
  marks every route it describes that is not served yet as "(planned)".
- docs/configuration.md documents, once each, exactly the IAP_* variables the Swift code reads, and
  deploy/iap-fcgi.env.example offers every one the service reads (those of its "iapctl only" section
  excepted) and no other.
- The code, tests, scripts and packaging cite the reference in docs/, never the contract or domain notes
  that live outside the repository (a clone does not have them), and every docs/ page they cite exists.
"""

import re
import subprocess
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SOURCES = ROOT / "Sources"
ROUTE_SWIFT = SOURCES / "IAPCore" / "Route" / "Route.swift"
ROUTER_SWIFT = SOURCES / "IAPService" / "Route" / "Router.swift"

HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
# A route heading in api.md: "## POST /v1/orders: create an order", "### POST /v1/x (planned)".
ROUTE_HEADING = re.compile(r"^#{2,4} (" + "|".join(HTTP_METHODS) + r") (/\S+?)(?=[\s:]|$)(.*)$")
# A variable row in configuration.md: "| `IAP_DB_HOST` | ... |".
VARIABLE_ROW = re.compile(r"^\|\s*`(IAP_[A-Z0-9_]+)`\s*\|")
# A variable name as a whole Swift string literal: reader["IAP_DB_HOST"], getenv("IAP_ENV_FILE").
VARIABLE_LITERAL = re.compile(r'"(IAP_[A-Z0-9_]+)"')
# The paths whose files must cite docs/ only (README.md, the guide, links to docs/ itself).
CITING_PATHS = ("Sources", "Tests", "scripts", "clients", "deploy", "nginx", "sql", "Fuzz", "Benchmarks",
                "openapi.yaml", "Package.swift")
# The contract and the domain notes the project was built from: files outside the repository.
OUTSIDE_REFERENCE = re.compile(r"\b(?:API|DOMAIN)\.md\b")
# A page of the reference as the code cites it: docs/api.md, docs/apple.md.
DOCS_PAGE = re.compile(r"\bdocs/([a-z0-9_-]+\.md)\b")


def served_routes():
    """(method, path) of each case of `Route`, read from its `path` and `method` switches."""
    text = ROUTE_SWIFT.read_text()
    paths = dict(re.findall(r'case \.(\w+): return "(/[^"]*)"', text))
    methods = {}
    for cases, method in re.findall(r'case ((?:\.\w+,?\s*)+): return "([A-Z]+)"', text):
        for name in re.findall(r"\.(\w+)", cases):
            methods[name] = method
    assert paths, f"no route paths found in {ROUTE_SWIFT}"
    assert set(paths) == set(methods), f"Route cases without both a path and a method: {set(paths) ^ set(methods)}"
    router = ROUTER_SWIFT.read_text()
    undispatched = [name for name in paths if f".success(.{name})" not in router]
    assert not undispatched, f"Route cases the Router does not dispatch: {undispatched}"
    return {(methods[name], paths[name]) for name in paths}


def openapi_routes():
    spec = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    return {
        (method.upper(), path)
        for path, operations in spec["paths"].items()
        for method in operations
        if method.upper() in HTTP_METHODS
    }


def documented_routes():
    """(method, path) -> whether api.md marks it planned, from its route headings."""
    routes = {}
    for line in (DOCS / "api.md").read_text().splitlines():
        match = ROUTE_HEADING.match(line)
        if match:
            method, path, rest = match.groups()
            key = (method, path)
            assert key not in routes, f"docs/api.md has two headings for {method} {path}"
            routes[key] = "(planned)" in rest
    return routes


def test_every_openapi_operation_is_described_in_api_md():
    documented = documented_routes()
    missing = sorted(openapi_routes() - documented.keys())
    assert not missing, f"openapi.yaml operations with no heading in docs/api.md: {missing}"


def test_every_served_route_is_in_api_md_and_openapi():
    served = served_routes()
    documented = documented_routes()
    assert not sorted(served - documented.keys()), f"served, not in docs/api.md: {sorted(served - documented.keys())}"
    assert not sorted(served - openapi_routes()), f"served, not in openapi.yaml: {sorted(served - openapi_routes())}"
    marked_planned = sorted(route for route in served if documented[route])
    assert not marked_planned, f"served, but docs/api.md calls them planned: {marked_planned}"


def test_api_md_claims_no_route_the_service_does_not_serve():
    served = served_routes()
    claimed = {route for route, planned in documented_routes().items() if not planned}
    unserved = sorted(claimed - served)
    assert not unserved, f"docs/api.md describes these as working, the Router does not serve them: {unserved}"
    planned_in_openapi = sorted(openapi_routes() - served)
    assert not planned_in_openapi, f"openapi.yaml describes routes the Router does not serve: {planned_in_openapi}"


def documented_variable_rows():
    """(name, section heading) of each variable row of configuration.md."""
    rows = []
    section = ""
    for line in (DOCS / "configuration.md").read_text().splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif match := VARIABLE_ROW.match(line):
            rows.append((match.group(1), section))
    return rows


def documented_variables():
    names = [name for name, _ in documented_variable_rows()]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    assert not duplicates, f"docs/configuration.md documents these more than once: {duplicates}"
    return set(names)


def variables_read_by_code():
    names = set()
    for source in SOURCES.rglob("*.swift"):
        names.update(VARIABLE_LITERAL.findall(source.read_text()))
    assert names, "no IAP_ variable found in Sources: has the way configuration is read changed?"
    return names


def test_configuration_md_documents_every_variable_the_code_reads():
    undocumented = sorted(variables_read_by_code() - documented_variables())
    assert not undocumented, f"read by Sources/, missing from docs/configuration.md: {undocumented}"


def test_configuration_md_documents_no_variable_the_code_does_not_read():
    unread = sorted(documented_variables() - variables_read_by_code())
    assert not unread, f"in docs/configuration.md, read nowhere in Sources/: {unread}"


def test_env_example_offers_every_variable_of_the_service():
    example = set(re.findall(r"\b(IAP_[A-Z0-9_]+)=", (ROOT / "deploy" / "iap-fcgi.env.example").read_text()))
    service = {name for name, section in documented_variable_rows() if section != "iapctl only"}
    assert not sorted(service - example), f"missing from deploy/iap-fcgi.env.example: {sorted(service - example)}"
    assert not sorted(example - service), f"in deploy/iap-fcgi.env.example, not a variable of the service: {sorted(example - service)}"


def tracked_citing_files():
    """(path, text) of every file git tracks under CITING_PATHS that is present and reads as UTF-8."""
    listed = subprocess.run(["git", "ls-files", "-z", "--", *CITING_PATHS], cwd=ROOT, check=True,
                            capture_output=True).stdout.decode().split("\0")
    files = []
    for name in filter(None, listed):
        path = ROOT / name
        if path.is_file():
            try:
                files.append((name, path.read_text(encoding="utf-8")))
            except UnicodeDecodeError:
                continue
    assert len(files) > 100, f"only {len(files)} tracked files under {CITING_PATHS}: is this a git checkout?"
    return files


def test_no_file_cites_a_reference_outside_the_repository():
    citing = sorted(f"{name}:{number}" for name, text in tracked_citing_files()
                    for number, line in enumerate(text.splitlines(), 1) if OUTSIDE_REFERENCE.search(line))
    assert not citing, f"cite a file outside the repository (cite docs/, or state the rule): {citing}"


def test_every_docs_page_cited_exists():
    missing = sorted({f"{name}: docs/{page}" for name, text in tracked_citing_files()
                      for page in DOCS_PAGE.findall(text) if not (DOCS / page).is_file()})
    assert not missing, f"cite a docs/ page that does not exist: {missing}"

"""deploy/grafana-iap-fcgi.json against a real Prometheus (Debian's `prometheus`, which scripts/setup
installs) scraping the stack's iap-fcgi: every panel's query runs without error, the panels of what
the test sent show data, and the alert rules load and evaluate. Grafana itself is neither in Debian
nor on PyPI, so the dashboard's own rendering is not exercised here: its JSON shape is checked instead."""
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests

from support import new_user_id, wait_until

REPO = Path(__file__).resolve().parents[2]
DASHBOARD = REPO / "deploy" / "grafana-iap-fcgi.json"
RULES = REPO / "deploy" / "prometheus-alerts.yml"
# Where the service names its metrics: ServiceMetrics and its extensions beside the code they count.
METRIC_SOURCES = REPO / "Sources" / "IAPService"
# Panels whose series exist as soon as the service has answered requests.
PANELS_WITH_DATA = {"Requests/s by route", "Latency p50 / p99 by route", "Queue depth", "Retry-pending backlog",
                    "Retry-pending backlog now", "Days until expiry", "Apple calls in flight"}


def targets():
    dashboard = json.loads(DASHBOARD.read_text())
    return [(panel["title"], target["expr"]) for panel in dashboard["panels"] for target in panel.get("targets", [])]


def as_prometheus_query(expr):
    """The dashboard's Grafana variables as Prometheus takes them: every instance, a 30 s window."""
    return expr.replace("$__rate_interval", "30s").replace('instance=~"$instance"', 'instance=~".*"')


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    """A Prometheus scraping iap-fcgi's /metrics every second, with deploy/prometheus-alerts.yml loaded."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing: apt-get install prometheus (scripts/setup installs it)"
    port = int(os.environ["IAP_HTTP_PORT"]) + 1001
    directory = tmp_path_factory.mktemp("prometheus")
    config = directory / "prometheus.yml"
    config.write_text(json.dumps({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [{"job_name": "iap-fcgi",
                            "static_configs": [{"targets": [os.environ["IAP_METRICS_LISTEN"]]}]}],
    }))
    log = open(directory / "prometheus.log", "w")
    process = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={directory / 'data'}",
                                f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        def ready():
            assert process.poll() is None, f"prometheus exited: {(directory / 'prometheus.log').read_text()[-2000:]}"
            try:
                return requests.get(base + "/-/ready", timeout=2).status_code == 200
            except requests.ConnectionError:
                return False

        wait_until(ready, 30, "prometheus ready")
        yield base
    finally:
        process.terminate()
        process.wait(15)
        log.close()


def query(base, expr):
    response = requests.get(base + "/api/v1/query", params={"query": expr}, timeout=10)
    body = response.json()
    assert response.status_code == 200 and body["status"] == "success", f"{expr}: {body}"
    return body["data"]["result"]


def test_every_panel_query_runs_against_a_real_prometheus(prometheus, api):
    user = new_user_id()

    def scraped_with_traffic():
        api.create_order(user)
        api.version()
        return query(prometheus, 'iap_requests_total{route="/v1/orders"}')

    wait_until(scraped_with_traffic, 30, "Prometheus holding iap_requests_total from iap-fcgi", interval=0.5)
    for _ in range(8):   # two scrapes at least inside every 30 s rate window, with traffic between them
        api.create_order(user)
        time.sleep(0.5)
    empty = []
    for title, expr in targets():
        result = query(prometheus, as_prometheus_query(expr))
        if not result:
            empty.append(title)
    assert not PANELS_WITH_DATA & set(empty), f"panels without data: {sorted(PANELS_WITH_DATA & set(empty))}"
    up = query(prometheus, 'up{job="iap-fcgi"}')
    assert [sample["value"][1] for sample in up] == ["1"]


def test_alert_rules_load_and_evaluate_in_prometheus(prometheus):
    def rules():
        groups = requests.get(prometheus + "/api/v1/rules", timeout=10).json()["data"]["groups"]
        loaded = [rule for group in groups for rule in group["rules"]]
        return loaded if loaded and all(rule.get("lastEvaluation", "").startswith("2") for rule in loaded) else None

    loaded = wait_until(rules, 15, "every alert rule evaluated once")
    assert len(loaded) == len(re.findall(r"^\s*- alert:", RULES.read_text(), re.M)), "every rule of the file loaded"
    assert all(rule["health"] == "ok" for rule in loaded), [(r["name"], r.get("lastError")) for r in loaded]
    # A healthy stack with a fresh test root fires nothing.
    firing = [rule["name"] for rule in loaded if rule["state"] == "firing"]
    assert firing == []


def test_dashboard_names_only_metrics_the_service_has():
    declared = {name for source in METRIC_SOURCES.rglob("*.swift")
                for name in re.findall(r'"(iap_[a-z_]+)"', source.read_text())}
    used = {re.sub(r"_(bucket|count|sum)$", "", name) for _, expr in targets() for name in re.findall(r"iap_[a-z_]+", expr)}
    used |= {re.sub(r"_(bucket|count|sum)$", "", name) for name in re.findall(r"iap_[a-z_]+", RULES.read_text())}
    assert used - declared == set(), f"names the service never exports: {sorted(used - declared)}"
    assert len(used) >= 15


def test_dashboard_shape():
    dashboard = json.loads(DASHBOARD.read_text())
    assert dashboard["uid"] == "iap-fcgi" and dashboard["title"] == "iap-fcgi"
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert variables == {"datasource", "instance"}
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    for panel in dashboard["panels"]:
        grid = panel["gridPos"]
        assert 0 <= grid["x"] and grid["x"] + grid["w"] <= 24, panel["title"]
        for target in panel.get("targets", []):
            assert target["datasource"]["uid"] == "${datasource}" and 'instance=~"$instance"' in target["expr"], (
                panel["title"])

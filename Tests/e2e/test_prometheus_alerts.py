"""deploy/prometheus-alerts.yml: valid rules (promtool check rules), and each alert firing on the
failure it is for and quiet on a healthy service (promtool test rules Tests/Prometheus/alerts.test.yml).
promtool comes with Debian's `prometheus` package (scripts/setup installs it)."""
import shutil
import subprocess
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "deploy" / "prometheus-alerts.yml"
RULE_TESTS = REPO / "Tests" / "Prometheus" / "alerts.test.yml"


def promtool(*arguments):
    tool = shutil.which("promtool")
    assert tool, "promtool is missing: apt-get install prometheus (scripts/setup installs it)"
    return subprocess.run([tool, *arguments], cwd=REPO, capture_output=True, text=True, timeout=120)


def test_alert_rules_are_valid():
    result = promtool("check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 17 rules found" in result.stdout + result.stderr


def test_every_alert_fires_when_it_should_and_only_then():
    result = promtool("test", "rules", str(RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_a_test_and_the_issue_alerts_exist():
    alerts = {rule["alert"] for group in yaml.safe_load(RULES.read_text())["groups"] for rule in group["rules"]}
    tested = {case["alertname"] for test in yaml.safe_load(RULE_TESTS.read_text())["tests"]
              for case in test.get("alert_rule_test", [])}
    assert alerts == tested, f"alerts without a test: {sorted(alerts - tested)}"
    for wanted in ("IAPAppleFailing", "IAPRetryPendingBacklogGrowing", "IAPWebhookFailing", "IAPCertificateExpiringSoon",
                   "IAPGoogleAcknowledgeDeadlineNear", "IAPGoogleAcknowledgeDeadlineImminent"):
        assert wanted in alerts

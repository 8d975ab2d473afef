"""Where the command-line helpers look for the test PKI, and what they say when it is not there: the README's
first example runs them in a new shell beside the local run (scripts/start), with nothing exported."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
HELPERS = {"receipts.py": ["app", "zydj.product.pay_6"], "signed_data.py": ["transaction", "zydj.product.pay_6"]}


def clean_env(**extra):
    """A new login shell's environment: none of a stack's IAP_* variables."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/root"), **extra}


def local_run_directory():
    """scripts/stack's default IAP_RUN: the local run's folder."""
    match = re.search(r"^IAP_RUN=\$\{IAP_RUN:-([^}]+)\}$", (REPO / "scripts" / "stack").read_text(), re.MULTILINE)
    assert match, "scripts/stack no longer defaults IAP_RUN as IAP_RUN=${IAP_RUN:-...}"
    return match.group(1)


def default_directory(env):
    script = "import pki_files; print(pki_files.default_directory())"
    result = subprocess.run([sys.executable, "-c", script], cwd=HERE, env=env, capture_output=True, text=True,
                            timeout=30, check=True)
    return result.stdout.strip()


def test_without_iap_run_the_helpers_use_the_local_runs_certs():
    assert default_directory(clean_env()) == os.path.join(local_run_directory(), "certs")


def test_an_exported_iap_run_names_the_stack_whose_certs_are_used(tmp_path):
    assert default_directory(clean_env(IAP_RUN=str(tmp_path))) == str(tmp_path / "certs")


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_missing_certificates_are_one_line_not_a_traceback(helper, tmp_path):
    result = subprocess.run([sys.executable, str(HERE / helper), *HELPERS[helper]], cwd=REPO,
                            env=clean_env(IAP_RUN=str(tmp_path)), capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert result.stdout == ""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"{helper}: no ") and str(tmp_path / "certs") in lines[0], lines[0]
    assert "scripts/start" in lines[0], lines[0]


@pytest.mark.parametrize("helper", sorted(HELPERS))
def test_an_explicit_certs_folder_that_is_missing_is_named(helper, tmp_path):
    missing = tmp_path / "nowhere"
    certs_option = ["--certs", str(missing)]
    # receipts.py takes --certs before its command, signed_data.py after it.
    arguments = certs_option + HELPERS[helper] if helper == "receipts.py" else HELPERS[helper] + certs_option
    result = subprocess.run([sys.executable, str(HERE / helper), *arguments], cwd=REPO, env=clean_env(),
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert result.stderr.splitlines() == [result.stderr.strip()] and str(missing) in result.stderr

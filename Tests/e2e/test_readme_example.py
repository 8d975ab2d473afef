"""The README's first example, as printed: its `$ ` commands run one after the other in one new bash (no
stack variables exported, from the repository's folder), and each command's output matches the lines the
README shows under it, `…` standing for anything. Against this stack, the local run's address
(http://127.0.0.1:8080) becomes this stack's, and the local run's folder (/tmp/iap-local, where the
simulator's helpers find their certificates when no IAP_RUN is exported) becomes this stack's IAP_RUN:
the only changes made to the README's text. The Android example after it runs the same way, the local
run's Google Play double made this stack's."""
import os
import re
import subprocess

from conftest import REPO

LOCAL_RUN_URL = "http://127.0.0.1:8080"
# The local run's Google Play double (control port), in the Android example.
LOCAL_GOOGLE_CONTROL_URL = "http://127.0.0.1:9547"
LOCAL_RUN_DIRECTORY = "/tmp/iap-local"
# Printed after each command, so that the output splits into each command's own.
END_OF_COMMAND = "----- end of a README command -----"


def readme_example(index=0):
    """[(command, [expected output lines])] of the fenced block of `$ ` commands in README.md numbered
    `index` (0: the first, the Apple example; 1: the Android one)."""
    text = (REPO / "README.md").read_text()
    blocks = [block.splitlines() for block in re.findall(r"^```sh\n(.*?)^```$", text, re.MULTILINE | re.DOTALL)
              if block.startswith("$ ")]
    assert len(blocks) > index, f"README.md has {len(blocks)} ```sh blocks of `$ ` commands"
    lines = blocks[index]
    steps = []
    for line in lines:
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def output_pattern(expected_lines):
    """The README's output lines as a regular expression: `…` matches anything, the rest literally."""
    return "\n".join(".*".join(re.escape(piece) for piece in line.split("…")) for line in expected_lines)


def test_the_readme_example_is_about_the_local_run():
    commands = [command for command, _ in readme_example()]
    assert any(LOCAL_RUN_URL in command for command in commands), f"no command names {LOCAL_RUN_URL}"
    assert sum("Tests/Simulator/" in command for command in commands) >= 2, "the simulator's helpers are not run"


def test_the_readme_example_works_as_printed(run_dir, base_url):
    run_as_printed(readme_example(), run_dir, base_url)


def test_the_readme_android_example_works_as_printed(run_dir, base_url, google):
    steps = readme_example(1)
    assert any(LOCAL_GOOGLE_CONTROL_URL in command for command, _ in steps), "the Google Play double is not used"
    assert sum("/v1/google/purchases/verify" in command for command, _ in steps) == 2
    run_as_printed(steps, run_dir, base_url, {LOCAL_GOOGLE_CONTROL_URL: google})


def run_as_printed(steps, run_dir, base_url, addresses=None):
    """Runs the steps in one new bash, the local run's addresses made this stack's; checks each output."""
    changes = {LOCAL_RUN_URL: base_url, LOCAL_RUN_DIRECTORY: str(run_dir), **(addresses or {})}

    def here(command):
        for local, this_stack in changes.items():
            command = command.replace(local, this_stack)
        return command

    script = "set -eo pipefail\n" + "".join(
        f"{here(command)}\nprintf '\\n%s\\n' '{END_OF_COMMAND}'\n" for command, _ in steps)
    # A new shell: PATH and HOME, and IAP_RUN in place of the local run's folder, which the helpers use when
    # nothing is exported.
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/root"), "IAP_RUN": str(run_dir)}
    result = subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stderr == "", (result.returncode, result.stderr, result.stdout)
    outputs = result.stdout.split(f"\n{END_OF_COMMAND}\n")
    assert len(outputs) == len(steps) + 1 and outputs[-1] == "", result.stdout
    for (command, expected), output in zip(steps, outputs):
        assert re.fullmatch(output_pattern(expected), output.strip("\n"), re.DOTALL), (
            f"$ {command}\nprinted:\n{output}\nthe README shows:\n" + "\n".join(expected))

"""Hostile submissions against the real sandbox: each ends with its named verdict, in time, leaving nothing.

Every attack names its processes with a unique marker (/proc/self/comm, or in the command line of
what it starts), and the test then scans /proc for that marker: no process may survive a grading.
After each attack the reference solution must still grade normally.
"""

from __future__ import annotations

import dataclasses
import os
import select
import socket
import threading
import time
import uuid

import pytest

from chainrule.grading import default_limits, grade, isolation_report, reference_source, sandbox
from sandbox_attacks import js_attack, marker, python_attack, survivors

pytestmark = pytest.mark.timeout(60)

ISOLATION = isolation_report()
HAS_BWRAP = ISOLATION["layers"]["bubblewrap"]
HAS_CGROUP = ISOLATION["layers"]["cgroup"]
MISSING = {m["layer"]: m["error"] for m in ISOLATION["missing"]}
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason=f"bubblewrap layer missing: {MISSING.get('bubblewrap')}")
needs_cgroup = pytest.mark.skipif(not HAS_CGROUP, reason=f"cgroup layer missing: {MISSING.get('cgroup')}")

WALL = 3.0


def limits(language: str = "python", **changes) -> sandbox.Limits:
    base = dataclasses.replace(default_limits(language), wall_seconds=WALL, cpu_seconds=1)
    return dataclasses.replace(base, **changes)


SURVIVOR_HANG_SECONDS = 30.0  # a bound that only catches a hang: the wait ends when the marked processes end


def living(pids: list[int]) -> dict[int, int]:
    """A pidfd for each of `pids` that has not ended yet (a zombie has ended: its pidfd reads as ready)."""
    handles = {}
    for pid in pids:
        try:
            handles[pid] = os.pidfd_open(pid)
        except ProcessLookupError:
            continue  # gone, and reaped
    ended = set(select.select(list(handles.values()), [], [], 0)[0]) if handles else set()
    for pid, handle in list(handles.items()):
        if handle in ended:
            os.close(handles.pop(pid))
    return handles


def assert_no_survivors(mark: str) -> None:
    """No process marked `mark` outlives the grading. One still ending (the cgroup's kill or the reaper's sweep
    landing) is waited for on its pidfd, an event; then /proc is looked at again (it may have forked)."""
    deadline = time.monotonic() + SURVIVOR_HANG_SECONDS
    left = living(survivors(mark))
    while left and time.monotonic() < deadline:
        try:
            select.select(list(left.values()), [], [], max(0.0, deadline - time.monotonic()))
        finally:
            for handle in left.values():
                os.close(handle)
        left = living(survivors(mark))
    for handle in left.values():
        os.close(handle)
    assert sorted(left) == [], f"processes marked {mark} survived the grading"


def run_attack(source: str, language: str = "python", **limit_changes) -> dict:
    # No assertion on elapsed time: each test's verdict shows which limit ended the run, and
    # pytest-timeout (60 s) fails any grading that hangs.
    return grade("neuron-grads", language, source, limits=limits(language, **limit_changes))


@pytest.fixture(autouse=True)
def grades_normally_afterwards():
    yield
    after = grade("neuron-grads", "python", reference_source("neuron-grads", "python"))
    assert after["verdict"] == "passed", after["message"]


# ------------------------------------------------------------------------------------- always-on layers


def test_infinite_loop_hits_the_cpu_limit():
    mark = marker()
    result = run_attack(python_attack(mark, "while True:\n    pass"), wall_seconds=8.0)
    assert result["verdict"] == "cpu-limit", result["message"]
    assert result["status"] == "error" and "CPU" in result["message"]
    assert result["tests"][0]["status"] == "error" and "CPU" in result["tests"][0]["message"]
    assert result["tests"][1]["message"].startswith("Not run")
    assert_no_survivors(mark)


def test_sleeping_forever_hits_the_wall_timeout():
    mark = marker()
    result = run_attack(python_attack(mark, "print('about to sleep', x)\ntime.sleep(10_000)"))
    assert result["verdict"] == "timeout" and "3 seconds" in result["message"]
    # What the hung test printed before it hung is still shown.
    assert result["tests"][0]["output"].startswith("about to sleep [2.0, 0.0]")
    assert_no_survivors(mark)


def test_ten_gigabyte_allocation_hits_the_memory_limit():
    mark = marker()
    result = run_attack(python_attack(mark, "hoard = bytearray(10 * 1024**3)"))
    assert result["verdict"] == "memory-limit", result["message"]
    assert_no_survivors(mark)


def test_touching_memory_beyond_the_cgroup_limit_is_a_memory_limit():
    if not HAS_CGROUP:
        pytest.skip(f"cgroup layer missing: {MISSING.get('cgroup')}")
    mark = marker()
    # 300 MB under a 1 GB address space but over a 128 MB cgroup memory limit.
    source = python_attack(mark, "hoard = [bytearray(1024 * 1024) for _ in range(300)]")
    result = run_attack(source, memory_bytes=128 * sandbox.MB)
    assert result["verdict"] == "memory-limit", result["message"]
    assert_no_survivors(mark)


def test_fork_bomb_is_contained_and_cleaned_up():
    mark = marker()
    body = "while True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    # Each process stays under its own RLIMIT_CPU; together they pass the run's CPU limit (docs/grading.md).
    # The hang guard is far off: on a busy machine the bomb's share of a core still reaches that limit first.
    result = run_attack(python_attack(mark, body), wall_seconds=30.0)
    assert result["verdict"] == "cpu-limit", result["message"]
    assert_no_survivors(mark)


def test_setsid_child_holding_the_pipes_neither_hangs_the_grader_nor_survives():
    mark = marker()
    body = (
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    os.execv('/bin/sh', ['sh', '-c', 'sleep 1000; echo {mark}'])\n"
    )
    result = run_attack(python_attack(mark, body))
    # "passed", not "timeout": the grader did not wait for the lingering child's pipes until the wall limit.
    assert result["verdict"] == "passed", result["message"]
    assert_no_survivors(mark)


def test_huge_output_hits_the_output_limit_through_print_and_through_the_raw_fd():
    for body in ("while True:\n    print('x' * 10_000)", "chunk = b'y' * 1_000_000\nfor _ in range(100):\n    os.write(1, chunk)"):
        mark = marker()
        result = run_attack(python_attack(mark, body))
        assert result["verdict"] == "output-limit", result["message"]
        assert "1,000,000 bytes" in result["message"]
        assert_no_survivors(mark)


def test_hundred_thousand_open_files_hit_the_file_limit():
    mark = marker()
    result = run_attack(python_attack(mark, "handles = [open('/dev/null') for _ in range(100_000)]"))
    assert result["verdict"] == "file-limit", result["message"]
    assert_no_survivors(mark)


def test_a_huge_file_hits_the_file_size_limit():
    mark = marker()
    body = "with open('big.bin', 'wb') as f:\n    for _ in range(100):\n        f.write(b'z' * 1024 * 1024)"
    result = run_attack(python_attack(mark, body))
    assert result["verdict"] == "file-limit", result["message"]
    assert_no_survivors(mark)


def test_segfault_is_a_crash_with_its_signal():
    mark = marker()
    result = run_attack(python_attack(mark, "import ctypes\nctypes.string_at(0)"))
    assert result["verdict"] == "crashed" and "SIGSEGV" in result["message"]
    assert_no_survivors(mark)


def test_stdin_is_closed_so_reading_it_ends_at_once():
    mark = marker()
    result = run_attack(python_attack(mark, "line = sys.stdin.read()\nprint('read', repr(line))\ninput()"))
    assert result["verdict"] == "error" and "EOFError" in result["tests"][0]["message"]
    assert "read ''" in result["tests"][0]["output"]
    assert_no_survivors(mark)


def test_environment_is_clean(monkeypatch):
    monkeypatch.setenv("CHAINRULE_TEST_SECRET", "hunter2")
    body = "print(sorted(os.environ))\nprint(os.environ.get('HOME'), os.getcwd())"
    result = run_attack(python_attack(marker(), body))
    output = result["tests"][0]["output"]
    assert "CHAINRULE_TEST_SECRET" not in output and "hunter2" not in repr(result)
    assert "VIRTUAL_ENV" not in output and "/root" not in output
    assert "chainrule-grade-" in output and output.rstrip().endswith("/work")


# ------------------------------------------------------------------------------------- namespaces (bubblewrap)


@needs_bwrap
def test_writing_outside_the_scratch_directory_fails_and_leaves_no_file(tmp_path):
    mark = marker()
    target = tmp_path / "planted.txt"
    body = f"open({str(target)!r}, 'w').write('owned')"
    result = run_attack(python_attack(mark, body))
    assert result["verdict"] == "error"
    assert "Error" in result["tests"][0]["message"]
    assert not target.exists()
    assert_no_survivors(mark)


@needs_bwrap
def test_read_only_binds_cannot_be_made_writable_with_the_new_mount_api():
    """mount_setattr (the mount API that seccomp's `mount` rule does not cover) must not clear the
    read-only flag of the interpreter's bind: without capabilities it fails, and the path stays read-only."""
    mark = marker()
    body = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
target = sys.prefix.encode()
attr = (ctypes.c_uint64 * 4)(0, 1, 0, 0)  # attr_clr = MOUNT_ATTR_RDONLY
rc = libc.syscall(442, -100, target, 0x8000, attr, 32)  # mount_setattr(AT_FDCWD, path, AT_RECURSIVE, ...)
print('RESULT', rc, os.access(sys.prefix, os.W_OK))
"""
    result = run_attack(python_attack(mark, body))
    output = result["tests"][0]["output"] or ""
    assert "RESULT -1 False" in output, output
    assert_no_survivors(mark)


@needs_bwrap
def test_kernel_settings_and_the_root_filesystem_are_read_only(tmp_path):
    mark = marker()
    body = """
results = []
for path in ('/proc/sys/kernel/core_pattern', '/proc/sys/vm/drop_caches', '/planted', '/tmp/planted', '/dev/planted'):
    try:
        open(path, 'w').close()
        results.append(path + ':writable')
    except OSError as error:
        results.append(path + ':' + type(error).__name__)
open('planted', 'w').write('fine')  # the working directory is the one writable place
print('RESULT', ' '.join(results))
"""
    result = run_attack(python_attack(mark, body))
    output = result["tests"][0]["output"] or ""
    assert "RESULT" in output and ":writable" not in output, output
    assert result["verdict"] == "passed"
    assert_no_survivors(mark)


@pytest.mark.parametrize("forged", [
    "'[' * 100000",                                          # JSON nested past the recursion limit
    "'17'",                                                  # JSON that is not an object
    "json.dumps({'event': 'load-error', 'error': 'text'})",  # an error that is not an object
])
def test_forged_result_lines_cannot_crash_the_grader(forged):
    """The nonce is readable inside the sandbox, so learner code can print lines that imitate the harness
    (at load time, straight to the real stdout): they must be judged, never crash grade()."""
    source = (
        "import json, os, sys\n"
        "spec = json.load(open(sys.argv[1]))\n"
        f"os.write(1, ('\\n@@chainrule:' + spec['nonce'] + '@@ ' + {forged} + '\\n').encode())\n"
        "def neuron_grads(x, w, b, out, grad):\n"
        "    return grad\n"
    )
    result = grade("neuron-grads", "python", source, limits=limits("python"))
    assert result["status"] in ("fail", "error")
    assert result["verdict"] in ("failed", "error")


@needs_bwrap
def test_reading_a_secret_host_file_is_impossible(tmp_path):
    mark = marker()
    secret_text = "secret-" + uuid.uuid4().hex
    secret = tmp_path / "secret.txt"
    secret.write_text(secret_text)
    body = f"print(open({str(secret)!r}).read())\nprint(open('/etc/passwd').read())"
    result = run_attack(python_attack(mark, body))
    assert result["verdict"] == "error"
    assert "FileNotFoundError" in result["tests"][0]["message"]
    assert secret_text not in repr(result)
    assert_no_survivors(mark)


@needs_bwrap
def test_no_network_even_to_loopback():
    mark = marker()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list = []
    finished = threading.Event()

    def accept_loop() -> None:
        while not finished.is_set():
            try:
                connection, _ = server.accept()
                accepted.append(connection.recv(100))
                connection.close()
            except OSError:
                continue

    thread = threading.Thread(target=accept_loop)
    thread.start()
    body = f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\ns.sendall(b'{mark}')"
    try:
        result = run_attack(python_attack(mark, body))
    finally:
        time.sleep(0.3)  # a connection attempt still in flight would be accepted now
        finished.set()
        thread.join()
        server.close()
    assert result["verdict"] == "error"
    assert accepted == []
    assert_no_survivors(mark)


@needs_bwrap
def test_filling_the_writable_space_hits_the_file_limit():
    mark = marker()
    body = ("with open('note.txt', 'w') as f:\n    f.write('small files are fine')\n"
            "for i in range(10):\n    with open(f'part{i}.bin', 'wb') as f:\n        f.write(b'z' * 10 * 1024 * 1024)")
    result = run_attack(python_attack(mark, body))
    assert result["verdict"] == "file-limit", result["message"]
    assert "No space left" in result["tests"][0]["message"]
    assert_no_survivors(mark)


@needs_bwrap
def test_only_usr_interpreter_and_scratch_are_visible():
    body = "import os\nprint(sorted(os.listdir('/')))\nprint(os.path.exists('/etc/passwd'), os.path.exists('/root/.ssh'))"
    result = run_attack(python_attack(marker(), body))
    output = result["tests"][0]["output"]
    assert "'etc'" not in output and "False False" in output


# ------------------------------------------------------------------------------------- seccomp

HAS_SECCOMP = ISOLATION["layers"]["seccomp"]
needs_seccomp = pytest.mark.skipif(not HAS_SECCOMP, reason=f"seccomp layer missing: {MISSING.get('seccomp')}")

UNSHARE_PROBE = (
    "import ctypes, errno\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "print('unshare', libc.unshare(0x10000000), errno.errorcode.get(ctypes.get_errno()))"
)


@needs_seccomp
def test_seccomp_denies_new_namespaces_inside_bubblewrap():
    result = run_attack(python_attack(marker(), UNSHARE_PROBE))
    assert "unshare -1 EPERM" in result["tests"][0]["output"]


@needs_seccomp
def test_seccomp_alone_blocks_inet_sockets_and_namespaces(monkeypatch):
    """With bubblewrap off, the filter is loaded in the child itself: no AF_INET socket, no unshare."""
    monkeypatch.setenv("CHAINRULE_SANDBOX_NO_BWRAP", "1")
    sandbox._probe_cached.cache_clear()
    try:
        body = UNSHARE_PROBE + "\nimport socket\nsocket.socket(socket.AF_INET, socket.SOCK_STREAM)"
        result = run_attack(python_attack(marker(), body))
        assert result["isolation"]["layers"]["seccomp"] and not result["isolation"]["layers"]["bubblewrap"]
        assert result["verdict"] == "error"
        message = result["tests"][0]["message"]
        assert "PermissionError" in message and "Operation not permitted" in message
        assert "unshare -1 EPERM" in result["tests"][0]["output"]
    finally:
        monkeypatch.delenv("CHAINRULE_SANDBOX_NO_BWRAP")
        sandbox._probe_cached.cache_clear()


def test_without_seccomp_the_report_says_why(monkeypatch):
    monkeypatch.setenv("CHAINRULE_SANDBOX_NO_SECCOMP", "1")
    sandbox._probe_cached.cache_clear()
    try:
        report = isolation_report()
        assert report["layers"]["seccomp"] is False
        assert {"layer": "seccomp", "error": "disabled by CHAINRULE_SANDBOX_NO_SECCOMP"} in report["missing"]
    finally:
        monkeypatch.delenv("CHAINRULE_SANDBOX_NO_SECCOMP")
        sandbox._probe_cached.cache_clear()


# ------------------------------------------------------------------------------------- JavaScript


def test_js_infinite_loop_hits_the_cpu_limit():
    mark = marker()
    result = run_attack(js_attack(mark, "console.log('looping'); while (true) {}"), language="javascript",
                        wall_seconds=8.0)
    assert result["verdict"] == "cpu-limit", result["message"]
    assert result["tests"][0]["output"] == "looping\n"
    assert_no_survivors(mark)


def test_js_huge_allocation_hits_the_memory_limit():
    mark = marker()
    body = "const hoard = []; while (true) hoard.push(new Array(1e6).fill(1.5));"
    result = run_attack(js_attack(mark, body), language="typescript", wall_seconds=8.0, cpu_seconds=5)
    assert result["verdict"] == "memory-limit", result["message"]
    assert_no_survivors(mark)


def test_js_output_flood_hits_the_output_limit():
    mark = marker()
    body = "const s = 'x'.repeat(100000); for (;;) { try { require('fs').writeSync(1, s); } catch (e) {} }"
    result = run_attack(js_attack(mark, body), language="javascript")
    assert result["verdict"] == "output-limit", result["message"]
    assert_no_survivors(mark)


# ------------------------------------------------------------------------------------- the report


def test_isolation_report_names_every_layer_and_the_reason_for_each_missing_one():
    assert ISOLATION["level"] in {"strong", "partial", "minimal"}
    assert ISOLATION["layers"]["process"] and ISOLATION["layers"]["rlimits"]
    for missing in ISOLATION["missing"]:
        assert missing["layer"] and missing["error"]
    optional = ("bubblewrap", "cgroup", "seccomp", "identity")
    if all(ISOLATION["layers"][name] for name in optional):
        assert ISOLATION["level"] == "strong"
    else:
        assert ISOLATION["level"] != "strong"
    result = grade("neuron-grads", "python", reference_source("neuron-grads", "python"))
    assert result["isolation"] == ISOLATION


@needs_cgroup
def test_without_bubblewrap_the_cgroup_still_kills_a_setsid_survivor(monkeypatch):
    """Turn the namespace layer off: the run is 'partial', and the cgroup sweep removes the escapee."""
    monkeypatch.setenv("CHAINRULE_SANDBOX_NO_BWRAP", "1")
    sandbox._probe_cached.cache_clear()
    try:
        assert isolation_report()["level"] == "partial"
        mark = marker()
        body = "if os.fork() == 0:\n    os.setsid()\n" f"    os.execv('/bin/sh', ['sh', '-c', 'sleep 1000; echo {mark}'])\n"
        result = run_attack(python_attack(mark, body))
        assert result["verdict"] == "passed"
        assert result["isolation"]["level"] == "partial"
        assert any(m["layer"] == "bubblewrap" for m in result["isolation"]["missing"])
        assert_no_survivors(mark)
    finally:
        monkeypatch.delenv("CHAINRULE_SANDBOX_NO_BWRAP")
        sandbox._probe_cached.cache_clear()


def test_with_no_optional_layer_the_environment_sweep_kills_a_setsid_survivor(monkeypatch):
    for layer in ("BWRAP", "CGROUP", "SECCOMP", "IDENTITY"):
        monkeypatch.setenv(f"CHAINRULE_SANDBOX_NO_{layer}", "1")
    sandbox._probe_cached.cache_clear()
    try:
        assert isolation_report()["level"] == "minimal"
        mark = marker()
        body = "if os.fork() == 0:\n    os.setsid()\n" f"    os.execv('/bin/sh', ['sh', '-c', 'sleep 1000; echo {mark}'])\n"
        result = run_attack(python_attack(mark, body))
        assert result["verdict"] == "passed" and result["isolation"]["level"] == "minimal"
        assert_no_survivors(mark)
    finally:
        for layer in ("BWRAP", "CGROUP", "SECCOMP", "IDENTITY"):
            monkeypatch.delenv(f"CHAINRULE_SANDBOX_NO_{layer}")
        sandbox._probe_cached.cache_clear()

"""Each sandbox layer alone: its module's own promise, checked without grading anything."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from chainrule.grading.sandbox import identity, isolation, layers, mounts, rlimits, seccomp
from chainrule.grading.sandbox.isolation import OPTIONAL_LAYERS, Isolation
from chainrule.grading.sandbox.limits import Limits

ROOT = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------- seccomp


def test_every_denied_group_says_why_and_the_required_calls_are_denied():
    for names, reason in seccomp.DENIED + seccomp.UNAVAILABLE:
        assert names and len(reason) > 20, names
    denied = set(seccomp.denied_names())
    assert {"io_setup", "io_submit", "io_getevents", "io_destroy", "mq_open", "inotify_init", "inotify_init1"} <= denied
    assert len(denied) == len(seccomp.denied_names()), "a call is listed twice"


def test_every_denied_name_is_a_system_call_libseccomp_knows():
    pyseccomp = pytest.importorskip("pyseccomp")
    unknown = []
    for name in seccomp.denied_names():
        try:
            pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
        except Exception:
            unknown.append(name)
    assert unknown == []


def test_the_filter_loaded_in_a_child_denies_aio_mqueue_and_inotify():
    pytest.importorskip("pyseccomp")
    code = (
        "import ctypes, errno, sys\n"
        "from chainrule.grading.sandbox import seccomp\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('before', libc.inotify_init1(0) >= 0)\n"
        "seccomp.build_filter().load()\n"
        "context = ctypes.c_ulong(0)\n"
        "for name, rc in (('inotify', libc.inotify_init1(0)), ('aio', libc.syscall(206, 1, ctypes.byref(context))),\n"
        "                 ('mqueue', libc.syscall(240, b'crq', 0o102, 0o600, None))):\n"
        "    print(name, rc, errno.errorcode.get(ctypes.get_errno()))\n"
    )
    if os.uname().machine != "x86_64":
        pytest.skip("x86-64 system call numbers")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert done.stdout.splitlines() == ["before True", "inotify -1 EPERM", "aio -1 EPERM", "mqueue -1 EPERM"], done.stderr


# ------------------------------------------------------------------------------------- rlimits


def test_rlimits_allow_no_message_queue_and_apply_in_a_child():
    assert ("RLIMIT_MSGQUEUE", 0) in rlimits.planned(Limits())
    code = ("from chainrule.grading.sandbox import rlimits, limits\n"
            "rlimits.in_child(*rlimits.settings(limits.Limits(open_files=99)))\n"
            "print(open('/proc/self/limits').read())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    lines = {" ".join(line.split()[:-3]): line.split()[-3:-1] for line in done.stdout.splitlines()[1:]}
    assert lines["Max msgqueue size"] == ["0", "0"]
    assert lines["Max open files"] == ["99", "99"]
    assert lines["Max core file size"] == ["0", "0"]


# ------------------------------------------------------------------------------------- identity


def test_the_dedicated_user_is_no_account_and_not_root_and_an_account_is_refused():
    uid, gid = identity.sandbox_ids()
    assert uid != 0 and gid != 0
    if os.geteuid() != 0:
        assert "not root" in identity.unavailable_reason(uid)
        return
    assert identity.unavailable_reason(uid) is None
    assert identity.unavailable_reason(0) == "CHAINRULE_SANDBOX_UID is 0 (root)"
    import pwd

    other = next(p for p in pwd.getpwall() if p.pw_uid != 0)
    assert repr(other.pw_name) in identity.unavailable_reason(other.pw_uid)


# ------------------------------------------------------------------------------------- mounts and bubblewrap


def test_the_python_runtime_is_interpreter_and_standard_library_without_packages():
    runtime = mounts.python_runtime()
    assert runtime[0] == os.path.realpath(sys.executable)
    assert os.path.dirname(os.__file__) in runtime  # the standard library
    assert not any("site-packages" in p or "dist-packages" in p for p in runtime)
    assert os.path.realpath(sys.prefix) not in runtime or sys.prefix == sys.base_prefix


def test_package_directories_inside_a_bound_directory_are_found_to_be_masked():
    stdlib = sysconfig.get_path("stdlib", vars={"installed_base": sys.base_prefix, "base": sys.base_prefix})
    inside = os.path.join(stdlib, "site-packages")
    found = mounts.package_dirs(tuple(mounts.python_runtime()))
    assert (inside in found) == os.path.isdir(inside)


def test_bubblewrap_binds_no_virtual_environment_and_masks_proc(tmp_path):
    plan = layers.plan_run(isolation_with({"bubblewrap"}), Limits(), str(tmp_path), [sys.executable], (),
                           {"PATH": "/usr/bin"})
    argv = plan.bwrap
    binds = [argv[i + 1] for i, arg in enumerate(argv) if arg == "--ro-bind"]
    destinations = [argv[i + 2] for i, arg in enumerate(argv) if arg == "--ro-bind"]
    assert "/usr" not in binds  # only /usr/bin and the library directories
    if sys.prefix != sys.base_prefix:
        assert not any(b == sys.prefix or b.startswith(sys.prefix + "/") for b in binds)
    for path in mounts.masked_proc_paths():
        assert path in destinations
    assert oct(os.stat(tmp_path / mounts.MASK_FILE).st_mode & 0o777) == "0o0"
    with_identity = layers.plan_run(isolation_with({"bubblewrap", "identity"}), Limits(), str(tmp_path),
                                    [sys.executable])
    assert "--unshare-all" not in with_identity.bwrap and "--unshare-user" not in with_identity.bwrap
    assert with_identity.inside == [identity.setpriv(), "--reuid=65431", "--regid=65431", "--clear-groups",
                                    "--inh-caps=-all", "--no-new-privs", "--"]


# ------------------------------------------------------------------------------------- level and summary


def isolation_with(present: set[str]) -> Isolation:
    return Isolation(
        bubblewrap="/usr/bin/bwrap" if "bubblewrap" in present else None,
        cgroup=object() if "cgroup" in present else None,  # any truthy backend
        seccomp=b"filter" if "seccomp" in present else None,
        missing=tuple((layer, "absent in this test") for layer in OPTIONAL_LAYERS if layer not in present),
        identity=(65431, 65431) if "identity" in present else None,
    )


@pytest.mark.parametrize("present", [set(c) for n in range(5) for c in itertools.combinations(OPTIONAL_LAYERS, n)])
def test_level_and_summary_agree_for_every_combination_of_layers(present):
    found = isolation_with(present)
    summary = found.summary()
    if present == set(OPTIONAL_LAYERS):
        assert found.level == "strong" and "strong" in summary and found.missing == ()
    else:
        assert found.level == ("partial" if present else "minimal")
        assert "strong" not in summary and "isolated from this computer (" not in summary
    if found.level == "partial":
        for layer in OPTIONAL_LAYERS:
            assert (isolation.PLAIN_WORDS[layer] in summary) == (layer not in present), (layer, summary)
    assert summary.count(".") == 1 and summary.endswith(".")  # one sentence


# ------------------------------------------------------------------------------------- other systems


@pytest.mark.parametrize("platform_name", ["darwin", "win32"])
def test_the_package_imports_on_other_systems_and_says_linux_is_needed(platform_name):
    code = (
        "import sys, chainrule, urllib.request\n"  # the rest of chainrule first: faking it darwin breaks urllib
        "assert 'chainrule.grading.sandbox' not in sys.modules\n"
        f"sys.platform = {platform_name!r}\n"
        "for name in ('resource', 'fcntl', 'pwd', 'pyseccomp', 'grp', 'termios'):\n"
        "    sys.modules[name] = None  # importing any of these now raises ImportError\n"
        "from chainrule.grading import sandbox\n"
        "report = sandbox.isolation_report()\n"
        "print(report['level'])\n"
        "print(report['summary'])\n"
        "print(report['missing'][0]['error'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    level, summary, error = done.stdout.splitlines()
    assert level == "minimal" and "not isolated" in summary
    assert "needs Linux namespaces" in error and platform_name in error


# ------------------------------------------------------------------------------------- the docs


def test_grading_docs_name_every_denied_call_every_mask_and_only_tests_that_exist():
    text = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    for name in seccomp.denied_names():
        assert f"`{name}`" in text, name
    for name, _ in mounts.PROC_MASKED:
        assert f"`{name}`" in text, name
    import re

    cited = re.findall(r"`(tests/test_sandbox\w*\.py)(?:::(\w+))?`|`::(\w+)`", text)
    assert cited
    current = None
    for path, name, continued in cited:
        if path:
            current = (ROOT / path).read_text(encoding="utf-8")
        test = name or continued
        if test:
            assert f"def {test}(" in current, test

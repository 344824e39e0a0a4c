"""The one rule of every command that lets other people's code reach this host's grader (`chainrule lesson
--host`, `chainrule serve --host`, `chainrule worker`): the grader's sandbox must be strong, unless whoever
starts it passes --allow-weak-sandbox. Each command says what it would do and why that exposes the host;
the refusal is written here once.
"""

from __future__ import annotations


def sandbox_strength() -> tuple[str, str]:
    """(level, detail) of the grader's sandbox: level is strong, partial, minimal or unknown; detail names
    each missing layer and why."""
    try:
        from chainrule.grading import isolation_report
    except ImportError as error:
        return "unknown", f"the grader cannot be loaded ({error})"
    try:
        report = isolation_report()
    except Exception as error:  # a probe failure means we cannot vouch for the sandbox
        return "unknown", f"the sandbox probe failed ({error})"
    missing = "; ".join(f"{item.get('layer')}: {item.get('error')}" for item in report.get("missing", []))
    return str(report.get("level", "unknown")), missing


def weak_sandbox_refusal(command: str, action: str, exposure: str, remedy: str, *, allowed: bool) -> str | None:
    """None when `allowed` (--allow-weak-sandbox) or the sandbox is strong; else why `chainrule COMMAND`
    refuses to ACTION: EXPOSURE, the sandbox's level and what it lacks, then REMEDY or the flag."""
    if allowed:
        return None
    level, detail = sandbox_strength()
    if level == "strong":
        return None
    return (f"chainrule {command}: refusing to {action}: {exposure}, and the grader's sandbox here is {level!r}, "
            "not 'strong'" + (f" ({detail})" if detail else "")
            + f". {remedy}, or pass --allow-weak-sandbox if you accept the risk.")

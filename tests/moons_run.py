"""`chainrule train moons ARGS...` run by the CLI's own entry point (chainrule.cli.main, what the `chainrule`
script calls) in this fresh process, printing what the command prints, and also writing the run's `--json`
document (chainrule.commands.train.json_document: the settings, every step's record, the final evaluation)
to the file OUT: one training serves both the README's console example, which shows the printed lines, and the
tests of the whole learning curve (tests/conftest.py, default_moons_run).

    python tests/moons_run.py OUT.json --plot moons.png
"""

from __future__ import annotations

import sys
from pathlib import Path

from chainrule.cli import main
from chainrule.commands import train


def run(out: Path, argv: list[str]) -> int:
    seen: dict = {"curve": []}
    step, evaluate = train.MoonsDemo.step, train.MoonsDemo.evaluate

    def recorded_step(demo: train.MoonsDemo, k: int) -> train.StepRecord:
        record = step(demo, k)
        seen["demo"] = demo
        seen["curve"].append(record)
        return record

    def recorded_evaluate(demo: train.MoonsDemo) -> dict:
        seen["final"] = evaluate(demo)  # the command adds its "seconds" to this very dict
        return seen["final"]

    train.MoonsDemo.step, train.MoonsDemo.evaluate = recorded_step, recorded_evaluate  # type: ignore[method-assign]
    code = main(["train", "moons", *argv])
    plot = argv[argv.index("--plot") + 1] if "--plot" in argv else None
    if code == 0:
        out.write_text(train.json_document(seen["demo"], seen["curve"], seen["final"], plot) + "\n",
                       encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]), sys.argv[2:]))

"""When a lesson, and each of its sections, is finished: the one rule, which the lesson page's contents,
the path page and the CLI all show (the pages do not decide it again).

A section to do is finished when its work is: 04 when every prediction is made, 05 when every exercise
has passed (in any language), 06 when every quiz question is answered, 07 when the explanation is
written. A reading section before the first one to do is finished once the learner has started any
work; one after it (the recap) once every section to do is finished. The lesson is finished when every
section is.
"""

from __future__ import annotations

from typing import Any

__all__ = ["WORK_SECTIONS", "finished"]

# Section number -> what its work is counted by: (the learner's count, the lesson's total).
WORK_SECTIONS = {"04": "predictions", "05": "exercises", "06": "questions", "07": "explained"}


def finished(sections: list[str], totals: dict[str, int], done: dict[str, Any]) -> dict[str, Any]:
    """{"sections": [numbers finished, in order], "lesson": bool}.

    sections: the lesson's section numbers ("01".."08"). totals: {"predictions", "exercises",
    "questions"}: how many the lesson has. done: {"predictions", "exercises", "questions": counts
    done, "explained": bool, "started": bool (any work saved, code included)}.
    """
    def work_done(number: str) -> bool:
        part = WORK_SECTIONS[number]
        if part == "explained":
            return bool(done.get("explained"))
        return int(done.get(part, 0)) >= int(totals.get(part, 0))

    work = [number for number in sections if number in WORK_SECTIONS]
    all_work = all(work_done(number) for number in work)
    first_work = work[0] if work else None
    result = []
    for number in sections:
        if number in WORK_SECTIONS:
            is_done = work_done(number)
        elif first_work is not None and number < first_work:
            is_done = bool(done.get("started"))
        else:
            is_done = all_work
        if is_done:
            result.append(number)
    return {"sections": result, "lesson": len(result) == len(sections) and bool(sections)}

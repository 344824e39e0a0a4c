"""A learner's file that only fits the cases shown: a table of the shown cases' answers, generated from the
exercise folder for each language (what a learner could copy from the result page), and zeros for any
other input."""

from __future__ import annotations

import json

from chainrule.grading import Exercise


def _table(exercise: Exercise) -> str:
    return json.dumps([[case.args, case.expected] for case in exercise.cases])


def answer_table(exercise: Exercise, language: str) -> str:
    marker = f"chainrule exercise: {exercise.id}"
    function = exercise.function_name(language)
    if language == "python":
        return (f"# {marker}\nimport json\n\nTABLE = json.loads({_table(exercise)!r})\n\n\n"
                f"def {function}(*args):\n"
                "    for given, answer in TABLE:\n"
                "        if list(args) == given:\n"
                "            return answer\n"
                "    return [0.0] * len(TABLE[0][1])\n")
    typed = ": any[]" if language == "typescript" else ""
    return (f"// {marker}\nconst TABLE{': [any[], number[]][]' if typed else ''} = {_table(exercise)};\n\n"
            f"function {function}(...args{typed}){': number[]' if typed else ''} {{\n"
            "  const key = JSON.stringify(args);\n"
            "  const found = TABLE.find(([given]) => JSON.stringify(given) === key);\n"
            "  return found ? found[1] : TABLE[0][1].map(() => 0);\n"
            "}\n")

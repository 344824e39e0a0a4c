"""Lesson content as data: the path, the lesson's prose, graphs, predictions and quiz, and their checking.

    from chainrule.lessons import get_lesson, quiz_question, check_quiz_answer
    check_quiz_answer("backprop", "product-gradient", " 6 ")   # {"correct": True, "expected": "6", ...}

The built-in lessons live in chainrule/lessons/data/, one folder each; `add_lesson_dirs` adds lesson
folders from elsewhere. `register_exercises()` registers the built-in lessons' exercise folders with the
grader (chainrule.grading knows folders, not lessons); importing this package registers nothing. Every
number in them is recomputed with the engine (`chainrule lessons check`), and every number in the prose
is filled in from the engine when the lesson loads.
"""

from chainrule.lessons.checking import (
    check_prediction,
    check_quiz_answer,
    fresh_numbers,
    key_idea_ids,
    parse_number,
    prediction_keys,
    question_ids,
    quiz_question,
)
from chainrule.lessons.exercises import carried_source, continued_exercise, exercise_catalog, export_footer
from chainrule.lessons.fresh import variant_for as review_variant
from chainrule.lessons.loader import (
    LANGUAGES,
    UnknownItemError,
    UnknownLessonError,
    add_lesson_dirs,
    added_lesson_ids,
    build_lesson_graph,
    exercise_ids,
    get_path,
    graph_names,
    lesson_data,
    lesson_ids,
    lesson_numbers,
    lesson_shape,
    register_exercises,
)
from chainrule.lessons.page import get_lesson
from chainrule.lessons.text import LessonDataError, format_number

__all__ = [
    "LANGUAGES", "LessonDataError", "add_lesson_dirs", "added_lesson_ids", "UnknownItemError", "UnknownLessonError", "build_lesson_graph",
    "carried_source", "check_prediction", "check_quiz_answer", "continued_exercise", "exercise_catalog", "export_footer", "fresh_numbers", "exercise_ids", "format_number", "get_lesson", "get_path",
    "graph_names", "key_idea_ids", "lesson_data", "lesson_ids", "lesson_numbers", "lesson_shape", "parse_number",
    "prediction_keys", "question_ids", "quiz_question", "register_exercises", "review_variant",
]

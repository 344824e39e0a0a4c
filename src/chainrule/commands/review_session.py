"""`chainrule review` in the terminal: ask each due question, rate it, say when it comes back.

Reads answers line by line from a text stream (stdin in the CLI, a StringIO in tests):
an answer, ``u`` to undo the last rating, ``q`` (or end of input) to stop.
Question text and checking come from chainrule.lessons (``quiz_question``, ``check_quiz_answer``),
asked as the review variant of the card's due time, so that a numeric question comes back with
fresh numbers each review; both can be injected (without variants), so the session can run on a
fixture lesson.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, TextIO

from chainrule.number_text import count_text
from chainrule.progress.shapes import DueReview
from chainrule.progress.store import ProgressStore
from chainrule.text_safety import terminal_text

QuestionFn = Callable[[str, str], dict[str, Any]]
CheckFn = Callable[[str, str, str], dict[str, Any]]
# The same, told which review (the card's due time) is being asked.
ReviewQuestionFn = Callable[[str, str, str], dict[str, Any]]
ReviewCheckFn = Callable[[str, str, str, str], dict[str, Any]]

UNDO = "u"
QUIT = "q"


def _review_functions(question: QuestionFn | None, check: CheckFn | None) -> tuple[ReviewQuestionFn, ReviewCheckFn]:
    """How a session asks and checks. By default the lessons' own functions, asking each review's
    variant (fresh numbers); injected functions know no variants, so with one injected neither
    side uses them (what is asked and what is checked must be the same question)."""
    from_lessons = question is None and check is None
    if question is None or check is None:
        from chainrule.lessons import check_quiz_answer, quiz_question

        question = question or quiz_question
        check = check or check_quiz_answer

    def variant(lesson_id: str, question_id: str, due: str) -> tuple[str, ...]:
        if not from_lessons:
            return ()
        from chainrule.lessons import review_variant

        return (review_variant(lesson_id, question_id, due),)

    def ask(lesson_id: str, question_id: str, due: str) -> dict[str, Any]:
        return question(lesson_id, question_id, *variant(lesson_id, question_id, due))

    def check_review(lesson_id: str, question_id: str, answer: str, due: str) -> dict[str, Any]:
        return check(lesson_id, question_id, answer, *variant(lesson_id, question_id, due))

    return ask, check_review


def format_due(iso: str) -> str:
    """'2026-03-03 09:30 UTC' from an ISO 8601 time."""
    return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M UTC")


def missing_question(lesson_id: str, error: LookupError) -> str:
    """Why a due question cannot be asked: a lesson this session does not know (an added lesson, which
    `--lessons DIR` brings in), or a question its lesson no longer has."""
    from chainrule.lessons import UnknownLessonError

    if isinstance(error, UnknownLessonError):
        return (f"its lesson {lesson_id!r} is not loaded; if you added that lesson, run "
                f"`chainrule review --lessons DIR` with the folder that holds it")
    return "this question is no longer in the lesson"


def answer_sentence(kind: str | None, expected: str) -> str:
    """'The answer is 6.'; an option is a sentence of its own, so it is quoted, not run into ours."""
    text = str(expected).strip()
    if kind == "choice":
        return f"The right answer: \u201c{text.rstrip('.!?')}\u201d."
    return f"The answer is {text}."


def run_review(
    store: ProgressStore,
    stdin: TextIO,
    stdout: TextIO,
    *,
    question: QuestionFn | None = None,
    check: CheckFn | None = None,
) -> int:
    """Run one review session; returns the exit code (0)."""
    session = _Session(store, stdin, stdout, *_review_functions(question, check))
    queue = store.due_reviews()
    if not queue:
        session.nothing_due()
        return 0
    session.list_due(queue)
    on_screen: tuple[str, str] | None = None  # the question last printed, not re-printed on a retry
    while True:
        if not queue:
            # One last chance to take back the final rating before the session ends.
            if session.answer(f"\nAll due questions reviewed. Press Enter to finish, or '{UNDO}' to undo your "
                              "last rating.").strip().lower() != UNDO:
                break
            queue = session.undo_into(queue)
            on_screen = None
            continue
        item = queue[0]
        lesson_id, question_id = item["lesson_id"], item["question_id"]
        try:
            shown = session.ask(lesson_id, question_id, item["due"])
        except LookupError as error:  # not loaded, or the lesson no longer has this question
            session.say(f"\nSkipping {lesson_id}/{question_id}: {missing_question(lesson_id, error)}.")
            queue.pop(0)
            continue
        line = session.answer(*([] if on_screen == (lesson_id, question_id) else _question_lines(lesson_id, shown)))
        on_screen = (lesson_id, question_id)
        if line == "":  # end of input: stop like 'q'
            session.say("")
            break
        typed = line.strip()
        if typed.lower() == QUIT:
            break
        if typed.lower() == UNDO:
            queue = session.undo_into(queue)
            on_screen = None
        elif not typed:
            session.say(f"Type an answer, '{UNDO}' to undo or '{QUIT}' to quit.")
        elif session.rate(item, shown, typed):
            queue.pop(0)
            on_screen = None
    left = len(store.due_reviews())
    session.say(f"\nReviewed {count_text(session.reviewed, 'question')}; {left} still due.")
    return 0


def _question_lines(lesson_id: str, shown: dict[str, Any]) -> list[str]:
    """A question as the terminal shows it: its prompt, and a choice question's numbered options."""
    lines = [f"\n[{lesson_id}] {shown['prompt']}"]
    if shown.get("kind") == "choice":
        lines += [f"  {number}) {option}" for number, option in enumerate(shown.get("options") or [], start=1)]
    return lines


class _Session:
    """One review session at the terminal: what it says, what it reads, and the ratings it made."""

    def __init__(self, store: ProgressStore, stdin: TextIO, stdout: TextIO, ask: ReviewQuestionFn,
                 check: ReviewCheckFn) -> None:
        self.store, self.stdin, self.stdout = store, stdin, stdout
        self.ask, self.check = ask, check
        self.reviewed = 0

    def say(self, text: str = "") -> None:
        # Answers and ids can come from an imported file: shown, never obeyed by the terminal.
        self.stdout.write(terminal_text(text) + "\n")
        self.stdout.flush()

    def answer(self, *before: str) -> str:
        """Say the lines `before`, prompt, and read one line ("" at the end of the input)."""
        for text in before:
            self.say(text)
        self.stdout.write("> ")
        self.stdout.flush()
        return self.stdin.readline()

    def nothing_due(self) -> None:
        upcoming = self.store.next_due()
        if upcoming is None:
            self.say("Nothing to review yet: answer the quiz questions in a lesson to add them.")
        else:
            self.say(f"Nothing is due for review right now; the next question comes back on {format_due(upcoming)}.")

    def list_due(self, queue: list[DueReview]) -> None:
        self.say(f"{count_text(len(queue), 'question')} due for review:")
        for item in queue:
            try:
                prompt = self.ask(item["lesson_id"], item["question_id"], item["due"])["prompt"]
                short = prompt if len(prompt) <= 70 else prompt[:67] + "..."
            except LookupError as error:
                short = f"({missing_question(item['lesson_id'], error)})"  # said whole: it says what to do
            self.say(f"  - [{item['lesson_id']}] {short} (due {format_due(item['due'])})")
        self.say(f"Type your answer and press Enter; '{UNDO}' undoes your last rating, '{QUIT}' quits.")

    def rate(self, item: DueReview, shown: dict[str, Any], typed: str) -> bool:
        """Check the answer and rate the question; False when the answer cannot be checked (asked again)."""
        lesson_id, question_id = item["lesson_id"], item["question_id"]
        verdict = self.check(lesson_id, question_id, typed, item["due"])
        if verdict.get("invalid"):
            self.say(verdict.get("reason", "That answer cannot be checked; try again."))
            return False
        if verdict["correct"]:
            self.say("Right. " + verdict.get("reason", ""))
        else:
            # A hint aimed at this very answer (a named slip, why this option is wrong) says what went wrong;
            # a general "try once more" does not fit here, where the answer is given.
            aimed = f"{verdict['hint']} " if verdict.get("aimed") and verdict.get("hint") else ""
            self.say(f"Not quite. {aimed}{answer_sentence(shown.get('kind'), verdict.get('expected', ''))} "
                     f"{verdict.get('reason', '')}")
        schedule = self.store.review(lesson_id, question_id, typed, bool(verdict["correct"]))
        self.say(f"Next review: {schedule['text']} ({format_due(schedule['due'])}).")
        self.reviewed += 1
        return True

    def undo_into(self, queue: list[DueReview]) -> list[DueReview]:
        """Undo the last rating; if its question is due again, ask it next."""
        undone = self.store.undo_last_review()
        if undone is None:
            self.say("Nothing to undo.")
            return queue
        name = f"{undone['lesson_id']}/{undone['question_id']}"
        if undone["due"] is None:
            self.say(f"Undone: your last rating of {name}; it has no review card any more.")
            return queue
        self.say(f"Undone: your last rating of {name}; it is due again {format_due(undone['due'])}.")
        self.reviewed = max(0, self.reviewed - 1)
        if datetime.fromisoformat(undone["due"]) > self.store.now():
            return queue
        undone_item: DueReview = {"lesson_id": undone["lesson_id"], "question_id": undone["question_id"],
                                  "due": undone["due"]}
        return [undone_item] + [entry for entry in queue if entry != undone_item]

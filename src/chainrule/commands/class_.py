"""`chainrule class ...`: make a class and see it from the terminal (the teacher's view's data).

    chainrule class create "Physics 2b" --url https://class.example.org
    chainrule class list
    chainrule class roster "Physics 2b"            (also: exercises, questions)
    chainrule class mistakes "Physics 2b"          the mistakes the grader named, per exercise: runs, learners, days
    chainrule class timeline "Physics 2b" "Ada"
    chainrule class gradebook "Physics 2b" --csv
    chainrule class optimize "Physics 2b"          fit the review scheduler to the class's pooled logs
    chainrule class invite "Physics 2b"            a new learner invite (the old one stops working)
    chainrule class teacher-link "Physics 2b"      a new one-time sign-in link for the teacher
    chainrule class reset-link "Physics 2b" "Ada"  a one-time link for a learner to set a new password
    chainrule class invite "Physics 2b" --seats 30 --approval   who may join: 30 learners, each let in by the teacher
    chainrule class learners "Physics 2b"          every learner, waiting ones too, and the seats taken
    chainrule class approve "Physics 2b" "Ada"     let a waiting learner in
    chainrule class remove "Physics 2b" "Ada"      remove an account, its work and its runs waiting for the grader
    chainrule class due "Physics 2b" backprop "2026-12-04 23:59" --time-zone Europe/Berlin --late 10%
                                                   a lesson's due date (--exercise ID: one exercise's), the policy
    chainrule class extend "Physics 2b" "Ada" backprop +2      Ada's own due date: 2 days later (or a date)
    chainrule class extend "Physics 2b" --csv extensions.csv   many at once: learner,lesson,due per row
    chainrule class regrade "Physics 2b" neuron-grads           grade each learner's latest run again (--best)
    chainrule class regrade "Physics 2b" --apply 1              the new verdicts count (--revert 1: undo)
    chainrule class override "Physics 2b" "Ada" backprop 6 --reason "..."   credit by hand (also: excuse, undo)
    chainrule class excuse "Physics 2b" "Ada" backprop --exercise neuron-grads --reason "..."   (leaves the count)
    chainrule class audit "Physics 2b"             every change to what learners are credited (--csv)

Each takes --data-dir / --database like `chainrule serve` (the class database: $CHAINRULE_DATABASE, else
class.sqlite in the data folder). Whoever can run these can read that database: they are the admin's.
Errors are one line on stderr with exit code 1.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from chainrule.classes.addresses import DEFAULT_ADDRESS
from chainrule.commands.arguments import whole_number
from chainrule.errors import InputError
from chainrule.number_text import count_text
from chainrule.text_safety import terminal_json, terminal_text

AS_IT_WAS = object()  # --seats not given (None means "any number")


def add_database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", default=None,
                        help="folder of the class's SQLite database, class.sqlite (default: $CHAINRULE_DATA_DIR, "
                             "else the user data folder)")
    parser.add_argument("--database", default=None, metavar="URL",
                        help="a postgresql:// URL: keep the class in PostgreSQL (default: $CHAINRULE_DATABASE)")


def secret_on_command_line(url: str | None) -> str | None:
    """Why ``--database URL`` may not be used as given, or None: a password in it would be on the command
    line, which every user of the machine can read (`ps`, /proc/PID/cmdline)."""
    from urllib.parse import parse_qsl, urlsplit

    if not url:
        return None
    parts = urlsplit(url)
    if parts.password is None and not any(key.strip().lower() == "password" for key, _ in parse_qsl(parts.query)):
        return None
    return ("--database holds a password, and every user of this machine can read a command line. Give the URL "
            "in $CHAINRULE_DATABASE instead (its environment is this user's only), or keep the password out of "
            "the URL in a password file of mode 0600 that PostgreSQL reads itself ($PGPASSFILE, ~/.pgpass).")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("class", help="make a class for `chainrule serve`, and see its progress",
                                   description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="class_command", metavar="ACTION", required=True)

    def action(name: str, function: Callable[[argparse.Namespace], int], help_text: str,
               *arguments: tuple[str, str]) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        for argument, argument_help in arguments:
            sub.add_argument(argument, help=argument_help)
        add_database_options(sub)
        sub.set_defaults(func=_guarded(function))
        return sub

    name = ("name", "the class's name")
    learner = ("learner", "the learner's display name")
    create = action("create", _create, "make a class: prints the teacher's sign-in link and the learners' invite", name)
    create.add_argument("--teacher-name", default="Teacher", help="the teacher's display name (default: Teacher)")
    invite = action("invite", _invite, "a new learner invite link (the old one stops working)", name)
    for sub in (create, invite):
        sub.add_argument("--seats", type=_seats, default=AS_IT_WAS, metavar="N",
                         help="how many learners the class takes (\"none\": any number; default: as it was, none "
                         "for a new class)")
        sub.add_argument("--approval", action=argparse.BooleanOptionalAction, default=None,
                         help="each learner who joins waits until the teacher lets them in (default: as it was, "
                         "off for a new class)")
    action("learners", _learners, "every learner of the class, waiting ones too, and its seats", name)
    action("approve", _approve, "let a learner who joined a class with --approval in", name, learner)
    action("remove", _remove, "remove a learner's account, everything it did, and its runs waiting for the grader",
           name, learner)
    for sub in (create, invite,
                action("teacher-link", _teacher_link, "a new one-time sign-in link for the teacher", name),
                action("reset-link", _reset_link, "a one-time link for a learner to set a new password", name,
                       ("learner", "the learner's display name"))):
        sub.add_argument("--url", default=None, type=_address,
                         help="the address learners open, as `chainrule serve` is reached; the class remembers it "
                         "(default: the address it remembers, from an earlier --url or the first `chainrule serve` "
                         f"that served it, else {DEFAULT_ADDRESS})")
    action("list", _list, "the classes in the database")
    for view in ("roster", "exercises", "questions"):
        sub = action(view, _view, f"the class's {view}, as on the teacher's page", name)
        sub.add_argument("--json", action="store_true", help="print JSON instead of a table")
        sub.add_argument("--section", default=None, help="one section's learners only")
        sub.set_defaults(view=view)
    sub = action("mistakes", _mistakes, "the class's common mistakes: per exercise, the mistakes the grader named in "
                 "runs that did not pass, with their runs, learners, days and hints", name)
    sub.add_argument("--json", action="store_true", help="print JSON instead of text")
    action("import-roster", _import_roster, "add the people of a roster CSV (name, e-mail or school id, section) "
           "to the class: every row, or none", name, ("file", "the CSV file (- : standard input)"))
    action("section", _section, "put a learner in a section (\"\" : none)", name, learner,
           ("section", "the section's name"))
    sub = action("timeline", _timeline, "one learner's runs (with code) and answers", name,
                 ("learner", "the learner's display name"))
    sub.add_argument("--json", action="store_true", help="print JSON instead of text")
    sub = action("optimize", _optimize, "fit the review scheduler (FSRS) to the class's pooled review logs", name)
    sub.add_argument("--steps", type=whole_number(1, "--steps"), default=250,
                     help="Adam steps of the fit (default: 250)")
    _register_dates(action, name)
    _register_marks(action, name, learner)
    sub = action("gradebook", _gradebook, "one row per learner: lessons, exercises, quiz", name)
    sub.add_argument("--csv", action="store_true", required=True, help="print CSV (the only format for now)")
    sub.add_argument("--section", default=None, help="one section's learners only")


def _address(text: str) -> str:
    """--url as classes/addresses.py's one rule has it; refused at once, before anything is made, otherwise."""
    from chainrule.classes.addresses import check_address
    from chainrule.errors import InputError

    try:
        return check_address(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _guarded(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from chainrule.classes.accounts import ClassError  # here: `chainrule --help` builds this parser too
        from chainrule.progress import StoreError

        try:
            return command(args)
        except (ClassError, InputError, StoreError) as error:
            print(f"chainrule class: error: {terminal_text(str(error))}", file=sys.stderr)
            return 1

    return run


def _open(args: argparse.Namespace, *, lessons: bool = True) -> tuple[Any, Any]:
    """The class database and its accounts; with ``lessons``, the class's lessons loaded as its server serves
    them (classes/class_lessons.py), for a command that counts or grades by them."""
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts, ClassError
    from chainrule.classes.class_lessons import use_served_lessons

    refusal = secret_on_command_line(args.database)
    if refusal:
        raise ClassError(refusal, kind="invalid")
    store = open_class_store(args.data_dir, args.database)
    if lessons:
        try:
            use_served_lessons(store)
        except BaseException:
            store.close()
            raise
    return store, Accounts(store)


def _print(text: str) -> None:
    print(terminal_text(text))


def _base(args: argparse.Namespace, store: Any, class_id: int) -> str:
    """The address the class's links are printed with: --url, which the class then remembers, else the one
    it remembers (classes/addresses.py)."""
    from chainrule.classes.addresses import class_address, remember_address

    if args.url is not None:
        remember_address(store, class_id, args.url)
    return class_address(store, class_id)


def _seats(text: str) -> int | None:
    from chainrule.classes.accounts import MAX_SEATS

    if text.strip().lower() == "none":
        return None
    try:
        seats = int(text)
    except ValueError:
        seats = -1
    if not 0 <= seats <= MAX_SEATS:  # refused before the class is made
        raise argparse.ArgumentTypeError(f"--seats takes a whole number from 0 to {MAX_SEATS:,} or \"none\", "
                                         f"not {text!r}")
    return seats


def _admit(accounts: Any, class_id: int, args: argparse.Namespace) -> None:
    """Apply --seats and --approval (each only if given) and then say who may join."""
    given = {} if args.seats is AS_IT_WAS else {"seats": args.seats}
    if args.approval is not None:
        given["approval"] = args.approval
    if not given:
        return
    current = accounts.admission(class_id)
    current = accounts.set_admission(class_id, given.get("seats", current.seats), given.get("approval", current.approval))
    seats = "any number of learners" if current.seats is None else f"{count_text(current.seats, 'learner')} ({current.taken} joined)"
    _print(f"Who may join: {seats}; " + ("each waits until the teacher lets them in."
                                         if current.approval else "no approval needed."))


def _create(args: argparse.Namespace) -> int:
    store, accounts = _open(args, lessons=False)
    with store:
        made = accounts.create_class(args.name, args.teacher_name)
        _admit(accounts, made.class_id, args)
        base = _base(args, store, made.class_id)
    _print(f"Class {made.name!r} is ready.")
    _print("The teacher signs in the first time with this one-time link (it sets the teacher's password; valid 7 days):")
    print(f"    {base}/set-password/{made.teacher_token}")
    _print("Learners join with this invite link (give it to the class only):")
    print(f"    {base}/join/{made.invite_token}")
    return 0


def _invite(args: argparse.Namespace) -> int:
    def make(accounts: Any) -> str:
        token = accounts.new_invite(args.name)
        _admit(accounts, accounts.class_id(args.name), args)
        return token

    return _print_link(args, "join", make)


def _teacher_link(args: argparse.Namespace) -> int:
    return _print_link(args, "set-password", lambda accounts: accounts.new_teacher_link(args.name))


def _print_link(args: argparse.Namespace, page: str, make: Callable[[Any], str]) -> int:
    store, accounts = _open(args, lessons=False)
    with store:
        token = make(accounts)
        base = _base(args, store, accounts.class_id(args.name))
    print(f"{base}/{page}/{token}")
    return 0


def _learner(accounts: Any, class_id: int, name: str) -> Any:
    from chainrule.classes.accounts import ClassError

    found = [learner for learner in accounts.learners(class_id) if learner.name == name.strip()]
    if not found:
        raise ClassError(f"no learner named {name!r} in this class (`chainrule class roster` lists them)",
                         kind="not-found")
    return found[0]


def _reset_link(args: argparse.Namespace) -> int:
    def make(accounts: Any) -> str:
        class_id = accounts.class_id(args.name)
        learner = _learner(accounts, class_id, args.learner)
        return accounts.new_reset_link(_teacher_of(class_id, args.name), learner.id)

    return _print_link(args, "set-password", make)


def _teacher_of(class_id: int, class_name: str) -> Any:
    from chainrule.classes.accounts import TEACHER, Account

    return Account(0, class_id, class_name, TEACHER, "admin", 0)  # the CLI acts for the class's teacher


def _learners(args: argparse.Namespace) -> int:
    from chainrule.classes.roster import Roster

    store, accounts = _open(args, lessons=False)
    with store:
        class_id = accounts.class_id(args.name)
        admission, learners = accounts.admission(class_id), accounts.learners(class_id)
        listed = [entry for entry in Roster(accounts).entries(class_id) if entry["learner_id"] is None]
    seats = "no limit" if admission.seats is None else f"{admission.seats}"
    _print(f"{count_text(admission.taken, 'learner')}; seats: {seats}; approval: {'on' if admission.approval else 'off'}")
    for learner in learners:
        section = f", section {learner.section}" if learner.section else ""
        _print(f"{learner.name}  ({'in the class' if learner.approved else 'waiting for the teacher'}{section})")
    for entry in listed:
        section = f", section {entry['section']}" if entry["section"] else ""
        _print(f"{entry['name']}  (on the roster, not joined yet: {entry['key']}{section})")
    return 0


def _for_a_learner(args: argparse.Namespace, act: Callable[[Any, Any, int, Any], Any]) -> Any:
    """act(accounts, the class's teacher, the learner's id, store) in the open class database (the CLI acts
    for the class's teacher)."""
    store, accounts = _open(args, lessons=False)
    with store:
        class_id = accounts.class_id(args.name)
        return act(accounts, _teacher_of(class_id, args.name), _learner(accounts, class_id, args.learner).id, store)


def _approve(args: argparse.Namespace) -> int:
    learner = _for_a_learner(args, lambda accounts, teacher, learner_id, store: accounts.approve(teacher, learner_id))
    _print(f"{learner.name} is in the class: they can sign in now.")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from chainrule.progress.run_jobs import RunJobs

    def remove(accounts: Any, teacher: Any, learner_id: int, store: Any) -> tuple[Any, int]:
        learner = accounts.remove_learner(teacher, learner_id)
        # Its runs waiting for a worker go too (a class in SQLite has none: its server grades while a page waits).
        return learner, RunJobs(store).forget_learner(learner.id)

    learner, taken_back = _for_a_learner(args, remove)
    runs = f", and {count_text(taken_back, 'run')} waiting for the grader" if taken_back else ""
    _print(f"Removed {learner.name}: the account, its work{runs}.")
    return 0


def _list(args: argparse.Namespace) -> int:
    store, accounts = _open(args, lessons=False)
    with store:
        classes = accounts.classes()
    if not classes:
        _print("No classes yet: make one with `chainrule class create NAME`.")
    for entry in classes:
        _print(f"{entry['name']}  ({count_text(entry['learners'], 'learner')})")
    return 0


def _view(args: argparse.Namespace) -> int:
    from chainrule.classes.class_sections import Sections
    from chainrule.classes.report import ClassReport

    store, accounts = _open(args)
    with store:
        class_id = accounts.class_id(args.name)
        data = ClassReport(store, accounts).overview(class_id, Sections(accounts).chosen(class_id, args.section))
    rows = data[args.view]
    if args.json:
        print(terminal_json(rows))
        return 0
    if args.view == "roster":
        _print(f"{'learner':24} {'sections':>9} {'lessons':>8} {'exercises':>10} {'quiz':>8}  last active")
        for r in rows:
            _print(f"{r['name'][:24]:24} {r['sections_done']:>3} of {r['sections']:<3} {r['lessons_done']:>3} of "
                   f"{r['lessons']:<2} {r['exercises_passed']:>4} of {r['exercises']:<3} {r['quiz_right']:>3} of "
                   f"{r['quiz_questions']:<2}  {r['last_active'] or '-'}")
    elif args.view == "exercises":
        _print(f"{'exercise':24} {'runs':>5} {'first run':>10} {'median':>7}  most common diagnoses of failing runs")
        for r in rows:
            diagnoses = "; ".join(f"{d['diagnosis']} ({d['runs']})" for d in r["diagnoses"]) or "-"
            _print(f"{r['exercise_id'][:24]:24} {r['runs']:>5} {r['passed_first_run_text']:>10} "
                   f"{r['median_runs_to_pass_text']:>7}  {diagnoses}")
    else:
        _print(f"{'question':44} {'answered':>8} {'right':>6} {'recall now':>10}  most chosen wrong answer")
        for r in rows:
            wrong = "-" if r["most_chosen_wrong"] is None else (
                f"{r['most_chosen_wrong']['answer']} ({r['most_chosen_wrong']['times']}x)")
            _print(f"{(r['lesson_id'] + '/' + r['question_id'])[:44]:44} {r['learners_answered']:>8} "
                   f"{r['share_right_text']:>6} {r['recall_now_text']:>10}  {wrong}")
        fading = sorted((r for r in rows if r["recall_now"] is not None), key=lambda r: r["recall_now"])[:3]
        if fading:
            _print("Fading first (lowest predicted recall now): " + ", ".join(
                f"{r['lesson_id']}/{r['question_id']} ({r['recall_now_text']})" for r in fading))
    return 0


def _mistakes(args: argparse.Namespace) -> int:
    from chainrule.classes.misconceptions import common_mistakes

    store, accounts = _open(args)
    with store:
        found = common_mistakes(store, accounts, accounts.class_id(args.name))
    if args.json:
        print(terminal_json(found))
        return 0
    _print(found["said"])
    for entry in found["exercises"]:
        _print(f"{entry['exercise_id']}: {entry['said']}")
        for mistake in entry["mistakes"]:
            days = ", ".join(f"{day['day']} {day['runs']}" for day in mistake["days"])
            _print(f"  {mistake['mistake']:24} {mistake['runs_text']:>9} {mistake['learners_text']:>12}  per day: {days}")
            _print(f"    runs: {', '.join(str(run['run_id']) for run in mistake['recent_runs'])}"
                   + (f" and {mistake['runs_not_listed_text']} more" if mistake["runs_not_listed"] else ""))
            _print(f"    hint: {mistake['hint'] or 'none: the exercise no longer names this mistake'}")
    return 0


def _timeline(args: argparse.Namespace) -> int:
    from chainrule.classes.report import ClassReport

    store, accounts = _open(args)
    with store:
        class_id = accounts.class_id(args.name)
        data = ClassReport(store, accounts).timeline(class_id, _learner(accounts, class_id, args.learner).id)
    if args.json:
        print(terminal_json(data))
        return 0
    for event in data["events"]:
        if event["kind"] == "run":
            verdict = ("imported from the learner's own file (not graded here; counts for nothing)" if event["imported"]
                       else "passed" if event["status"] == "pass" else f"did not pass: {event['diagnosis']}")
            _print(f"{event['at']}  run {event['exercise_id']} ({event['language']}): {verdict}")
            for line in event["source"].splitlines():
                _print(f"    | {line}")
        elif event["kind"] == "answer":
            _print(f"{event['at']}  answered {event['lesson_id']}/{event['question_id']}: {event['answer']!r} "
                   f"({'right' if event['correct'] else 'wrong'}{', imported' if event['imported'] else ''})")
        else:
            what = f"opened hint {event['number']} of" if event["kind"] == "hint" else "was shown the model solution of"
            _print(f"{event['at']}  {what} {event['exercise_id']}")
    for entry in data["explanations"]:
        ticked = ", ".join(idea["id"] for idea in entry["ticked"]) or "none"
        _print(f"explained {entry['lesson_id']} ({entry['at']}; key ideas ticked: {ticked}):")
        for line in entry["text"].splitlines():
            _print(f"    | {line}")
    return 0


def _optimize(args: argparse.Namespace) -> int:
    from chainrule.progress.fitting import class_reviews, fit, save_fit, summary
    from chainrule.progress.scheduling import fit_scope

    store, accounts = _open(args)
    with store:
        class_id = accounts.class_id(args.name)
        result = fit(class_reviews(store, class_id), steps=args.steps)
        if result.steps:
            save_fit(store, fit_scope("class", class_id), result, store.now())
    for line in summary(result):
        _print(line)
    return 0


def _gradebook(args: argparse.Namespace) -> int:
    from chainrule.classes.class_sections import Sections
    from chainrule.classes.report import ClassReport, csv_text

    store, accounts = _open(args)
    with store:
        class_id = accounts.class_id(args.name)
        rows = ClassReport(store, accounts).gradebook(class_id, Sections(accounts).chosen(class_id, args.section))
    sys.stdout.write(terminal_text(csv_text(rows)))
    return 0


def _import_roster(args: argparse.Namespace) -> int:
    """classes/roster.py's import: the file's bytes as they are (its rule checks the encoding and the size)."""
    from chainrule.classes.roster import MAX_ROSTER_BYTES, Roster

    if args.file == "-":
        data = sys.stdin.buffer.read(2 * MAX_ROSTER_BYTES)  # enough to say "too big" without reading it all
    else:
        try:
            with open(args.file, "rb") as file:
                data = file.read(2 * MAX_ROSTER_BYTES)
        except OSError as error:
            raise InputError(f"cannot read {args.file}: {error.strerror}") from None
    store, accounts = _open(args, lessons=False)
    with store:
        outcome = Roster(accounts).import_csv(accounts.class_id(args.name), data)
    _print(f"{outcome.text()}. A listed learner joins with the invite and their e-mail or school id.")
    return 0


def _section(args: argparse.Namespace) -> int:
    from chainrule.classes.class_sections import Sections

    learner = _for_a_learner(args, lambda accounts, teacher, learner_id, store: Sections(accounts).set_section(
        teacher, learner_id, args.section))
    _print(f"{learner.name} is in section {learner.section!r}." if learner.section
           else f"{learner.name} is in no section.")
    return 0


def _print_deadlines(settings: dict) -> None:
    _print(f"Time zone: {settings['time_zone']}; {settings['late_policy_text']}.")
    for entry in settings["due"]:
        what = entry["lesson_id"] + (f" / {entry['exercise_id']}" if entry["exercise_id"] else "")
        _print(f"{what:48} due {entry['due_text']}")
    for entry in settings["extensions"]:
        _print(f"extension: {entry['name']}, {entry['lesson_id']}: due {entry['due_text']}")


def _due(args: argparse.Namespace) -> int:
    from chainrule.classes.accounts import ClassError
    from chainrule.classes.deadlines import Deadlines

    if (args.lesson is None) != (args.date is None) or (args.exercise and args.lesson is None):
        raise ClassError("give a lesson and its date (or neither, to list the dates)", kind="invalid")
    store, accounts = _open(args)
    with store:
        class_id, deadlines = accounts.class_id(args.name), Deadlines(store, accounts)
        settings = deadlines.settings(class_id)
        if args.time_zone is not None or args.late is not None:
            settings = deadlines.set_policy(class_id, time_zone_name=args.time_zone, late=args.late)
        if args.lesson is not None:
            settings = deadlines.set_due(class_id, args.lesson, args.date, exercise=args.exercise)
    _print_deadlines(settings)
    return 0


def _extend(args: argparse.Namespace) -> int:
    from chainrule.classes.accounts import ClassError
    from chainrule.classes.deadlines import Deadlines

    given = [args.learner, args.lesson, args.date]
    if (args.csv is None) == (None in given) or (args.csv is not None and any(given)):
        raise ClassError("give a learner, a lesson and a date, or --csv FILE alone", kind="invalid")
    if args.csv is not None:
        try:
            text = sys.stdin.read() if args.csv == "-" else open(args.csv, encoding="utf-8-sig").read()
        except (OSError, UnicodeDecodeError) as error:
            raise ClassError(f"cannot read {args.csv}: {error}", kind="invalid") from None
    store, accounts = _open(args)
    with store:
        class_id, deadlines = accounts.class_id(args.name), Deadlines(store, accounts)
        if args.csv is not None:
            count = deadlines.extend_from_csv(class_id, text)
            _print(f"{count_text(count, 'extension')} set.")
            settings = deadlines.settings(class_id)
        else:
            settings = deadlines.extend(class_id, _learner(accounts, class_id, args.learner).id, args.lesson, args.date)
    _print_deadlines(settings)
    return 0


def _print_regrade(table: dict) -> None:
    learners = count_text(table["changes"], "learner")
    said = {"grading": f"{count_text(table['waiting'], 'run')} still waiting for the grader", "graded": f"{learners} would change "
            "standing", "applied": f"{learners} changed standing", "reverted": "every standing is as before it"}
    _print(f"Regrade {table['id']} of {table['exercise_id']} ({table['pick']} runs): {table['state']}; "
           f"{said[table['state']]}")
    _print(f"{'learner':24} {'before':>8} {'after':>12}  changes")
    for row in table["rows"]:
        before = "passed" if row["passed_before"] else "not yet"
        after = row["after"] or "waiting"
        _print(f"{row['name'][:24]:24} {before:>8} {after:>12}  {'yes' if row['changes'] else '-'}")


def _regrade(args: argparse.Namespace) -> int:
    import shlex

    import anyio

    from chainrule.classes.accounts import ClassError
    from chainrule.classes.graded_runs import InProcessRuns, QueuedRuns
    from chainrule.classes.regrade import Regrades

    chosen = [args.exercise is not None, args.apply is not None, args.revert is not None, args.list]
    if sum(chosen) != 1:
        raise ClassError("give an exercise to grade again, or one of --apply ID, --revert ID, --list", kind="invalid")
    store, accounts = _open(args)
    with store:
        class_id = accounts.class_id(args.name)
        # The class's own grading seam, as `chainrule serve` builds it: workers where the class is in PostgreSQL.
        runs = (QueuedRuns(store, store.database.url) if store.database.dialect == "postgresql"
                else InProcessRuns.for_class(store))
        try:
            regrades = Regrades(store, accounts, runs)
            if args.list:
                for entry in regrades.list(class_id):
                    _print(f"{entry['id']}  {entry['exercise_id']} ({entry['pick']} runs)  {entry['state']}  "
                           f"{entry['created_at']}")
                return 0
            if args.apply is not None:
                table = regrades.apply(class_id, args.apply)
            elif args.revert is not None:
                table = regrades.revert(class_id, args.revert)
            else:
                regrade_id = regrades.start(class_id, args.exercise, "best" if args.best else "latest")
                table = anyio.run(regrades.grade, class_id, regrade_id)
        finally:
            runs.close()
    _print_regrade(table)
    if table["state"] == "graded":
        _print(f"Nothing counts yet: `chainrule class regrade {shlex.quote(args.name)} --apply {table['id']}` "
               "applies it.")
    return 0


def _register_dates(action: Callable[..., argparse.ArgumentParser], name: tuple[str, str]) -> None:
    """due, extend and regrade: the class's dates and its verdicts again."""
    sub = action("due", _due, "due dates (in the class's time zone) and the late policy: set them, or list them",
                 name)
    sub.add_argument("lesson", nargs="?", help="the lesson's id (leave out to list the dates)")
    sub.add_argument("date", nargs="?", help="YYYY-MM-DD HH:MM or YYYY-MM-DD (23:59), in the class's time zone; "
                     "\"none\" removes it")
    sub.add_argument("--exercise", default=None, help="one exercise of the lesson, due on its own date")
    sub.add_argument("--time-zone", default=None, help="the class's time zone, an IANA name (default: as it was, UTC "
                     "for a new class)")
    sub.add_argument("--late", default=None, metavar="POLICY",
                     help="what late work earns: \"no-credit\" (the default) or a percentage less per day late, like 10%%")
    sub = action("extend", _extend, "a learner's own due date for a lesson (or many, from a CSV)", name)
    for argument, argument_help in (("learner", "the learner's display name (not with --csv)"),
                                    ("lesson", "the lesson's id"),
                                    ("date", "YYYY-MM-DD HH:MM, YYYY-MM-DD, +N (days after the lesson's date) or "
                                             "\"none\"")):
        sub.add_argument(argument, nargs="?", help=argument_help)
    sub.add_argument("--csv", default=None, metavar="FILE",
                     help="a CSV of extensions, one per row: learner,lesson,due (- : standard input); all or none")
    sub = action("regrade", _regrade, "grade an exercise's runs again after its cases changed: who would change "
                 "standing, then --apply or --revert", name)
    sub.add_argument("exercise", nargs="?", help="the exercise's id (each learner's latest run is graded again)")
    sub.add_argument("--best", action="store_true", help="grade each learner's best run instead of the latest")
    group = sub.add_mutually_exclusive_group()
    group.add_argument("--apply", type=whole_number(1, "--apply"), metavar="ID", help="apply regrade ID")
    group.add_argument("--revert", type=whole_number(1, "--revert"), metavar="ID", help="revert regrade ID")
    group.add_argument("--list", action="store_true", help="the class's regrades")


def _register_marks(action: Callable[..., argparse.ArgumentParser], name: tuple[str, str],
                    learner: tuple[str, str]) -> None:
    """override, excuse, undo and audit: a teacher's hand on the gradebook (classes/overrides.py)."""
    lesson = ("lesson", "the lesson's id")
    for command, help_text in (("override", "set a learner's credit of a lesson (or --exercise: 1 passed on time, "
                                            "0 not passed) by hand"),
                               ("excuse", "excuse a learner from a lesson (it leaves the total) or an exercise"),
                               ("undo", "undo an override or excuse: back to the computed credit")):
        arguments = [name, learner, lesson] + ([("credit", "the credit to give")] if command == "override" else [])
        sub = action(command, _mark, help_text, *arguments)
        sub.add_argument("--exercise", default=None, help="one exercise of the lesson instead of the whole lesson")
        sub.add_argument("--reason", required=True, help="why (kept in the audit log; required)")
        sub.set_defaults(mark=command)
    sub = action("audit", _audit, "every change to what the class's learners are credited: who, when, before, "
                 "after, why", name)
    sub.add_argument("--csv", action="store_true", help="print CSV instead of text")


def _mark(args: argparse.Namespace) -> int:
    from chainrule.classes.overrides import Overrides
    from chainrule.errors import InputError

    store, accounts = _open(args)
    with store:
        class_id = accounts.class_id(args.name)
        learner = _learner(accounts, class_id, args.learner)
        overrides = Overrides(store, accounts)
        where: dict[str, Any] = {"exercise": args.exercise}
        if args.mark == "override":
            try:
                credit = float(args.credit)
            except ValueError:
                raise InputError(f"the credit {args.credit!r} is not a number", field="credit") from None
            entry = overrides.override(class_id, learner.id, args.lesson, credit, args.reason, **where)
        elif args.mark == "excuse":
            entry = overrides.excuse(class_id, learner.id, args.lesson, args.reason, **where)
        else:
            entry = overrides.undo(class_id, learner.id, args.lesson, args.reason, **where)
    _print(f"{learner.name}, {args.lesson}: {entry['score_text']}.")
    return 0


def _audit(args: argparse.Namespace) -> int:
    from chainrule.classes.overrides import Overrides, audit_rows
    from chainrule.classes.report import csv_text

    store, accounts = _open(args)
    with store:
        entries = Overrides(store, accounts).audit_all(accounts.class_id(args.name))
    if args.csv:
        sys.stdout.write(terminal_text(csv_text(audit_rows(entries))))
        return 0
    if not entries:
        _print("Nothing has changed what a learner is credited yet.")
    for entry in entries:
        what = " ".join(part for part in (entry["learner_name"], entry["lesson_id"], entry["exercise_id"]) if part)
        _print(f"{entry['at']}  {entry['actor_name']}: {entry['kind']} {what or '(the class)'}: "
               f"{entry['before_text']} -> {entry['after_text']}" + (f"  ({entry['reason']})" if entry["reason"] else ""))
    return 0

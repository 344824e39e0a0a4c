"""Issue 41, items 1 to 4: a learner cannot slow the teacher's page or escape the storage quota, against
`chainrule serve --learner-storage 0.1` and `chainrule class` as real processes on SQLite and PostgreSQL (a quota
of 100,000 characters: the rule is the same at any size, and each test writes a tenth of what 1 MB would take).

- One quota over every table a learner writes (progress/quota.py): imported help and a learner's comments
  count; past it an import, a comment or opening help answers 413 and nothing is kept. The schema itself is
  read, so that a new table with a learner column is either counted or exempt by name.
- The teacher's overview aggregates help in the database: one row per learner and exercise of the path,
  however many help rows a learner imports.
- Comments have a rate (429 with Retry-After) and every view of them is paged (the latest 50, the count of
  earlier ones, and a cursor back).
- Every imported time goes through the one rule for imported times: help dated 1970 or 2999 is refused as
  a quiz answer is.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from chainrule.classes import open_class_store
from class_world import send
from served_class import Served, a_run, class_env, learner_id

pytestmark = pytest.mark.timeout(240)

EXERCISE = "neuron-grads"
QUOTA = 100_000  # --learner-storage 0.1 (MB, in characters)
FIRST = 600  # help rows imported first: about half the quota
COMMENT = "c" * 400
IMPORT = "/api/class/progress/import"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request, tmp_path_factory):
    server = Served(class_env(request, tmp_path_factory), ("-m", "chainrule"), "--learner-storage", "0.1")
    server.backend = request.param
    yield server
    server.stop()


def a_learner(served, class_name: str):
    """(teacher client, learner client) of a new class with one learner, Ada."""
    teacher_link, invite = served.new_class(class_name)
    ada, joined = served.join(invite, "Ada")
    assert joined.status_code == 303, joined.text
    ada.headers["X-CSRF-Token"] = ada.cookies["chainrule_csrf"]
    return served.teacher(teacher_link), ada


def document(**sections) -> dict:
    empty = {name: [] for name in ("predictions", "code", "submissions", "quiz_answers", "explanations", "cards",
                                   "review_logs", "help_used")}
    return {"format": "chainrule.progress", "version": 2, "exported_at": datetime.now(timezone.utc).isoformat(),
            **empty, **sections}


def help_rows(count: int, first: int = 1, exercise: str = EXERCISE, at: str | None = None) -> list[dict]:
    """``count`` hints opened (numbers first, first + 1, ...: no two alike, so none is a duplicate)."""
    at = at or (datetime.now(timezone.utc) - timedelta(seconds=30)).isoformat(timespec="microseconds")
    return [{"lesson_id": "backprop", "exercise_id": exercise, "kind": "hint", "number": number, "at": at}
            for number in range(first, first + count)]


def help_cost(rows: list[dict]) -> int:
    """What the quota counts for help rows, from its documented rule: each text column's characters and 32 a
    row (docs/security.md)."""
    return sum(len(r["lesson_id"]) + len(r["exercise_id"]) + len(r["kind"]) + len(r["at"]) + 32 for r in rows)


def class_database(served):
    return open_class_store(Path(served.env["CHAINRULE_DATA_DIR"]), served.env.get("CHAINRULE_DATABASE"))


# ------------------------------------------------------------------ item 2: one quota over every table


def test_imported_help_and_comments_count_toward_the_one_quota(served):
    teacher, ada = a_learner(served, "Quota")
    run_id = a_run(served, learner_id(ada), "x = 1\n")
    first = help_rows(FIRST)
    assert ada.post(IMPORT, json=document(help_used=first)).status_code == 200
    comment = COMMENT
    for _ in range(20):
        assert send(ada, "POST", f"/api/class/runs/{run_id}/comments", json={"body": comment}).status_code == 200
    # The run (a_run: its submission and the latest code) and each comment, by the same rule: a submission
    # its exercise, language, source, result (JSON), status and time, the code its exercise, language, source
    # and time; a comment its body and time (a time: 32 characters).
    run = len(EXERCISE) + len("python") + len("x = 1\n") + len('{"status": "fail"}') + len("fail") + 32 + 32
    code = len(EXERCISE) + len("python") + len("x = 1\n") + 32 + 32
    kept = run + code + help_cost(first) + 20 * (len(comment) + 32 + 32)
    assert kept < QUOTA

    # Help that would pass the quota only if help and comments were not counted (the harm: both passed).
    second = help_rows(QUOTA // 88 - FIRST + 10, first=10_000)
    assert kept + help_cost(second) > QUOTA and help_cost(second) < QUOTA
    refused = ada.post(IMPORT, json=document(help_used=second))
    assert refused.status_code == 413, refused.text
    assert "each learner may keep 0.1 MB" in refused.json()["detail"]
    assert len(ada.get("/api/class/progress/export").json()["help_used"]) == FIRST  # nothing of it kept

    # What fits is kept; then a learner's comment past the quota is refused (a teacher's is not counted).
    room = (QUOTA - kept) // 88  # 88: a help row here (help_cost); up to the quota exactly
    assert ada.post(IMPORT, json=document(help_used=help_rows(room, first=50_000))).status_code == 200
    over = send(ada, "POST", f"/api/class/runs/{run_id}/comments", json={"body": comment})
    assert over.status_code == 413 and "This comment would take your storage past its limit" in over.json()["detail"]
    assert send(teacher, "POST", f"/api/class/runs/{run_id}/comments", json={"body": comment}).status_code == 200
    [run] = ada.get("/api/class/comments").json()["runs"]
    assert len(run["comments"]) + run["earlier_comments"] == 21  # 20 of Ada's, the teacher's; not the refused one
    # Opening a hint keeps a row too: past the quota it is refused the same way.
    hint = ada.get(f"/api/lessons/backprop/exercises/{EXERCISE}/hints/1")
    assert hint.status_code == 413, hint.text


def learner_tables_of_the_schema(tmp_path: Path) -> dict[str, set[str]]:
    """Every table of the migrated schema with a column that says whose a row is, and its columns."""
    from chainrule.progress import open_store
    from chainrule.progress.quota import LEARNER_COLUMNS

    store = open_store(data_dir=tmp_path, file_name="schema.sqlite")
    store.initialize()
    store.close()
    with sqlite3.connect(tmp_path / "schema.sqlite") as conn:
        tables = [name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        columns = {table: {row[1] for row in conn.execute(f"PRAGMA table_info({table})")} for table in tables}
    return {table: names for table, names in columns.items() if names & set(LEARNER_COLUMNS) or table == "accounts"}


def test_every_table_with_a_learner_column_is_counted_or_exempt_by_name(tmp_path):
    from chainrule.progress.quota import EXEMPT, LEARNER_TABLES

    found = learner_tables_of_the_schema(tmp_path)
    forgotten = set(found) - set(LEARNER_TABLES) - set(EXEMPT)
    assert not forgotten, f"tables a learner's rows live in, neither counted nor exempt: {sorted(forgotten)}"
    assert "help_used" in LEARNER_TABLES and "comments" in LEARNER_TABLES
    for table, (owner, counted) in LEARNER_TABLES.items():
        assert {owner, *counted} <= found[table], table
    assert not set(LEARNER_TABLES) & set(EXEMPT)


# ------------------------------------------------------------------ item 1: the overview's cost


def test_the_overview_reads_one_help_row_per_learner_and_exercise_however_many_are_imported(served):
    from chainrule.progress.class_store import help_by_exercise

    teacher, ada = a_learner(served, "Overview")
    ada_id = learner_id(ada)
    solution_at = (datetime.now(timezone.utc) - timedelta(seconds=20)).isoformat()
    many = (help_rows(150) + help_rows(150, exercise="no-such-exercise")
            + [{"lesson_id": "backprop", "exercise_id": EXERCISE, "kind": "solution", "number": 0, "at": solution_at}])
    assert ada.post(IMPORT, json=document(help_used=many)).status_code == 200
    store = class_database(served)
    try:
        def rows(conn):
            class_id = conn.execute("SELECT class_id FROM accounts WHERE id = ?", (ada_id,)).fetchone()[0]
            return help_by_exercise(conn, class_id, (EXERCISE, "chain-rule-basics"))

        found = store.database.read(rows)
    finally:
        store.close()
    assert found == [(ada_id, EXERCISE, 150, solution_at)]  # one row, not 301
    overview = teacher.get("/api/class/overview").json()
    [row] = [entry for entry in overview["roster"] if entry["id"] == ada_id]
    [backprop] = [lesson for lesson in row["grid"] if lesson["lesson_id"] == "backprop"]
    assert backprop["help"][EXERCISE]["hints"] == 150 and backprop["help"][EXERCISE]["solution_shown"] is True


# ------------------------------------------------------------------ item 3: a comment rate, paged views


def test_a_learners_comments_have_a_rate_and_every_view_of_them_is_paged(served):
    teacher, ada = a_learner(served, "Paged")
    ada_id = learner_id(ada)
    run_id = a_run(served, ada_id, "x = 1\n")
    for number in range(30):
        assert send(ada, "POST", f"/api/class/runs/{run_id}/comments", json={"body": f"a{number}"}).status_code == 200
    limited = send(ada, "POST", f"/api/class/runs/{run_id}/comments", json={"body": "one more"})
    assert limited.status_code == 429, limited.text
    assert 1 <= int(limited.headers["retry-after"]) <= 600 and "30 comments" in limited.json()["detail"]
    for number in range(30):  # the teacher has no rate
        assert send(teacher, "POST", f"/api/class/runs/{run_id}/comments", json={"body": f"t{number}"}).status_code == 200

    written = [f"a{n}" for n in range(30)] + [f"t{n}" for n in range(30)]
    for client, path in ((teacher, f"/api/class/learners/{ada_id}/runs"), (ada, "/api/class/comments")):
        [run] = client.get(path).json()["runs"]
        assert [c["body"] for c in run["comments"]] == written[10:] and run["earlier_comments"] == 10, path
        back = client.get(f"/api/class/runs/{run_id}/earlier-comments", params={"before": run["comments"][0]["id"]}).json()
        assert [c["body"] for c in back["comments"]] == written[:10] and back["earlier_comments"] == 0
    stranger_teacher, _ = a_learner(served, "Paged elsewhere")
    assert stranger_teacher.get(f"/api/class/runs/{run_id}/earlier-comments", params={"before": 10**6}).status_code == 404


# ------------------------------------------------------------------ item 4: the one rule for imported times


@pytest.mark.parametrize("served", ["sqlite"], indirect=True)  # the rule is checked before the store is touched
def test_help_dated_outside_the_accounts_life_is_refused_like_a_quiz_answer(served):
    teacher, ada = a_learner(served, "Dated")
    for at in ("1970-01-01T00:00:00+00:00", "2999-01-01T00:00:00+00:00"):
        help_used = [{"lesson_id": "backprop", "exercise_id": EXERCISE, "kind": "hint", "number": 1,
                      "at": (datetime.now(timezone.utc) - timedelta(seconds=30)).isoformat()},
                     {"lesson_id": "backprop", "exercise_id": EXERCISE, "kind": "solution", "number": 0, "at": at}]
        answer = ada.post(IMPORT, json=document(help_used=help_used))
        assert answer.status_code == 422, answer.text
        assert "outside your account's life" in answer.json()["detail"]
        assert f"help_used[1].at is {at}" in answer.json()["detail"]
    assert ada.get("/api/class/progress/export").json()["help_used"] == []


def test_every_section_of_the_file_has_its_times_held_to_the_rule():
    from chainrule.progress.exchange import SECTIONS, TIME_FIELDS

    assert set(TIME_FIELDS) == set(SECTIONS)
    for section, (fields, _) in SECTIONS.items():
        if "at" in fields:
            assert "at" in TIME_FIELDS[section], section
    assert TIME_FIELDS["help_used"] == ("at",)

"""The progress database schema, as an ordered list of migrations (applied by migrations.py).

Each step runs on SQLite and on PostgreSQL; its DDL is written in SQLite's words (dialect.py renders
the few PostgreSQL spells differently). Never edit a migration that has shipped: append a
new function to MIGRATIONS instead.
"""

from __future__ import annotations

from typing import Callable

from chainrule.progress.connection import Connection
from chainrule.progress.migrations import run_statements as _run_statements


def _migration_1_initial(conn: Connection) -> None:
    """Everything a learner does: predictions, code, submissions, quiz, explanations, review cards."""
    _run_statements(
        conn,
        """
        CREATE TABLE predictions (
            lesson_id TEXT NOT NULL,
            key       TEXT NOT NULL,
            value     REAL NOT NULL,
            correct   INTEGER NOT NULL,
            at        TEXT NOT NULL,
            PRIMARY KEY (lesson_id, key)
        );
        -- Latest source per exercise and language (the editor's content).
        CREATE TABLE code (
            exercise_id TEXT NOT NULL,
            language    TEXT NOT NULL,
            source      TEXT NOT NULL,
            at          TEXT NOT NULL,
            PRIMARY KEY (exercise_id, language)
        );
        -- Every graded run, kept forever.
        CREATE TABLE submissions (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            exercise_id TEXT NOT NULL,
            language    TEXT NOT NULL,
            source      TEXT NOT NULL,
            result      TEXT NOT NULL,      -- JSON of the grading result
            status      TEXT NOT NULL,      -- result["status"], for counting passes
            at          TEXT NOT NULL
        );
        CREATE INDEX submissions_by_exercise ON submissions (exercise_id, language, id);
        -- Every answer given to a lesson's quiz (not the answers given in review).
        CREATE TABLE quiz_answers (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            lesson_id   TEXT NOT NULL,
            question_id TEXT NOT NULL,
            answer      TEXT NOT NULL,
            correct     INTEGER NOT NULL,
            at          TEXT NOT NULL
        );
        CREATE INDEX quiz_answers_by_question ON quiz_answers (lesson_id, question_id, id);
        CREATE TABLE explanations (
            lesson_id TEXT PRIMARY KEY,
            text      TEXT NOT NULL,
            ticked    TEXT NOT NULL,        -- JSON list of key-idea ids
            at        TEXT NOT NULL
        );
        -- One FSRS card per quiz question (card: fsrs.Card.to_dict() as JSON).
        CREATE TABLE cards (
            lesson_id   TEXT NOT NULL,
            question_id TEXT NOT NULL,
            card        TEXT NOT NULL,
            due_ts      REAL NOT NULL,      -- card.due as epoch seconds, for the due query
            PRIMARY KEY (lesson_id, question_id)
        );
        CREATE INDEX cards_by_due ON cards (due_ts);
        -- One row per rating. previous_card is the card before this rating (NULL if it was new)
        -- so undo can restore it exactly.
        CREATE TABLE review_logs (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            lesson_id     TEXT NOT NULL,
            question_id   TEXT NOT NULL,
            kind          TEXT NOT NULL,    -- 'quiz' (answered in the lesson) or 'review'
            answer        TEXT NOT NULL,
            correct       INTEGER NOT NULL,
            rating        INTEGER NOT NULL,
            log           TEXT NOT NULL,    -- fsrs.ReviewLog.to_dict() as JSON
            previous_card TEXT,
            card_after    TEXT NOT NULL,
            undone        INTEGER NOT NULL DEFAULT 0,
            at            TEXT NOT NULL
        );
        CREATE INDEX review_logs_by_card ON review_logs (lesson_id, question_id, id);
        """
    )


# Every table of migration 1 with a learner_id in front: (name, columns after learner_id, key, index).
# learner_id 0 is the one learner of a personal store; a class store's learners are account ids.
_LEARNER_TABLES = (
    ("predictions", "lesson_id TEXT NOT NULL, key TEXT NOT NULL, value REAL NOT NULL, correct INTEGER NOT NULL, "
     "at TEXT NOT NULL", "lesson_id, key", None),
    ("code", "exercise_id TEXT NOT NULL, language TEXT NOT NULL, source TEXT NOT NULL, at TEXT NOT NULL",
     "exercise_id, language", None),
    ("submissions", "id INTEGER PRIMARY KEY AUTOINCREMENT, exercise_id TEXT NOT NULL, language TEXT NOT NULL, "
     "source TEXT NOT NULL, result TEXT NOT NULL, status TEXT NOT NULL, at TEXT NOT NULL",
     None, ("submissions_by_exercise", "exercise_id, language, id")),
    ("quiz_answers", "id INTEGER PRIMARY KEY AUTOINCREMENT, lesson_id TEXT NOT NULL, question_id TEXT NOT NULL, "
     "answer TEXT NOT NULL, correct INTEGER NOT NULL, at TEXT NOT NULL",
     None, ("quiz_answers_by_question", "lesson_id, question_id, id")),
    ("explanations", "lesson_id TEXT NOT NULL, text TEXT NOT NULL, ticked TEXT NOT NULL, at TEXT NOT NULL",
     "lesson_id", None),
    ("cards", "lesson_id TEXT NOT NULL, question_id TEXT NOT NULL, card TEXT NOT NULL, due_ts REAL NOT NULL",
     "lesson_id, question_id", ("cards_by_due", "due_ts")),
    ("review_logs", "id INTEGER PRIMARY KEY AUTOINCREMENT, lesson_id TEXT NOT NULL, question_id TEXT NOT NULL, "
     "kind TEXT NOT NULL, answer TEXT NOT NULL, correct INTEGER NOT NULL, rating INTEGER NOT NULL, "
     "log TEXT NOT NULL, previous_card TEXT, card_after TEXT NOT NULL, undone INTEGER NOT NULL DEFAULT 0, "
     "at TEXT NOT NULL", None, ("review_logs_by_card", "lesson_id, question_id, id")),
)


def _migration_2_learner_per_row(conn: Connection) -> None:
    """Every row belongs to a learner, so that one database can hold a class (0: a personal store's learner).

    A key cannot be changed in place in SQLite: each table is rebuilt with learner_id in its key and
    indexes, its rows copied with learner 0, ids kept."""
    for table, columns, key, index in _LEARNER_TABLES:
        names = [part.split()[0] for part in columns.split(", ") if not part.startswith(("PRIMARY", "UNIQUE"))]
        primary = f", PRIMARY KEY (learner_id, {key})" if key else ""
        _run_statements(
            conn,
            f"CREATE TABLE {table}_v2 (learner_id INTEGER NOT NULL DEFAULT 0, {columns} {primary});"
            f"INSERT INTO {table}_v2 (learner_id, {', '.join(names)}) SELECT 0, {', '.join(names)} FROM {table};"
            f"DROP TABLE {table};"
            f"ALTER TABLE {table}_v2 RENAME TO {table}",
        )
        if index is not None:
            conn.execute(f"CREATE INDEX {index[0]} ON {table} (learner_id, {index[1]})")
        if "id" in names:
            conn.speaks.restart_ids(conn, table)  # copied ids do not move PostgreSQL's identity sequence


def _migration_3_classes(conn: Connection) -> None:
    """Class mode: classes, their accounts (a teacher, learners), one-time links, sign-in attempts, and
    the secret that signs session cookies (in the database, so that every web process shares it)."""
    _run_statements(
        conn,
        """
        CREATE TABLE classes (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            name        TEXT NOT NULL UNIQUE,
            invite_hash TEXT NOT NULL UNIQUE,   -- SHA-256 of the learner invite token
            created_at  TEXT NOT NULL
        );
        CREATE TABLE accounts (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            class_id      INTEGER NOT NULL REFERENCES classes (id),
            role          TEXT NOT NULL,        -- 'teacher' or 'learner'
            name          TEXT NOT NULL,        -- the display name, unique in its class
            password_hash TEXT,                 -- argon2id, NULL until the account sets one
            session_epoch INTEGER NOT NULL DEFAULT 0,  -- raised on a password change, which ends older sessions
            created_at    TEXT NOT NULL,
            last_active   TEXT,
            UNIQUE (class_id, name)
        );
        -- One-time links: a teacher's first sign-in, a password reset. Only the SHA-256 of the token is kept.
        CREATE TABLE one_time_links (
            token_hash TEXT PRIMARY KEY,
            account_id INTEGER NOT NULL REFERENCES accounts (id),
            purpose    TEXT NOT NULL,           -- 'set-password'
            expires_ts REAL NOT NULL,
            used_at    TEXT
        );
        -- Failed sign-ins, per account and per client address, for rate limiting across web processes.
        CREATE TABLE sign_in_failures (
            id    INTEGER PRIMARY KEY AUTOINCREMENT,
            scope TEXT NOT NULL,                -- 'account:<id>' or 'address:<ip>'
            at_ts REAL NOT NULL
        );
        CREATE INDEX sign_in_failures_by_scope ON sign_in_failures (scope, at_ts);
        CREATE TABLE server_secrets (
            name  TEXT PRIMARY KEY,
            value TEXT NOT NULL
        )
        """,
    )


def _migration_4_grading_jobs(conn: Connection) -> None:
    """Class mode's graded runs waiting for, or taken by, a worker (progress/run_jobs.py). The queue itself
    is procrastinate's (its own tables); this row is what the learner's page watches and what makes a
    run count once however often a worker starts it."""
    _run_statements(
        conn,
        """
        CREATE TABLE grading_jobs (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            learner_id    INTEGER NOT NULL,
            request_key   TEXT NOT NULL,        -- the page's key for one click: a resent request finds its job
            exercise_id   TEXT NOT NULL,
            language      TEXT NOT NULL,
            source        TEXT NOT NULL,
            state         TEXT NOT NULL,        -- 'queued', 'running', 'graded' or 'ended' (not graded: see result)
            submitted_ts  DOUBLE PRECISION NOT NULL,
            deadline_ts   DOUBLE PRECISION NOT NULL,  -- not graded by then: it ends with the verdict 'expired'
            started_ts    DOUBLE PRECISION,
            finished_ts   DOUBLE PRECISION,
            attempts      INTEGER NOT NULL DEFAULT 0,  -- how many times a worker started it
            worker        TEXT,                 -- the host and process that last took it
            queue_job_id  INTEGER,              -- procrastinate's job, once deferred
            result        TEXT,                 -- the grading result (JSON) once graded or ended
            submission_id INTEGER,              -- the submissions row it became
            UNIQUE (learner_id, request_key)
        );
        CREATE INDEX grading_jobs_by_state ON grading_jobs (state, id);
        CREATE INDEX grading_jobs_by_learner ON grading_jobs (learner_id, state)
        """,
    )


def _migration_5_imported_rows(conn: Connection) -> None:
    """Runs and quiz answers a learner brought into a class from a file are kept apart from the work done
    there (origin 'imported'): the teacher sees them as imported, and an imported run counts for nothing
    (its code is graded again by the class's own grader: classes/imports.py)."""
    for table in ("submissions", "quiz_answers"):
        conn.execute(f"ALTER TABLE {table} ADD COLUMN origin TEXT NOT NULL DEFAULT ''")


def _migration_6_school_systems(conn: Connection) -> None:
    """Class mode inside the school's systems (classes/lti.py, classes/sso.py): LMS platforms registered for
    LTI 1.3, logins in progress, one class per LMS course, accounts linked by the platform's (or the sign-in
    provider's) issuer and subject, the LMS's gradebook columns, and the outbox of scores the LMS has not
    acknowledged yet (kept until it has, however long the LMS is down)."""
    _run_statements(
        conn,
        """
        CREATE TABLE lti_platforms (
            id             INTEGER PRIMARY KEY AUTOINCREMENT,
            issuer         TEXT NOT NULL,
            client_id      TEXT NOT NULL,
            name           TEXT NOT NULL,
            auth_login_url TEXT NOT NULL,       -- the platform's OIDC authorization endpoint
            token_url      TEXT NOT NULL,       -- its OAuth 2 token endpoint (grades, roster)
            jwks_url       TEXT NOT NULL,       -- its public keys
            token_audience TEXT NOT NULL,       -- aud of the tool's client assertion ('' : the token URL)
            lms_origins    TEXT NOT NULL,       -- JSON list of the origins whose pages may frame the tool
            created_at     TEXT NOT NULL,
            UNIQUE (issuer, client_id)
        );
        CREATE TABLE lti_deployments (
            platform_id   INTEGER NOT NULL REFERENCES lti_platforms (id),
            deployment_id TEXT NOT NULL,
            PRIMARY KEY (platform_id, deployment_id)
        );
        -- An OIDC login in progress: its state (only the SHA-256 is kept), the nonce the id_token must carry,
        -- and the login's own parameters (to start it again in a new window where the frame has no cookies).
        CREATE TABLE lti_logins (
            state_hash  TEXT PRIMARY KEY,
            platform_id INTEGER NOT NULL REFERENCES lti_platforms (id),
            nonce       TEXT NOT NULL,
            target      TEXT NOT NULL,
            relaunch    TEXT NOT NULL,
            created_ts  REAL NOT NULL,
            used_ts     REAL DEFAULT NULL
        );
        CREATE INDEX lti_logins_by_age ON lti_logins (created_ts);
        -- One class per LMS course (context), with the course's service endpoints as its last launch gave them.
        CREATE TABLE lti_contexts (
            id              INTEGER PRIMARY KEY AUTOINCREMENT,
            platform_id     INTEGER NOT NULL REFERENCES lti_platforms (id),
            context_id      TEXT NOT NULL,
            class_id        INTEGER NOT NULL UNIQUE REFERENCES classes (id),
            title           TEXT NOT NULL,
            lineitems_url   TEXT NOT NULL DEFAULT '',
            ags_scopes      TEXT NOT NULL DEFAULT '[]',
            memberships_url TEXT NOT NULL DEFAULT '',
            frame_origin    TEXT NOT NULL DEFAULT '',
            UNIQUE (platform_id, context_id)
        );
        CREATE TABLE lti_users (
            issuer     TEXT NOT NULL,
            subject    TEXT NOT NULL,
            class_id   INTEGER NOT NULL REFERENCES classes (id),
            account_id INTEGER NOT NULL UNIQUE REFERENCES accounts (id),
            PRIMARY KEY (issuer, subject, class_id)
        );
        -- The LMS's gradebook columns (line items) of each lesson, or of the whole path ('path'), in a course.
        -- url '' marks a column being made (claimed_ts: since when), so that two processes never make two.
        CREATE TABLE lti_line_items (
            context_row INTEGER NOT NULL REFERENCES lti_contexts (id),
            resource    TEXT NOT NULL,
            url         TEXT NOT NULL,
            claimed_ts  REAL NOT NULL,
            PRIMARY KEY (context_row, resource, url)
        );
        -- The outbox: each learner's latest score per lesson (or path), until the LMS has acknowledged it.
        CREATE TABLE lti_scores (
            account_id    INTEGER NOT NULL REFERENCES accounts (id),
            resource      TEXT NOT NULL,
            score_given   REAL NOT NULL,
            score_maximum REAL NOT NULL,
            completed     INTEGER NOT NULL,
            work_at       TEXT NOT NULL,         -- when the work that made this score was done
            version       INTEGER NOT NULL,      -- raised at each change
            sent_version  INTEGER NOT NULL DEFAULT 0,  -- the version the LMS acknowledged
            attempts      INTEGER NOT NULL DEFAULT 0,
            next_ts       REAL NOT NULL,         -- not sent again before
            claimed_ts    REAL NOT NULL DEFAULT 0,  -- a sender is on it since (0: nobody)
            last_error    TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (account_id, resource)
        );
        CREATE INDEX lti_scores_due ON lti_scores (sent_version, next_ts);
        -- What the score scan last saw of each linked learner's work (a change means: compute the scores again).
        CREATE TABLE lti_work_seen (
            account_id INTEGER PRIMARY KEY REFERENCES accounts (id),
            signature  TEXT NOT NULL
        );
        -- OpenID Connect sign-in providers of a standalone class server, and the accounts linked to them.
        CREATE TABLE sso_providers (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            name          TEXT NOT NULL UNIQUE,
            issuer        TEXT NOT NULL,
            client_id     TEXT NOT NULL,
            client_secret TEXT NOT NULL,
            created_at    TEXT NOT NULL
        );
        CREATE TABLE sso_logins (
            state_hash  TEXT PRIMARY KEY,
            provider_id INTEGER NOT NULL REFERENCES sso_providers (id),
            nonce       TEXT NOT NULL,
            verifier    TEXT NOT NULL,         -- the PKCE code verifier
            intent      TEXT NOT NULL,         -- JSON: sign in, join a class, link an account
            created_ts  REAL NOT NULL,
            used_ts     REAL DEFAULT NULL
        );
        CREATE TABLE sso_users (
            issuer     TEXT NOT NULL,
            subject    TEXT NOT NULL,
            class_id   INTEGER NOT NULL REFERENCES classes (id),
            account_id INTEGER NOT NULL UNIQUE REFERENCES accounts (id),
            PRIMARY KEY (issuer, subject, class_id)
        );
        -- A class whose teacher turned passwords off signs in through a provider only.
        CREATE TABLE class_sign_in (
            class_id  INTEGER PRIMARY KEY REFERENCES classes (id),
            passwords INTEGER NOT NULL
        )
        """,
    )


def _migration_7_class_seats(conn: Connection) -> None:
    """The teacher decides who is in: a class takes at most ``seats`` learners (NULL: any number), and with
    ``approval`` a learner who joins waits (accounts.approved 0) until the teacher lets them in. Workers take
    learners in fair turns, which asks when each learner was last served (the index)."""
    _run_statements(
        conn,
        """
        ALTER TABLE classes ADD COLUMN seats INTEGER;
        ALTER TABLE classes ADD COLUMN approval INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE accounts ADD COLUMN approved INTEGER NOT NULL DEFAULT 1;
        CREATE INDEX grading_jobs_by_learner_start ON grading_jobs (learner_id, started_ts)
        """,
    )


def _migration_8_scheduler_fits(conn: Connection) -> None:
    """FSRS parameters fitted to review logs (progress/fitting.py): a learner's own (a personal store), or a
    class's, from its learners' pooled logs. They schedule only when `used`: they predicted held-out
    reviews better than the defaults."""
    _run_statements(
        conn,
        """
        CREATE TABLE scheduler_fits (
            scope      TEXT PRIMARY KEY,    -- 'learner:<id>' or 'class:<id>'
            parameters TEXT NOT NULL,       -- JSON list of FSRS's 21 parameters
            used       INTEGER NOT NULL,    -- 1: they schedule, 0: the defaults did as well on held-out reviews
            result     TEXT NOT NULL,       -- JSON: held-out log-losses, counts, time (FitResult)
            at         TEXT NOT NULL
        )
        """,
    )


def _migration_9_due_dates_and_regrades(conn: Connection) -> None:
    """Due dates and regrades. Due dates (classes/deadlines.py): a class's time zone and late policy, a due date per lesson (exercise
    '') or per exercise, as the wall-clock time of the class's zone, and each learner's extensions per lesson.
    Credit is computed from these and the work's own times, never stored: moving a date recomputes it.
    Regrades: see the tables' comment."""
    _run_statements(
        conn,
        """
        ALTER TABLE classes ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
        ALTER TABLE classes ADD COLUMN late_policy TEXT NOT NULL DEFAULT 'no-credit';  -- or 'per-day'
        ALTER TABLE classes ADD COLUMN late_percent INTEGER NOT NULL DEFAULT 0;        -- per day late, 'per-day'
        CREATE TABLE due_dates (
            class_id    INTEGER NOT NULL REFERENCES classes (id),
            lesson_id   TEXT NOT NULL,
            exercise_id TEXT NOT NULL,          -- '' : the whole lesson
            due         TEXT NOT NULL,          -- 'YYYY-MM-DDTHH:MM' in the class's time zone
            PRIMARY KEY (class_id, lesson_id, exercise_id)
        );
        CREATE TABLE extensions (
            learner_id INTEGER NOT NULL REFERENCES accounts (id),
            lesson_id  TEXT NOT NULL,
            due        TEXT NOT NULL,           -- the learner's own due date of the lesson's work, same form
            PRIMARY KEY (learner_id, lesson_id)
        );
        -- Regrades (classes/regrade.py): an exercise's runs graded again after its cases changed. Each
        -- learner's chosen run goes through the class's grader as a run of theirs kept apart (origin
        -- 'regrade:<id>') until the teacher applies it, then their earlier runs of the exercise are kept
        -- apart instead (origin 'superseded:<id>'), and reverting swaps them back.
        CREATE TABLE regrades (
            id             INTEGER PRIMARY KEY AUTOINCREMENT,
            class_id       INTEGER NOT NULL REFERENCES classes (id),
            exercise_id    TEXT NOT NULL,
            pick           TEXT NOT NULL,       -- 'latest' or 'best': which run of each learner
            cases          TEXT NOT NULL,       -- SHA-256 of the exercise's cases it grades with
            nonce          TEXT NOT NULL,       -- in each run's key, so no learner can make one beforehand
            state          TEXT NOT NULL,       -- 'grading', 'graded', 'applied' or 'reverted'
            last_run       INTEGER NOT NULL,    -- the highest submission id when it started
            created_at     TEXT NOT NULL
        );
        CREATE TABLE regrade_runs (
            regrade_id    INTEGER NOT NULL REFERENCES regrades (id),
            learner_id    INTEGER NOT NULL,
            submission_id INTEGER NOT NULL,     -- the run graded again
            language      TEXT NOT NULL,
            passed_before INTEGER NOT NULL,     -- the learner had passed the exercise when it started
            after_status  TEXT,                 -- the run's status with the new cases (NULL: not graded yet)
            job_id        INTEGER,              -- its job, where runs wait for workers
            new_run       INTEGER,              -- the submission it became (set when applied)
            PRIMARY KEY (regrade_id, learner_id)
        )
        """,
    )


def _migration_10_people_and_comments(conn: Connection) -> None:
    """A class's life and its feedback (classes/people.py, classes/comments.py): a class is 'open', 'closed'
    (no one joins, its learners' work is read-only) or 'archived' (read-only for its teachers too); the
    invite's salt, from which the server derives the current invite again to show it on the teacher's page;
    and comments on a learner's run (a line, or the whole file when line is NULL), by a teacher or, as an
    answer, by the run's learner."""
    _run_statements(
        conn,
        """
        ALTER TABLE classes ADD COLUMN state TEXT NOT NULL DEFAULT 'open';
        ALTER TABLE classes ADD COLUMN invite_salt TEXT;
        CREATE TABLE comments (
            id            INTEGER PRIMARY KEY AUTOINCREMENT,
            learner_id    INTEGER NOT NULL,     -- whose run: the thread belongs to that learner
            submission_id INTEGER NOT NULL,
            author_id     INTEGER NOT NULL,     -- a teacher of the class, or the learner answering
            line          INTEGER,              -- 1-based line of the run's source, NULL for the whole file
            body          TEXT NOT NULL,        -- Markdown as written, rendered by the pages as text
            at            TEXT NOT NULL
        );
        CREATE INDEX comments_by_run ON comments (learner_id, submission_id, id)
        """,
    )


def _migration_11_help_used(conn: Connection) -> None:
    """Each hint a learner opened and each model solution shown to them (web/routes_api.py), so that the
    teacher tells a pass after the solution from an earned one. number: the hint's (1-based), 0 for the
    solution. Numbered 11 (issue 29: the deadlines take 9, people 10)."""
    _run_statements(
        conn,
        """
        CREATE TABLE help_used (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            learner_id  INTEGER NOT NULL DEFAULT 0,
            lesson_id   TEXT NOT NULL,
            exercise_id TEXT NOT NULL,
            kind        TEXT NOT NULL,      -- 'hint' or 'solution'
            number      INTEGER NOT NULL,   -- the hint's number, 0 for the solution
            at          TEXT NOT NULL
        );
        CREATE INDEX help_used_by_learner ON help_used (learner_id, id)
        """,
    )


def _migration_12_path_column(conn: Connection) -> None:
    """Whether an LMS course's gradebook gets a column for the whole path (classes/lti.py): the teacher's
    choice, off until they make it (issue 39, item 8). A course whose gradebook has a path column already keeps
    getting its scores (the teacher turns it off on their page); elsewhere the path waits for the teacher."""
    _run_statements(
        conn,
        """
        ALTER TABLE lti_contexts ADD COLUMN path_column INTEGER NOT NULL DEFAULT 0;
        UPDATE lti_contexts SET path_column = 1
            WHERE id IN (SELECT context_row FROM lti_line_items WHERE resource = 'path' AND url != '')
        """,
    )


def _migration_13_credit_marks_and_audit_log(conn: Connection) -> None:
    """A teacher's hand on the gradebook (classes/overrides.py) and the audit log of every change to what a
    learner is credited (progress/audit_store.py). credit_marks: one learner's credit of a lesson
    (exercise_id '') or of one exercise set by hand ('override', with its credit) or left out of the count
    ('excuse'), always with a reason. audit_log: append-only, who (a teacher account, or the command line:
    actor_id 0), when (the store's clock), what (kind, learner, lesson, exercise), before and after as JSON;
    names are kept as they were, so an entry about a learner since removed still says who. Triggers refuse
    every UPDATE and DELETE of it (and TRUNCATE, in PostgreSQL)."""
    _run_statements(
        conn,
        """
        CREATE TABLE credit_marks (
            class_id    INTEGER NOT NULL REFERENCES classes (id),
            learner_id  INTEGER NOT NULL,
            lesson_id   TEXT NOT NULL,
            exercise_id TEXT NOT NULL,          -- '' : the whole lesson
            kind        TEXT NOT NULL,          -- 'override' or 'excuse'
            credit      REAL,                   -- the credit given by hand ('override'), NULL for 'excuse'
            reason      TEXT NOT NULL,
            PRIMARY KEY (learner_id, lesson_id, exercise_id)
        );
        CREATE TABLE audit_log (
            id           INTEGER PRIMARY KEY AUTOINCREMENT,
            class_id     INTEGER NOT NULL,
            at           TEXT NOT NULL,         -- the store's clock, ISO 8601 UTC
            actor_id     INTEGER NOT NULL,      -- the teacher's account, 0: the command line
            actor_name   TEXT NOT NULL,
            kind         TEXT NOT NULL,         -- override, excuse, undo, extension, due-date, late-policy, ...
            learner_id   INTEGER,               -- NULL: the whole class
            learner_name TEXT NOT NULL,         -- '' : the whole class
            lesson_id    TEXT NOT NULL,
            exercise_id  TEXT NOT NULL,
            before       TEXT NOT NULL,         -- JSON
            after        TEXT NOT NULL,         -- JSON
            reason       TEXT NOT NULL
        );
        CREATE INDEX audit_log_by_class ON audit_log (class_id, id)
        """,
    )
    refused = "the audit log is append-only: its entries cannot be changed or deleted"
    conn.speaks.refuse_changes(conn, "audit_log", refused)


def _migration_14_work_times(conn: Connection) -> None:
    """Credit from when the learner did the work (issue 39; classes/deadlines.py). grading_jobs.work_at: the
    time a queued run is kept with, when the server accepted it (the learner's click; a regrade's run: the time
    of the run it grades again), not when a worker graded it. predictions.first_at, explanations.first_at and
    code.first_at: when the prediction was first made, the explanation first written (not empty) and code of
    the exercise first saved (a re-save changes only ``at``).
    Existing rows keep what is known: a run's ``at`` stays (it cannot be told apart from its grading time), and
    a prediction's, explanation's or code's first time is taken as its last save (NULL reads as ``at``)."""
    _run_statements(
        conn,
        """
        ALTER TABLE grading_jobs ADD COLUMN work_at TEXT;
        ALTER TABLE predictions ADD COLUMN first_at TEXT;
        ALTER TABLE explanations ADD COLUMN first_at TEXT;
        ALTER TABLE code ADD COLUMN first_at TEXT;
        UPDATE predictions SET first_at = at;
        UPDATE code SET first_at = at;
        UPDATE explanations SET first_at = at WHERE text != ''
        """,
    )


def _migration_15_strangers_rows(conn: Connection) -> None:
    """Logins in progress (LTI's and single sign-on's) carry the client address that began them, so that one
    budget bounds what strangers store (issue 41, item 6; classes/stranger_budget.py): rows of an address and
    in all, counted among the logins not yet used."""
    _run_statements(
        conn,
        """
        ALTER TABLE lti_logins ADD COLUMN client TEXT NOT NULL DEFAULT '';
        ALTER TABLE sso_logins ADD COLUMN client TEXT NOT NULL DEFAULT '';
        CREATE INDEX lti_logins_in_progress ON lti_logins (used_ts, client);
        CREATE INDEX sso_logins_in_progress ON sso_logins (used_ts, client);
        CREATE INDEX sso_logins_by_age ON sso_logins (created_ts)
        """,
    )


def _migration_16_help_by_exercise(conn: Connection) -> None:
    """The teacher's overview reads each learner's help per exercise (progress/class_store.py's help_by_exercise:
    the highest hint opened, the first solution shown) by index, so that its cost does not grow with the rows
    one learner keeps (issue 41, item 1)."""
    conn.execute("CREATE INDEX help_used_by_exercise ON help_used (learner_id, exercise_id, kind, number, id)")


def _migration_17_credit_marks_keep_8_byte_credit(conn: Connection) -> None:
    """credit_marks.credit was made a 4-byte float in PostgreSQL (migration 13's DDL was then translated by
    substring, which missed "REAL,"): a credit given by hand read back rounded (0.1 as 0.10000000149). Now an
    8-byte float there too, as everywhere else; SQLite's REAL always was one."""
    conn.speaks.make_double(conn, "credit_marks", "credit")


def _migration_18_class_lessons_and_address(conn: Connection) -> None:
    """A class runs on lessons of its own (issue 43, item 1): `chainrule serve` records the content hash of the
    lessons it serves (and their folders) for workers and `chainrule class` on any host, and each queued run
    carries the hash it must be graded with ('' for runs queued before: any worker grades them). And a class
    remembers its address (item 2), for the links `chainrule class` prints."""
    _run_statements(
        conn,
        """
        CREATE TABLE served_lessons (
            id          INTEGER PRIMARY KEY CHECK (id = 1),  -- one row: what the latest `chainrule serve` serves
            hash        TEXT NOT NULL,          -- lessons/fingerprint.py's SHA-256
            folders     TEXT NOT NULL,          -- JSON list of the --lessons folders ([]: the built-in lessons)
            recorded_at TEXT NOT NULL
        );
        ALTER TABLE grading_jobs ADD COLUMN lessons TEXT NOT NULL DEFAULT '';
        ALTER TABLE classes ADD COLUMN url TEXT
        """,
    )


def _migration_19_hidden_seed_of_a_queued_run(conn: Connection) -> None:
    """A queued run may carry the seed of its hidden cases (issue 43, item 5): a regrade grades a run again on
    the same fresh cases it was first graded on. NULL: the worker's grader picks one."""
    _run_statements(conn, "ALTER TABLE grading_jobs ADD COLUMN hidden_seed INTEGER")


def _migration_20_review_numbers(conn: Connection) -> None:
    """A review of a question with fresh numbers keeps the numbers it asked with (JSON, {"a": 3, ...}; NULL for
    a lesson's own numbers), so that a teacher's item analysis (classes/item_analysis.py) can say which drawn
    values the class finds hard (issue 43, item 3)."""
    conn.execute("ALTER TABLE review_logs ADD COLUMN numbers TEXT")


def _migration_21_rosters_sections_assistants(conn: Connection) -> None:
    """Rosters, sections and teaching assistants (issue 43, item 6; classes/roster.py). roster_entries: a
    person a teacher listed by importing a CSV: their name, the key they join with (an e-mail, lower-cased, or
    a school id; key_kind says which) and their section; account_id: the learner who joined with that key (NULL
    until someone has). accounts.section: a learner's section ('' : none). A teaching assistant is an account
    of role 'assistant' (role is text: no DDL)."""
    _run_statements(
        conn,
        """
        CREATE TABLE roster_entries (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            class_id    INTEGER NOT NULL REFERENCES classes (id),
            name        TEXT NOT NULL,
            key_kind    TEXT NOT NULL,          -- 'e-mail' or 'school id'
            person_key  TEXT NOT NULL,          -- the e-mail (lower case) or the school id, as the learner gives it
            section     TEXT NOT NULL,          -- '' : no section
            account_id  INTEGER UNIQUE,         -- the learner who joined with this key (NULL: no one yet)
            imported_at TEXT NOT NULL,
            UNIQUE (class_id, person_key)
        );
        ALTER TABLE accounts ADD COLUMN section TEXT NOT NULL DEFAULT ''
        """,
    )


# Ordered; index i holds the migration that takes the schema version i to i + 1.
MIGRATIONS: list[Callable[[Connection], None]] = [
    _migration_1_initial,
    _migration_2_learner_per_row,
    _migration_3_classes,
    _migration_4_grading_jobs,
    _migration_5_imported_rows,
    _migration_6_school_systems,
    _migration_7_class_seats,
    _migration_8_scheduler_fits,
    _migration_9_due_dates_and_regrades,
    _migration_10_people_and_comments,
    _migration_11_help_used,
    _migration_12_path_column,
    _migration_13_credit_marks_and_audit_log,
    _migration_14_work_times,
    _migration_15_strangers_rows,
    _migration_16_help_by_exercise,
    _migration_17_credit_marks_keep_8_byte_credit,
    _migration_18_class_lessons_and_address,
    _migration_19_hidden_seed_of_a_queued_run,
    _migration_20_review_numbers,
    _migration_21_rosters_sections_assistants,
]

SCHEMA_VERSION = len(MIGRATIONS)

"""Issue 46, item 1: who may call a route is declared where the route is declared (web/roles.py), and each
refusal is one rule.

The route lists come from the apps themselves (the lesson app of `chainrule lesson` and the class app with
its LTI and sign-in pages, as `chainrule serve` builds it): a route added without a role fails here. The
refusals are asked of a real `chainrule serve`, in SQLite and in PostgreSQL."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import httpx
import pytest
from fastapi.routing import APIRoute

import chainrule.web
from class_process import PASSWORD, ClassServer
from class_world import FAST_HASHER, class_app, send, world  # noqa: F401 (fixture)
from postgres_cluster import new_postgres_schema

WEB = Path(chainrule.web.__file__).parent


def lesson_app(folder: Path):
    from chainrule.web.app import create_app

    return create_app("a-token", folder)


def without_one_role(app) -> list[str]:
    """Every route of the app that does not declare exactly one role (the static files' mount is the one
    thing that is not a route: the gates let anyone read the page's own scripts and styles)."""
    from chainrule.web.roles import role_of, routes_of

    wrong = []
    for route in routes_of(app.routes):
        if not isinstance(route, APIRoute):
            if getattr(route, "path", None) != "/static":
                wrong.append(f"{type(route).__name__} {getattr(route, 'path', route)}: not a route with a role")
        elif len(role_of(route)) != 1:
            wrong.append(f"{sorted(route.methods)} {route.path}: roles {role_of(route)}")
    return wrong


def roles_by_route(app) -> dict[str, str]:
    from chainrule.web.roles import role_of, routes_of

    return {f"{method} {route.path}": role_of(route)[0] for route in routes_of(app.routes)
            if isinstance(route, APIRoute) for method in route.methods - {"HEAD"}}


def test_every_route_of_both_apps_declares_one_role(tmp_path):
    lesson = lesson_app(tmp_path / "lesson")
    assert without_one_role(lesson) == []
    assert set(roles_by_route(lesson).values()) == {"learner"}  # the token's holder: there is no one else
    assert "GET /api/openapi.json" in roles_by_route(lesson)  # the schema too is a route with its role

    app, store = class_app(tmp_path / "class")
    try:
        assert without_one_role(app) == []
        roles = roles_by_route(app)
        assert len(roles) >= 80
        assert {route for route, role in roles.items() if role == "anyone"} == {
            "GET /sign-in", "POST /sign-in", "GET /join/{invite}", "POST /join/{invite}", "GET /set-password/{token}",
            "POST /set-password/{token}", "GET /lti/jwks.json", "GET /lti/login", "POST /lti/login",
            "POST /lti/launch", "POST /sso/start/{provider_id}", "GET /sso/callback/{key}", "POST /sso/choose"}
        assert roles["GET /api/class/overview"] == roles["GET /teacher"] == "staff"  # a teaching assistant reads too
        assert roles["POST /lti/pick"] == roles["POST /api/class/roster.csv"] == "teacher"
        assert roles["GET /api/class/me"] == roles["GET /api/path"] == roles["GET /"] == "learner"
        # A teaching assistant's role is "staff": it only reads; every route that changes something is a teacher's.
        assert sorted(route for route, role in roles.items() if role == "staff" and not route.startswith("GET ")) == []
        assert sorted(route for route, role in roles.items() if role == "teacher" and route.startswith("GET ")) == []
    finally:
        store.close()


def test_a_route_added_without_a_role_is_found(tmp_path):
    from fastapi import APIRouter, Depends

    from chainrule.web.roles import learner, teacher

    app = lesson_app(tmp_path)
    extra = APIRouter(prefix="/api/extra")
    extra.add_api_route("/none", lambda: {})
    extra.add_api_route("/two", lambda: {}, dependencies=[Depends(learner), Depends(teacher)])
    app.include_router(extra)
    assert [line.split(":")[0] for line in without_one_role(app)] == ["['GET'] /api/extra/none",
                                                                       "['GET'] /api/extra/two"]


def test_routes_reach_the_apps_services_one_way():
    """`request.app.state.X` (or an app's `app.state.X`) is read in web/app_state.py only (app_state(request),
    app_state(app)) anywhere in the package, and every role's check
    is in web/roles.py only: no route module compares a role to refuse."""
    readers = sorted(str(path.relative_to(WEB.parent)) for path in WEB.parent.rglob("*.py")
                     if re.search(r"\bapp\.state\.\w", path.read_text(encoding="utf-8")) and path.name != "app_state.py")
    assert readers == []
    by_hand = sorted(f"{path.name}: {line.strip()}" for path in WEB.glob("*.py") if path.name != "roles.py"
                     for line in path.read_text(encoding="utf-8").splitlines() if ".role != TEACHER" in line)
    assert by_hand == []


def role_refusals(source: str) -> list[tuple[int, str]]:
    """(line, function) of every `if` on an account's `.role` that raises: a role refused by hand."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [(node.lineno, function.name) for node in ast.walk(function) if isinstance(node, ast.If)
                      and any(isinstance(part, ast.Attribute) and part.attr == "role" for part in ast.walk(node.test))
                      and any(isinstance(part, ast.Raise) for statement in node.body for part in ast.walk(statement))]
    return found


# Where a role is refused: the routes' roles (web/roles.py), the services' one check of the same roles for the
# callers that are not routes (classes/accounts.py's teacher_only and staff_only), and the lookup of a learner of
# a class (Accounts.learner: anyone else is "not found").
REFUSE_A_ROLE = {("web/roles.py", "teacher"), ("web/roles.py", "staff"), ("classes/accounts.py", "teacher_only"),
                 ("classes/accounts.py", "staff_only"), ("classes/accounts.py", "learner")}


def test_a_role_is_refused_in_one_place_per_layer():
    package = WEB.parent
    sources = {path: path.read_text(encoding="utf-8") for path in package.rglob("*.py") if "data" not in path.parts}
    # Only a module whose text has the name `role` can read an attribute of that name: the others are not parsed.
    by_hand = sorted(f"{path.relative_to(package)}:{line} ({function})" for path, source in sources.items()
                     if re.search(r"\brole\b", source) for line, function in role_refusals(source)
                     if (str(path.relative_to(package)), function) not in REFUSE_A_ROLE)
    assert by_hand == []


def test_the_role_finder_finds_a_role_refused_by_hand():
    source = ("def set_section(teacher):\n    if teacher.role != TEACHER:\n        raise ClassError('no')\n"
              "def threads(learner):\n    if learner.role != LEARNER:\n        return []\n")
    assert role_refusals(source) == [(2, "set_section")]


def test_every_route_module_names_its_router_router():
    names = {path.name: sorted(set(re.findall(r"^(\w+) = APIRouter\(", path.read_text(encoding="utf-8"), re.M)))
             for path in WEB.glob("routes_*.py")}
    assert len(names) >= 12 and {name: found for name, found in names.items() if found != ["router"]} == {}


def test_every_route_refuses_everyone_its_role_leaves_out(world):
    """Every route of the class app (the list from the app, so a new route is covered): a learner is refused each
    staff and teacher route with one status and one sentence (a page says it as a page), a stranger every route
    that is not anyone's (a read with 401, or /sign-in for a page; a change already at the door, which asks for
    the session's CSRF token). A teaching assistant's refusals: tests/test_class_roster.py."""
    from chainrule.web.roles import NOT_A_TEACHER

    routes = roles_by_route(world.app)
    stranger = world.client()
    refused_learner, refused_stranger = {}, {}
    for route, role in sorted(routes.items()):
        method, path = route.split(" ", 1)
        url = re.sub(r"\{[^}]+\}", "1", path)
        api = path.startswith("/api/")
        if role in ("staff", "teacher"):
            answer = send(world.ada, method, url, json={})
            said = answer.json()["detail"] if api else "This page is for teachers" in answer.text
            refused_learner[route] = (answer.status_code, said)
        if role != "anyone":
            answer = send(stranger, method, url, json={})
            if not api:  # a page, or a page's form
                refused_stranger[route] = (answer.status_code, answer.headers.get("location", "").split("?")[0])
            else:
                refused_stranger[route] = (answer.status_code, answer.json()["detail"][:20])
    assert len(refused_learner) >= 40 and set(refused_learner.values()) == {(403, NOT_A_TEACHER), (403, True)}, \
        {route: said for route, said in refused_learner.items() if said not in ((403, NOT_A_TEACHER), (403, True))}
    assert len(refused_stranger) >= 70 and set(refused_stranger.values()) == {
        (401, "not signed in: sign "), (403, "missing or wrong CSR"), (303, "/sign-in")}, refused_stranger


# ---------------------------------------------------------------- the refusals, of a real `chainrule serve`

# A sample of the teacher's routes, one or more of every module that has them (the role runs before the body is
# read, so an empty body is refused as a learner's, never as a body).
TEACHER_ROUTES = [
    ("GET", "/api/class/overview"), ("GET", "/api/class/learners/{ada}/timeline"),
    ("POST", "/api/class/learners/{ada}/reset-link"), ("PUT", "/api/class/admission"),
    ("GET", "/api/class/people"), ("PUT", "/api/class/state"), ("GET", "/api/class/learners/{ada}/export"),
    ("GET", "/api/class/learners/{ada}/runs"), ("GET", "/api/class/answers"), ("GET", "/api/class/deadlines"),
    ("PUT", "/api/class/deadlines/due"), ("GET", "/api/class/regrades"), ("POST", "/api/class/regrades/1/apply"),
    ("GET", "/api/class/marks/in-force"), ("GET", "/api/class/audit"), ("GET", "/api/class/lms/scores"),
    ("PUT", "/api/class/lms/path-column"), ("POST", "/api/class/sign-in-options"), ("GET", "/api/class/mistakes"),
]
TEACHER_PAGES = ["/teacher", "/teacher/gradebook.csv", "/teacher/audit.csv"]
LEARNER_ROUTES = [("GET", "/api/class/me"), ("GET", "/api/path"), ("GET", "/api/class/deadlines/mine"),
                  ("GET", "/api/class/comments"), ("GET", "/api/jobs"), ("GET", "/api/class/sign-in-options")]


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def served(request, tmp_path_factory):
    database = None
    if request.param == "postgresql":
        database = new_postgres_schema(request.getfixturevalue("postgres_cluster"))
    server = ClassServer.start(tmp_path_factory.mktemp(f"roles-{request.param}"), database=database)
    yield server
    server.stop()


def csrf(client: httpx.Client) -> dict[str, str]:
    return {"x-csrf-token": client.cookies["chainrule_csrf"]}


def teacher_of(server: ClassServer) -> httpx.Client:
    client = server.client()
    answer = server.post_form(client, server.teacher_link.removeprefix(server.base), {"password": PASSWORD})
    assert answer.status_code == 303, answer.text
    return client


def ask(client: httpx.Client, method: str, path: str) -> httpx.Response:
    return client.request(method, path, headers=csrf(client), **({"json": {}} if method != "GET" else {}))


def test_a_learner_is_refused_every_teacher_route_with_one_status_and_one_sentence(served):
    ada = served.join("Ada")
    ada_id = ada.get("/api/class/me").json()["id"]
    answers = {(method, path): ask(ada, method, path.format(ada=ada_id)) for method, path in TEACHER_ROUTES}
    assert {answer.status_code for answer in answers.values()} == {403}, \
        {key: (answer.status_code, answer.text[:120]) for key, answer in answers.items()}
    bodies = {answer.text for answer in answers.values()}
    assert len(bodies) == 1, bodies  # one rule: the same sentence from every module
    from chainrule.web.roles import NOT_A_TEACHER

    assert answers["GET", "/api/class/overview"].json() == {"detail": NOT_A_TEACHER, "field": None, "problems": []}
    for path in TEACHER_PAGES:  # a page says it, as a page
        page = ada.get(path)
        assert page.status_code == 403 and page.headers["content-type"].startswith("text/html"), (path, page.text)
        assert "This page is for teachers" in page.text and served.class_name in page.text
    for method, path in LEARNER_ROUTES:  # the learner's own routes stay theirs
        assert ask(ada, method, path).status_code == 200, path
    assert ada.get("/api/class/people").status_code == 403 and ada.get("/api/class/me").json()["name"] == "Ada"


def test_a_stranger_is_refused_every_signed_in_route_with_one_status_and_one_sentence(served):
    stranger = served.client()
    answers = [stranger.get(path.format(ada=1)) for method, path in TEACHER_ROUTES + LEARNER_ROUTES if method == "GET"]
    assert {answer.status_code for answer in answers} == {401}
    assert len({answer.text for answer in answers}) == 1
    for path in ["/", "/lessons/backprop", "/account", *TEACHER_PAGES]:
        page = stranger.get(path)
        assert page.status_code == 303 and page.headers["location"] == f"/sign-in?next={path}", path
    assert stranger.get("/sign-in").status_code == 200  # the routes of anyone stay open


def test_a_teacher_of_another_class_finds_no_learner_of_this_one(served):
    """No route names a class: a teacher's routes act on their own class, and another class's learner is "not
    found" exactly as a learner that does not exist (nothing says the id is taken)."""
    here = served.add_class("Here")
    ada = here.join("Ada")
    ada_id = ada.get("/api/class/me").json()["id"]
    other = teacher_of(served.add_class("Elsewhere"))
    own = teacher_of(here)
    assert own.get(f"/api/class/learners/{ada_id}/timeline").status_code == 200
    missing = 2**31 - 7
    for method, path in [("GET", "/api/class/learners/{id}/timeline"), ("GET", "/api/class/learners/{id}/export"),
                         ("GET", "/api/class/learners/{id}/runs"), ("POST", "/api/class/learners/{id}/approve"),
                         ("POST", "/api/class/learners/{id}/reset-link")]:
        taken, nobody = ask(other, method, path.format(id=ada_id)), ask(other, method, path.format(id=missing))
        assert taken.status_code == nobody.status_code == 404, (path, taken.text)
        assert taken.text.replace(str(ada_id), "N") == nobody.text.replace(str(missing), "N"), path
    assert other.get("/api/class/overview").status_code == 200  # their own class's view: theirs


def test_a_teaching_assistant_is_refused_every_route_that_changes_the_class(served, tmp_path):
    """Every teacher's route of the whole app (the LMS's and the sign-in provider's too), called by a teaching
    assistant of a real `chainrule serve`: 403 and one sentence; every staff route answers them as their teacher."""
    from chainrule.web.roles import NOT_FOR_ASSISTANTS

    app, store = class_app(tmp_path / "routes")
    roles = roles_by_route(app)
    store.close()
    here = served.add_class("Assisted")
    teacher = teacher_of(here)
    made = ask_json(teacher, "POST", "/api/class/assistants", {"name": "Tam"})
    assistant = here.client()
    answer = here.post_form(assistant, made["link"].removeprefix(here.base), {"password": PASSWORD})
    assert answer.status_code == 303 and answer.headers["location"] == "/teacher", answer.text
    filled = {route: re.sub(r"\{[^}]+\}", "1", route.split(" ", 1)[1]) for route in roles}
    changing = [route for route, role in roles.items() if role == "teacher"]
    assert len(changing) >= 25 and "POST /lti/pick" in changing and "POST /api/class/sign-in-options" in changing
    for route in changing:
        refused = ask(assistant, route.split(" ", 1)[0], filled[route])
        said = NOT_FOR_ASSISTANTS if filled[route].startswith("/api/") else "a teaching assistant reads the class"
        assert refused.status_code == 403 and said in refused.text, (route, refused.text[:200])  # a page: the page
    for route in (route for route, role in roles.items() if role == "staff" and "{" not in route):
        assert assistant.get(filled[route]).status_code == teacher.get(filled[route]).status_code != 403, route


def ask_json(client: httpx.Client, method: str, path: str, body: dict) -> dict:
    answer = client.request(method, path, headers=csrf(client), json=body)
    assert answer.status_code == 200, answer.text
    return answer.json()

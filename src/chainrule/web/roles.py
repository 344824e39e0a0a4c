"""Who may call a route, declared where the route is declared: one FastAPI dependency per role, one check each.

    @router.get("/overview")
    def overview(request: Request, account: Teacher) -> ...            # a teacher; the class is theirs

    @router.get("/sign-in", dependencies=[ANYONE])                       # no session needed
    router = APIRouter(prefix="/api", dependencies=[LEARNER])            # a module whose routes share one role

The roles (what the app really has):

    anyone    no session needed: signing in, joining, one-time links, the tool's keys, the LMS's login and
              launch, a sign-in provider's callback. Each brings its own proof (the form's CSRF token, a
              signed state and its cookie), which the route checks.
    learner   whoever the door let in: in personal mode the token's holder (security.py's TokenGate, which
              stands before every route), in class mode a signed-in account (a learner or a teacher: the
              lessons, one's own progress, comments and password are everyone's).
    staff     a signed-in teacher or teaching assistant: what a teacher reads (the class's page, its grid,
              gradebook, runs, deadlines, regrades, audit log, roster). A teaching assistant calls no other
              route of the teacher's: they change no grade (no override, extension, due date, regrade) and no
              person (no approval, removal, roster import, section, teacher or assistant). They comment on
              runs through the learner's own comment routes (classes/comments.py lets staff of the class).
    teacher   a signed-in teacher: every route that changes the class. The class is always the teacher's own: no
              route names a class (each account belongs to one), and an id in a path or body of another
              class's learner, run or regrade is "not found" exactly as one that does not exist (the flows in
              classes/ look it up within the teacher's class), so that a teacher of another class learns
              nothing of this one.

Each refusal is one rule, answered through web/error_answers.py: NotSignedIn is 401 with one sentence (a page
is sent to /sign-in instead), NotATeacher is 403 with one sentence (a page says it is for teachers; a teaching
assistant is told what their role may not do).
tests/test_web_roles.py lists every route of the real app with its role, and fails on a route without one.
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

from fastapi import Depends, Request
from fastapi.responses import RedirectResponse, Response

from chainrule.classes.accounts import ASSISTANT, STAFF, TEACHER, Account
from chainrule.web.app_state import app_state

__all__ = ["ANYONE", "LEARNER", "STAFF_ONLY", "TEACHER_ONLY", "Anyone", "Learner", "Staff", "Teacher", "RoleRefused",
           "NotSignedIn", "NotATeacher", "anyone", "learner", "staff", "teacher", "role_of", "routes_of", "ROLES"]

NOT_SIGNED_IN = "not signed in: sign in at /sign-in first."
NOT_A_TEACHER = "only a teacher of this class can see or change this."
NOT_FOR_ASSISTANTS = ("a teaching assistant reads the class and comments on runs, but changes no grade and no "
                      "person: ask a teacher of the class.")


class RoleRefused(Exception):
    """A role's refusal: its status and sentence for the API; ``page`` answers a page instead."""

    status = 403

    def page(self, request: Request) -> Response | None:
        """The answer for an HTML page (None: the same JSON as the API's)."""
        return None


class NotSignedIn(RoleRefused):
    status = 401

    def __init__(self) -> None:
        super().__init__(NOT_SIGNED_IN)

    def page(self, request: Request) -> Response:
        return RedirectResponse("/sign-in?next=" + quote(request.url.path, safe="/"), status_code=303)


class NotATeacher(RoleRefused):
    status = 403

    def __init__(self, account: Account | None) -> None:
        super().__init__(NOT_FOR_ASSISTANTS if account is not None and account.role == ASSISTANT else NOT_A_TEACHER)
        self.account = account

    def page(self, request: Request) -> Response:
        from chainrule.web.page_templates import templates

        class_name = self.account.class_name if self.account is not None else ""
        assistant = self.account is not None and self.account.role == ASSISTANT
        return templates.TemplateResponse(request, "not_for_learners.html", {
            "request": request, "title": "This page is for teachers", "class_name": class_name,
            "assistant": assistant}, status_code=403)


def anyone(request: Request) -> Account | None:
    """No check: the signed-in account if there is one (the gate put it in the request's state), else None."""
    return request.scope.get("state", {}).get("account")


def learner(request: Request) -> Account | None:
    """Class mode: the signed-in account, or NotSignedIn. Personal mode: None (the token gate let only the
    token's holder this far)."""
    account = anyone(request)
    if account is None and app_state(request).class_mode:
        raise NotSignedIn()
    return account


def signed_in(request: Request) -> Account:
    """Class mode's own code (not a route's role): the signed-in account, or NotSignedIn."""
    account = anyone(request)
    if account is None:
        raise NotSignedIn()
    return account


def teacher(request: Request) -> Account:
    """The signed-in teacher, or NotSignedIn, or NotATeacher."""
    account = learner(request)
    if account is None or account.role != TEACHER:
        raise NotATeacher(account)
    return account


def staff(request: Request) -> Account:
    """The signed-in teacher or teaching assistant (who read the same), or NotSignedIn, or NotATeacher."""
    account = learner(request)
    if account is None or account.role not in STAFF:
        raise NotATeacher(account)
    return account


ANYONE, LEARNER, STAFF_ONLY, TEACHER_ONLY = Depends(anyone), Depends(learner), Depends(staff), Depends(teacher)
Anyone = Annotated[Account | None, ANYONE]
Learner = Annotated[Account, LEARNER]  # for class mode's own routes, where the account is always there
Staff = Annotated[Account, STAFF_ONLY]
Teacher = Annotated[Account, TEACHER_ONLY]
ROLES = {anyone: "anyone", learner: "learner", staff: "staff", teacher: "teacher"}


def role_of(route: Any) -> list[str]:
    """The roles a route declares (exactly one, says tests/test_web_roles.py)."""
    found: list[str] = []
    pending = list(route.dependant.dependencies)
    while pending:
        dependency = pending.pop()
        if dependency.call in ROLES:
            found.append(ROLES[dependency.call])
        pending += dependency.dependencies
    return found


def routes_of(routes: list[Any]) -> list[Any]:
    """Every route of an app (``app.routes``), the routers it includes walked too (FastAPI keeps an included
    router's routes in the router, and resolves them when first asked)."""
    found = []
    for route in routes:
        inner = getattr(route, "original_router", None)
        found += routes_of(inner.routes) if inner is not None else [route]
    return found

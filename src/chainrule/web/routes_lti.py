"""Class mode's LTI 1.3 pages (classes/lti.py has the rules): the login, the launch, the tool's keys, the
deep-linking picker, and the teacher's view of the LMS course (its roster, the scores on their way, whether the
whole path has a gradebook column).

    add_lti(app, lti, sender)     # after create_class_app: the routes and the frame policy

The login and the launch come from the LMS's pages, across sites: security.py lets their POSTs through the
Origin check (CROSS_SITE_POSTS), and the gate asks no session or CSRF token of them (class_gate's LTI prefix):
their own proofs are the state, its cookie, and the signed id_token. A launch inside the LMS's frame gets
cookies marked ``SameSite=None; Secure; Partitioned`` (CHIPS: a browser that blocks third-party cookies still
keeps them, for this LMS's pages only); a launch in a window of its own gets the usual first-party cookies.
Pages of an LMS class may be framed by that LMS's origins only (frame-ancestors); every other page keeps
``frame-ancestors 'none'``.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import anyio
from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from chainrule.classes.accounts import Account
from chainrule.classes.lti import PATH, LaunchRefused, Lti, origin_of, resource_title, written_lessons
from chainrule.classes.lti_scores import ScoreSender
from chainrule.classes.lti_services import LtiServices, score_maximum
from chainrule.classes.remote import RemoteError
from chainrule.classes.sessions import csrf_ok
from chainrule.classes.stranger_budget import RETRY_AFTER, charged, client_key
from chainrule.errors import InputError
from chainrule.number_text import count_text
from chainrule.web.app_state import app_state, install
from chainrule.web.cookies import request_cookies
from chainrule.web.forms import all_values, query, read_form
from chainrule.web.page_templates import templates
from chainrule.web.roles import ANYONE, Staff, Teacher
from chainrule.web.sign_in import add_session, cookie, new_session, sealed, unsealed

log = logging.getLogger("chainrule.lti")
router = APIRouter(include_in_schema=False)  # each route's role: web/roles.py
PICK_LIFETIME = 3600  # seconds a deep-linking picker may stay open


class FrameOrigins:
    """Which LMS origins may frame the pages of each LMS class: kept in memory (the security layer asks at every
    answer, in the event loop), read again from the class database every few seconds by the score thread."""

    def __init__(self, lti: Lti) -> None:
        self.lti = lti
        self.by_class: dict[int, tuple[str, ...]] = {}
        self._lock = threading.Lock()

    def reload(self) -> None:
        found: dict[int, set[str]] = {}
        for row in self.lti.tables.frame_origins():
            found.setdefault(int(row.class_id), set()).update(json.loads(row.lms_origins), {row.frame_origin} - {""})
        with self._lock:
            self.by_class = {class_id: tuple(sorted(origins)) for class_id, origins in found.items()}

    def add(self, class_id: int, origins: tuple[str, ...]) -> None:
        with self._lock:
            self.by_class[class_id] = tuple(sorted(set(self.by_class.get(class_id, ())) | set(origins)))

    def __call__(self, scope: dict) -> tuple[str, ...] | None:
        state = scope.get("state") or {}
        if state.get("frame_ancestors"):
            return tuple(state["frame_ancestors"])
        account = state.get("account")
        return self.by_class.get(account.class_id) if account is not None else None


def _lti(request: Request) -> Lti:
    lti = app_state(request).lti
    assert lti is not None  # these routes are added with it (add_lti)
    return lti


def _services(request: Request) -> LtiServices:
    services = app_state(request).lti_services
    assert services is not None
    return services


async def _params(request: Request) -> dict[str, str]:
    params = query(request)
    if request.method == "POST":
        params.update(await read_form(request))
    return params


def _refused(request: Request, refused: LaunchRefused, frame: tuple[str, ...] | None = None) -> HTMLResponse:
    log.warning("LTI refused (%s): %s", refused.cause, refused.logged())
    request.scope.setdefault("state", {})["frame_ancestors"] = frame or ("*",)
    response = templates.TemplateResponse(request, "login_refused.html", {
        "request": request, "title": "This launch was refused", "cause": refused.cause, "message": str(refused),
        "advice": refused.advice, "relaunch": refused.relaunch or {},
        "where_explained": "the LMS administrator finds it in chainrule's docs, \"When a launch fails\""},
        status_code=refused.status)
    response.headers["x-chainrule-lti-refusal"] = refused.cause
    if refused.status == 429:
        response.headers["retry-after"] = str(RETRY_AFTER)
    if refused.relaunch:  # the new window's form goes to /lti/login, which sends it on to the LMS
        from chainrule.web.security import CONTENT_SECURITY_POLICY

        lms = " ".join(origin_of(platform.auth_login_url) for platform in _lti(request).platforms()
                       if platform.issuer == refused.relaunch.get("iss"))
        response.headers["content-security-policy"] = CONTENT_SECURITY_POLICY.replace(
            "form-action 'self'", f"form-action 'self' {lms}").replace(
            "frame-ancestors 'none'", "frame-ancestors " + " ".join(frame or ("*",)))
    response.headers["referrer-policy"] = "same-origin"  # the new-window form's POST must carry our Origin
    return response


@router.get("/lti/jwks.json", dependencies=[ANYONE])
def jwks(request: Request) -> JSONResponse:
    return JSONResponse(_lti(request).keys.jwks())


@router.api_route("/lti/login", methods=["GET", "POST"], dependencies=[ANYONE])
@charged
async def login(request: Request) -> Response:
    """OIDC third-party-initiated login: the state's cookie, then off to the platform's authorization endpoint."""
    lti = _lti(request)
    params = await _params(request)
    client = client_key(request.client.host if request.client else "")
    try:
        begun = await anyio.to_thread.run_sync(lambda: lti.login(params, client=client))
    except LaunchRefused as refused:
        return _refused(request, refused)
    response = RedirectResponse(begun.redirect, status_code=302)
    # Always in the frame's form: the login may be in a frame or a window, and its launch comes back cross-site.
    response.headers.append("set-cookie", cookie(begun.cookie, begun.state, framed=True, secure=lti.secure,
                                                  max_age=600, path="/" if lti.secure else "/lti/launch"))
    return response


@router.post("/lti/launch", dependencies=[ANYONE])
async def launch(request: Request) -> Response:
    lti = _lti(request)
    form = await _params(request)
    cookies = request_cookies(request.scope)
    # In a frame, or a window of its own? The browser says (Sec-Fetch-Dest); one that does not is taken as framed
    # unless the launch asked for a window (its cookies then work in both).
    destination = request.headers.get("sec-fetch-dest", "")
    try:
        done = await anyio.to_thread.run_sync(lambda: lti.launch(form, cookies, framed=destination != "document"))
    except LaunchRefused as refused:
        return _refused(request, refused)
    presentation = done.claims.get("https://purl.imsglobal.org/spec/lti/claim/launch_presentation") or {}
    framed = destination in ("iframe", "frame") or (not destination and presentation.get("document_target") != "window")
    app_state(request).frame_origins.add(done.account.class_id, done.frame_origins)
    request.scope.setdefault("state", {})["frame_ancestors"] = done.frame_origins
    made = new_session(request, done.account)
    if done.deep_linking is not None:
        response: Response = _picker(request, done.deep_linking, made[1])
    else:
        response = RedirectResponse(done.landing, status_code=303)
    add_session(request, response, done.account, framed=framed, made=made)
    response.headers.append("set-cookie", cookie(done.state_cookie, "", framed=True, secure=lti.secure, max_age=0,
                                                  path="/" if lti.secure else "/lti/launch"))
    return response


# ---------------------------------------------------------------- deep linking


def _choices() -> list[dict]:
    return [{"value": PATH, "title": resource_title(PATH), "summary": "Every lesson of the path, scored together."}] + [
        {"value": entry["id"], "title": entry["title"], "summary": entry["summary"]} for entry in written_lessons()]


def _picker(request: Request, settings: dict, csrf: str) -> HTMLResponse:
    state = app_state(request)
    settings = dict(settings, expires=int(state.clock().timestamp()) + PICK_LIFETIME)
    response = templates.TemplateResponse(request, "lti_pick.html", {
        "request": request, "title": "Add chainrule to the course", "choices": _choices(), "csrf": csrf,
        "settings": sealed(state.secret, "lti-pick", settings), "multiple": settings.get("accept_multiple"),
        "error": ""})
    response.headers["referrer-policy"] = "same-origin"
    return response


@router.post("/lti/pick")
async def pick(request: Request, account: Teacher) -> Response:
    """The teacher's choice: the signed LtiDeepLinkingResponse, sent to the LMS by the browser (a form)."""
    form = await _params(request)
    state = request.scope.get("state", {})
    app = app_state(request)
    if not csrf_ok(app.secret, state.get("csrf_cookies", []), form.get("csrf"), state.get("session_cookie")):
        raise HTTPException(status_code=403, detail="this form has expired: open chainrule from the LMS again")
    settings = unsealed(app.secret, "lti-pick", form.get("settings", ""))
    now = int(app.clock().timestamp())
    if settings is None or settings.get("account") != account.id or settings.get("expires", 0) < now:
        raise HTTPException(status_code=403, detail="this choice is not valid any more: open chainrule from the LMS "
                                                    "again to add a lesson")
    known = {choice["value"] for choice in _choices()}
    chosen = [value for value in all_values(await request.body(), "resource") if value in known]
    if not chosen or len(chosen) > 1 and not settings.get("accept_multiple"):
        raise InputError("choose one lesson, or the whole path" + (" (or several)" if settings.get("accept_multiple")
                                                                   else ""), field="resource")
    lti, services = _lti(request), _services(request)
    answer = await anyio.to_thread.run_sync(lambda: _deep_link(lti, services, settings, chosen))
    return_url = settings["return_url"]
    response = templates.TemplateResponse(request, "lti_return.html", {
        "request": request, "title": "Adding to the course", "action": return_url, "jwt": answer})
    frame = app.frame_origins.by_class.get(account.class_id, ())
    request.scope.setdefault("state", {})["frame_ancestors"] = frame
    from chainrule.web.security import CONTENT_SECURITY_POLICY

    response.headers["content-security-policy"] = CONTENT_SECURITY_POLICY.replace(
        "form-action 'self'", f"form-action 'self' {origin_of(return_url)}").replace(
        "frame-ancestors 'none'", "frame-ancestors " + (" ".join(frame) or "'none'"))
    return response


def _deep_link(lti: Lti, services: LtiServices, settings: dict, chosen: list[str]) -> str:
    """Record the resources as linked in the course, and sign the answer: a resource gets a gradebook column
    from the LMS only if the course has none for it yet (none known here, none the LMS lists when it offers
    the list; when the list cannot be read, the score sender makes the column later, after looking again)."""
    platform = lti.platform(int(settings["platform"]))
    context = lti.tables.context(int(settings["context"]))
    wanted = {}
    for resource in chosen:
        wanted[resource] = not lti.tables.line_items(int(settings["context"]), resource)
        if wanted[resource] and context is not None and context.lineitems_url:
            try:
                wanted[resource] = not services.line_items(platform, context.lineitems_url, resource)
            except RemoteError as error:  # unknown: leave the column to the score sender, which looks again
                log.warning("could not list the course's gradebook columns: %s", error)
                wanted[resource] = False
        lti.tables.link_resource(int(settings["context"]), resource)
    if PATH in chosen and context is not None:  # the teacher added the whole path: that is choosing its column
        lti.tables.set_path_column(int(settings["context"]), int(context.class_id), PATH, True)
    return services.deep_link_answer(platform, settings, chosen, wanted)


# ---------------------------------------------------------------- the teacher's view of the LMS course


def _context(request: Request, account: Account) -> Any:
    """The LMS course of the teacher's class, or 404."""
    context = _lti(request).tables.context_of_class(account.class_id)
    if context is None:
        raise HTTPException(status_code=404, detail="this class is not an LMS course's")
    return context


@router.get("/api/class/lms/roster")
async def roster(request: Request, account: Staff) -> dict[str, Any]:
    """The course's members as the LMS lists them (Names and Role Provisioning Services), each marked with
    whether they have opened chainrule yet."""
    context = _context(request, account)
    lti, services = _lti(request), _services(request)
    linked = await anyio.to_thread.run_sync(lti.tables.linked_people, account.class_id)
    platform = await anyio.to_thread.run_sync(lti.platform, int(context.platform_id))
    if not context.memberships_url:
        return {"course": context.title, "members": [], "error": "The LMS has not offered this course's roster to "
                "chainrule (the administrator enables Names and Role Provisioning Services for the tool)."}
    try:
        members = await anyio.to_thread.run_sync(services.roster, platform, context.memberships_url)
    except RemoteError as error:
        return {"course": context.title, "members": [], "error": f"The roster could not be read: {error}"}
    from chainrule.classes.lti import role_of

    shown: list[dict[str, Any]] = []
    for member in members:
        subject = str(member.get("user_id") or "")
        name = str(member.get("name") or " ".join(str(member.get(k) or "") for k in ("given_name", "family_name")))
        shown.append({"name": name.strip()[:120] or subject[:40], "role": role_of(member.get("roles")) or "other",
                      "status": str(member.get("status") or "Active")[:20],
                      "launched": (platform.issuer, subject) in linked})
    shown.sort(key=lambda member: (member["launched"], member["role"] != "learner", member["name"].casefold()))
    return {"course": context.title, "members": shown, "error": ""}


@router.get("/api/class/lms/scores")
async def scores(request: Request, account: Staff) -> dict[str, Any]:
    """Every score of the class on its way to the LMS gradebook, or there."""
    _context(request, account)
    rows = await anyio.to_thread.run_sync(_lti(request).tables.outbox, account.class_id)
    return {"scores": [{"learner": row.name, "lesson": row.resource, "lesson_title": _title(row.resource),
                        "score": row.score_given, "maximum": row.score_maximum, "sent": bool(row.sent),
                        "attempts": int(row.attempts), "error": row.last_error} for row in rows]}


def _title(resource: str) -> str:
    """A score's lesson (or the whole path) by its title; its id when the server no longer has that lesson."""
    try:
        return resource_title(resource)
    except LookupError:
        return resource


@router.get("/api/class/lms/path-column")
async def path_column(request: Request, account: Staff) -> dict[str, Any]:
    """Whether the course's gradebook gets a column for the whole path (the teacher's choice, off by default)."""
    _context(request, account)
    on = await anyio.to_thread.run_sync(_lti(request).path_column, account.class_id)
    return {"path_column": on, "points_text": count_text(score_maximum(PATH), "point")}


@router.put("/api/class/lms/path-column")
async def set_path_column(request: Request, account: Teacher) -> dict[str, Any]:
    _context(request, account)
    body = await request.json()
    if not isinstance(body, dict) or not isinstance(body.get("path_column"), bool):
        raise InputError('send {"path_column": true} (a column for the whole path) or {"path_column": false}',
                         field="path_column")
    await anyio.to_thread.run_sync(_lti(request).set_path_column, account.class_id, body["path_column"])
    return await path_column(request, account)


# ---------------------------------------------------------------- installing


def add_lti(app: FastAPI, lti: Lti, sender: ScoreSender | None) -> None:
    """The LTI routes and the frame policy on a class app (`chainrule serve` starts and stops the sender)."""
    frame_origins = FrameOrigins(lti)
    install(app, lti=lti, lti_services=sender.services if sender is not None else LtiServices(lti),
            frame_origins=frame_origins, frame_ancestors=frame_origins)
    app.include_router(router)
    frame_origins.reload()
    if sender is not None:
        sender.after_round = frame_origins.reload  # a course another web process saw first, framed here too

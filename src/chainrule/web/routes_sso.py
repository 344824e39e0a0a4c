"""Class mode's single sign-on pages (classes/sso.py has the rules): a sign-in through a provider begun from this
server's own pages, its callback, and the teacher's choice of whether passwords stay possible.

    add_sso(app, sso)       # after create_class_app: the routes, and the sign-in buttons on the class forms

A sign-in begins with a POST from one of this server's pages (a button of the sign-in, join or account page):
the form carries its CSRF token, so no other site can start one in a learner's browser (a silent sign-in into
a class the learner never chose to join). Its state's cookie is SameSite=Lax (the provider sends the browser back
with a top-level GET, which carries it) and HttpOnly.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
from fastapi import APIRouter, FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from chainrule.classes.accounts import STAFF, TEACHER, ClassError
from chainrule.classes.federation import display_name, free_display_name, new_state, same_browser
from chainrule.classes.sessions import csrf_ok
from chainrule.classes.sso import CALLBACK_KEY_CHARS, LockOut, SignInRefused, Sso
from chainrule.classes.stranger_budget import RETRY_AFTER, charged, client_key
from chainrule.errors import InputError
from chainrule.progress.store_errors import StoreError
from chainrule.web.app_state import app_state, install
from chainrule.web.cookies import request_cookies
from chainrule.web.forms import RowId, query, read_form, row_id
from chainrule.web.page_templates import templates
from chainrule.web.roles import ANYONE, Learner, Teacher, anyone, signed_in
from chainrule.web.sign_in import add_session, cookie, sealed, unsealed

log = logging.getLogger("chainrule.sso")
router = APIRouter(include_in_schema=False)  # each route's role: web/roles.py
CHOICE_LIFETIME = 600
CHOICE_COOKIE = "chainrule_sso_choice"


def _sso(request: Request) -> Sso:
    sso = app_state(request).sso
    assert sso is not None  # these routes are added with it (add_sso)
    return sso


def _local(target: str) -> str:
    """Only a path on this server (never //host or a scheme): no open redirect."""
    return target if target.startswith("/") and not target.startswith("//") and "\\" not in target else ""


async def _form(request: Request) -> dict[str, str]:
    form = await read_form(request)
    state = request.scope.get("state", {})
    if not csrf_ok(app_state(request).secret, state.get("csrf_cookies", []), form.get("csrf"),
                   state.get("session_cookie")):
        raise HTTPException(status_code=403, detail="this form has expired: reload the page and send it again")
    return form


def _refused(request: Request, refused: SignInRefused) -> HTMLResponse:
    log.warning("sign-in refused (%s): %s", refused.cause, refused.logged())
    response = templates.TemplateResponse(request, "login_refused.html", {
        "request": request, "title": "This sign-in was refused", "cause": refused.cause, "message": str(refused),
        "advice": refused.advice, "relaunch": {}, "back": "/sign-in",
        "where_explained": "your class's administrator finds it in chainrule's docs, \"Single sign-on\""},
        status_code=refused.status)
    response.headers["x-chainrule-sign-in-refusal"] = refused.cause
    if refused.status == 429:
        response.headers["retry-after"] = str(RETRY_AFTER)
    return response


def buttons(request: Request, **intent: str) -> list[dict]:
    """The sign-in providers' buttons for a class form (routes_class): each posts to /sso/start/ID with the
    form's fields of intent (next, invite)."""
    sso = app_state(request).sso
    try:
        providers = sso.providers() if sso is not None else []
    except StoreError:  # the class database is away: the page keeps its password form (its POST says why)
        return []
    return [{"id": provider.id, "name": provider.name, "fields": {k: v for k, v in intent.items() if v}}
            for provider in providers]


def passwords_allowed(request: Request, class_id: int) -> bool:
    """Whether the class's teacher keeps passwords possible (always, on a server without single sign-on)."""
    sso = app_state(request).sso
    return sso is None or sso.passwords_allowed(class_id)


def password_refusal(request: Request, account: Any) -> str | None:
    """Why a password sign-in to the account is refused (its class has passwords off), saying what the person
    can do; None when passwords are allowed. Runs in a thread (it reads the class database)."""
    if passwords_allowed(request, account.class_id):
        return None
    if _sso(request).tables.is_linked(account.id):
        return "this class signs in with a school account only (its teacher turned passwords off): use the button below"
    return ("this class signs in with a school account only (its teacher turned passwords off), and your account is "
            "not linked to one yet: ask your teacher to turn passwords on for a moment, then sign in here with your "
            "password and link your school account on your account page")


@router.post("/sso/start/{provider_id}", dependencies=[ANYONE])
@charged
async def start(request: Request, provider_id: RowId) -> Response:
    form = await _form(request)
    sso = _sso(request)
    intent: dict[str, Any] = {"do": "sign-in", "next": _local(form.get("next", ""))}
    if form.get("invite"):
        intent = {"do": "join", "invite": form["invite"][:200]}
    elif form.get("link"):
        account = signed_in(request)  # linking a school account: the signed-in account's own
        intent = {"do": "link", "account": account.id, "epoch": account.session_epoch}
    try:
        client = client_key(request.client.host if request.client else "")
        begun = await anyio.to_thread.run_sync(lambda: sso.begin(provider_id, intent, client=client))
    except SignInRefused as refused:
        return _refused(request, refused)
    # A page that moves on by itself, not a redirect: a form's redirect to another origin would break the page's
    # own Content Security Policy (form-action 'self'), which browsers apply to a form's redirects too.
    response = templates.TemplateResponse(request, "sso_go.html", {
        "request": request, "title": f"Signing in with {begun.provider_name}", "url": begun.redirect})
    response.headers.append("set-cookie", cookie(begun.cookie, begun.state, framed=False, secure=sso.secure,
                                                  max_age=600))
    return response


@router.get("/sso/callback/{key}", dependencies=[ANYONE])
async def callback(request: Request, key: str) -> Response:
    sso = _sso(request)
    params = query(request)
    cookies = request_cookies(request.scope)
    try:
        if len(key) > CALLBACK_KEY_CHARS:
            raise SignInRefused("unknown-provider", "there is no sign-in provider with that redirect URI on this server")
        provider = await anyio.to_thread.run_sync(sso.by_callback_key, key)
        finished = await anyio.to_thread.run_sync(sso.finish, provider.id, params, cookies)
        return await _arrive(request, sso, finished)
    except SignInRefused as refused:
        return _refused(request, refused)


async def _arrive(request: Request, sso: Sso, finished: Any) -> Response:
    intent = finished.intent
    if intent.get("do") == "join":
        name = display_name(finished.claims)
        joined = await anyio.to_thread.run_sync(
            lambda: sso.join(finished, str(intent.get("invite")), lambda names: free_display_name(name, names)))
        return _session(request, joined, "/")
    if intent.get("do") == "link":
        account = anyone(request)  # the intent's account must still be the one signed in
        if account is None or account.id != intent.get("account") or account.session_epoch != intent.get("epoch"):
            raise SignInRefused("session-changed", "the account that asked for the link is not the one signed in")
        await anyio.to_thread.run_sync(sso.link, finished, account)
        return RedirectResponse("/teacher" if account.role in STAFF else "/account", status_code=303)
    accounts = await anyio.to_thread.run_sync(sso.accounts_of, finished)
    if not accounts:
        raise SignInRefused("no-account", "no account of this server is linked to the account you signed in with "
                            f"at {finished.provider.name}")
    target = str(intent.get("next") or "")
    if len(accounts) == 1:
        return _session(request, accounts[0], target or _home(accounts[0]))
    # The choice is bound to this browser (a cookie holds the ticket's nonce): nobody can hand theirs to another.
    nonce = new_state()
    state = app_state(request)
    ticket = sealed(state.secret, "sso-choice", {
        "accounts": [account.id for account in accounts], "next": target, "nonce": nonce,
        "expires": int(state.clock().timestamp()) + CHOICE_LIFETIME})
    response = templates.TemplateResponse(request, "sso_choose.html", {
        "request": request, "title": "Choose your class", "ticket": ticket,
        "accounts": [{"id": account.id, "class_name": account.class_name, "name": account.name}
                     for account in accounts]})
    response.headers.append("set-cookie", cookie(CHOICE_COOKIE, nonce, framed=False, secure=sso.secure,
                                                  max_age=CHOICE_LIFETIME))
    return response


@router.post("/sso/choose", dependencies=[ANYONE])
async def choose(request: Request) -> Response:
    """One of the person's classes, chosen after a sign-in linked to several (the ticket says which)."""
    form = await read_form(request)
    chosen = row_id(form.get("account"), "account")
    state = app_state(request)
    ticket = unsealed(state.secret, "sso-choice", form.get("ticket", ""))
    now = int(state.clock().timestamp())
    cookies = request_cookies(request.scope)
    if ticket is None or ticket.get("expires", 0) < now or chosen not in ticket.get("accounts", []) \
            or not same_browser(cookies, CHOICE_COOKIE, str(ticket.get("nonce"))):
        raise HTTPException(status_code=403, detail="this choice is not valid any more: sign in again")
    account = await anyio.to_thread.run_sync(state.accounts.account, chosen)
    if account is None:
        raise HTTPException(status_code=404, detail="that account no longer exists")
    return _session(request, account, _local(str(ticket.get("next") or "")) or _home(account))


def _home(account: Any) -> str:
    return "/teacher" if account.role in STAFF else "/"


def _session(request: Request, account: Any, target: str) -> Response:
    response = RedirectResponse(target, status_code=303)
    add_session(request, response, account)
    return response


# ---------------------------------------------------------------- the teacher's choice


@router.get("/api/class/sign-in-options")
async def options(request: Request, account: Learner) -> dict[str, Any]:
    sso = _sso(request)
    allowed = await anyio.to_thread.run_sync(sso.passwords_allowed, account.class_id)
    linked = await anyio.to_thread.run_sync(sso.tables.is_linked, account.id)
    providers = await anyio.to_thread.run_sync(sso.providers)
    answer = {"passwords": allowed, "linked": linked, "providers": [{"id": p.id, "name": p.name} for p in providers]}
    if account.role == TEACHER:  # who could not sign in with passwords off (no linked sign-in account)
        people = await anyio.to_thread.run_sync(sso.locked_out, account.class_id)
        answer["locked_out"] = [{"name": person["name"], "role": person["role"]} for person in people]
    return answer


@router.post("/api/class/sign-in-options")
async def set_options(request: Request, account: Teacher) -> dict[str, Any]:
    body = await request.json()
    if not isinstance(body, dict) or not isinstance(body.get("passwords"), bool):
        raise InputError('send {"passwords": true} or {"passwords": false}', field="passwords")
    if not isinstance(body.get("lock_out", False), bool):
        raise InputError('"lock_out" is true (turn passwords off even though people would be locked out) or false',
                         field="lock_out")
    sso = _sso(request)
    try:
        await anyio.to_thread.run_sync(lambda: sso.set_passwords(account.class_id, body["passwords"], asked_by=account,
                                                                 lock_out=body.get("lock_out", False)))
    except LockOut as error:
        raise HTTPException(status_code=409, detail=f'{error}. To turn them off anyway, send "lock_out": true.') from None
    except ClassError as error:
        raise HTTPException(status_code=409, detail=str(error)) from None
    return await options(request, account)


def add_sso(app: FastAPI, sso: Sso) -> None:
    install(app, sso=sso)
    app.include_router(router)

"""chainrule as an LTI 1.3 tool: an LMS (Canvas, Moodle, Blackboard, ...) launches a lesson inside a course.

    lti = Lti(store, accounts, ToolKeys(folder), "https://class.example.org")
    lti.register(issuer=..., client_id=..., deployments=[...], jwks_url=..., auth_login_url=..., token_url=...)
    begun = lti.login(params)           # OIDC third-party-initiated login: where to send the browser, and its state
    launch = lti.launch(form, cookies, framed=True)   # the id_token checked: the account, where to land

The login (``/lti/login``) checks that the platform is registered and that ``target_link_uri`` is a page of
this tool (no open redirect), keeps a fresh state (its SHA-256) and nonce in the class database, binds the
state to the browser with a cookie, and sends the browser to the platform's authorization endpoint.

The launch (``/lti/launch``) refuses, each with its cause (LaunchRefused.cause, listed in CAUSES): a state that
did not start here or expired, a launch used already (replay), a state that is not this browser's, then the
id_token (classes/id_tokens.py: signature against the platform's published keys, ``iss`` the platform the
login was for, ``aud``/``azp`` our client id, ``exp``, ``nonce`` the login's), an unknown deployment, a message
that is not LTI 1.3's, a launch without a course or a person, a role that is neither learner, teacher nor teaching
assistant.
Then: the course's class (one class per LMS course, made at its first launch), the person's account in it
(linked by the platform's issuer and subject, never by e-mail; made at their first launch, with no password),
the lesson the link names, and the course's service endpoints (grades, roster) for later.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence
from urllib.parse import urlencode, urlsplit

from chainrule import lessons
from chainrule.classes.accounts import (
    ASSISTANT,
    LEARNER,
    STAFF,
    TEACHER,
    Account,
    Accounts,
    ClassError,
    closed_to_newcomers,
)
from chainrule.classes.federation import (
    LOGIN_LIFETIME,
    Refused,
    clean,
    digest,
    display_name,
    free_display_name,
    free_name,
    new_state,
    same_browser,
    state_cookie,
)
from chainrule.classes.id_tokens import KeySets, TokenRefused, verify
from chainrule.classes.lti_keys import ToolKeys
from chainrule.classes.remote import Remote
from chainrule.classes.stranger_budget import BUDGET, OverBudget
from chainrule.classes.stranger_budget import CAUSES as STRANGER_CAUSES
from chainrule.progress.class_store import ClassClosed
from chainrule.progress.dialect import Record
from chainrule.progress.lti_store import LtiStore
from chainrule.progress.store import ProgressStore

log = logging.getLogger("chainrule.lti")

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
MESSAGE_TYPE, VERSION, DEPLOYMENT = CLAIM + "message_type", CLAIM + "version", CLAIM + "deployment_id"
TARGET, RESOURCE_LINK, ROLES = CLAIM + "target_link_uri", CLAIM + "resource_link", CLAIM + "roles"
CONTEXT, CUSTOM, PRESENTATION = CLAIM + "context", CLAIM + "custom", CLAIM + "launch_presentation"
DEEP_LINKING = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
GRADES = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
ROSTER = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
RESOURCE_LAUNCH, DEEP_LINKING_LAUNCH = "LtiResourceLinkRequest", "LtiDeepLinkingRequest"

PATH = "path"  # the resource of a link to the whole path (else: a lesson id)
ROLE_PREFIX = "http://purl.imsglobal.org/vocab/lis/v2/"
TEACHING = {"membership#Instructor", "membership#Administrator", "membership#ContentDeveloper", "membership#Manager",
            "Instructor", "Administrator", "ContentDeveloper"}
# A teaching assistant of the course, in each form an LMS sends it: LIS v2's sub-roles of Instructor
# (membership/Instructor#TeachingAssistant, ...Section, ...Offering, ...Group, ...Template, ...SectionAssociation),
# the short name, and LTI 1.1's URNs. LMSs send a sub-role with its principal role (Instructor) beside it, so a
# teaching-assistant form wins: the person is staff (accounts.ASSISTANT), never a teacher nor a learner.
ASSISTING_PREFIXES = ("membership/Instructor#TeachingAssistant", "membership#TeachingAssistant", "TeachingAssistant",
                      "Instructor/TeachingAssistant", "urn:lti:role:ims/lis/TeachingAssistant",
                      "urn:lti:role:ims/lis/Instructor/TeachingAssistant")
LEARNING = {"membership#Learner", "Learner", "Student"}
INSTITUTION_TEACHING = {"institution/person#Faculty", "institution/person#Instructor"}
INSTITUTION_LEARNING = {"institution/person#Student", "institution/person#Learner"}

# cause -> (HTTP status, what the person can do). The sentence of what happened comes with each refusal.
CAUSES: dict[str, tuple[int, str]] = {
    "platform-error": (400, "Open the link in the LMS again; if it keeps failing, the LMS administrator can see "
                            "the error in the LMS."),
    "missing-parameter": (400, "Open the link from inside the LMS (a launch cannot be opened from a bookmark)."),
    "unknown-platform": (400, "The LMS administrator registers this LMS with `chainrule lti register` "
                              "(docs/classroom.md, 'In the school's LMS')."),
    "ambiguous-platform": (400, "The LMS must send its client_id with the login: check the tool's registration."),
    "target-not-this-tool": (400, "The link points outside this tool: the LMS administrator checks the tool's "
                                  "Target Link URI (it must start with this server's address)."),
    "unknown-lesson": (404, "The teacher links the lesson again (the link names a lesson this server does not have)."),
    "unknown-state": (400, "Open the link in the LMS again (the launch did not start here, or took longer than "
                           "10 minutes)."),
    "replayed": (400, "This launch was used already. Open the link in the LMS again."),
    "not-this-browser": (400, "Your browser did not send back the cookie this launch set, which happens when it "
                              "blocks cookies inside the LMS's page. Open the lesson in a new window."),
    "not-a-token": (400, "Open the link in the LMS again; if it keeps failing, tell the LMS administrator."),
    "algorithm": (400, "The LMS's signature is not one this tool accepts: tell the LMS administrator."),
    "keys-unreachable": (502, "The LMS's public keys could not be fetched: try again in a moment, or ask the LMS "
                              "administrator to check the JWKS URL registered with `chainrule lti register`."),
    "keys-unreadable": (502, "The LMS's public keys could not be read: the administrator checks the JWKS URL."),
    "unknown-key": (400, "The launch is signed with a key the LMS does not publish: the administrator checks the "
                         "JWKS URL registered for this LMS."),
    "bad-signature": (400, "The launch is not signed by the LMS (or was changed on the way): open the link in "
                           "the LMS again."),
    "wrong-issuer": (400, "The launch comes from another LMS than the one the login was for: open the link in "
                          "the LMS again."),
    "wrong-audience": (400, "The launch is meant for another tool: the administrator checks the client ID "
                            "registered with `chainrule lti register`."),
    "wrong-authorized-party": (400, "The launch is meant for another tool (azp): the administrator checks the "
                                    "client ID registered with `chainrule lti register`."),
    "expired": (400, "The launch took too long to arrive, or a clock is wrong: open the link again; if it keeps "
                     "failing, the server's and the LMS's clocks must be set right."),
    "issued-in-the-future": (400, "A clock is wrong: the server's and the LMS's clocks must be set right."),
    "not-yet-valid": (400, "A clock is wrong: the server's and the LMS's clocks must be set right."),
    "wrong-nonce": (400, "The launch does not belong to the login that started it: open the link again."),
    "no-subject": (400, "The LMS sent an anonymous launch: chainrule needs to know who you are. The administrator "
                        "lets the LMS send the user's identity to the tool."),
    "missing-claim": (400, "The LMS left out a claim the launch needs: tell the LMS administrator."),
    "bad-claim": (400, "The LMS sent a claim this tool cannot read: tell the LMS administrator."),
    "unknown-deployment": (400, "This deployment of the tool is not registered: the administrator adds it with "
                                "`chainrule lti register --deployment-id ...`."),
    "not-lti-1.3": (400, "Only LTI 1.3 launches are accepted: the administrator registers the tool as LTI 1.3."),
    "unsupported-message": (400, "chainrule takes lesson launches and deep linking only."),
    "target-changed": (400, "The launch's target differs from its login's: open the link in the LMS again."),
    "no-course": (400, "Open chainrule from inside a course: each LMS course has its own class here."),
    "role": (403, "Only the course's learners, teachers and teaching assistants can open chainrule; ask the "
                  "teacher."),
    "teachers-only": (403, "Only a teacher of the course can add chainrule's lessons to it."),
    "class-closed": (403, "The course's teacher closed its class in chainrule; they can open it again on the "
                          "teacher's page."),
    **STRANGER_CAUSES,
}


class LaunchRefused(Refused):
    """A login or launch refused, with its cause (a key of CAUSES) and, where a new window may work, the
    parameters to start the login again there (``relaunch``)."""

    CAUSES = CAUSES


@dataclass(frozen=True)
class Platform:
    id: int
    issuer: str
    client_id: str
    name: str
    auth_login_url: str
    token_url: str
    jwks_url: str
    token_audience: str
    lms_origins: tuple[str, ...]
    deployments: tuple[str, ...] = ()


@dataclass(frozen=True)
class Begun:
    """A login begun: send the browser to ``redirect``; set the cookie ``cookie`` = ``state``."""

    redirect: str
    state: str
    cookie: str


@dataclass
class Launch:
    account: Account
    landing: str  # the path to open: a lesson, the path, or the deep-linking picker
    frame_origins: tuple[str, ...]
    state_cookie: str
    deep_linking: dict | None = None  # a deep-linking request's settings (signed later into the picker's form)
    claims: dict = field(default_factory=dict)


def origin_of(url: str) -> str:
    parts = urlsplit(url or "")
    return f"{parts.scheme}://{parts.netloc}".lower() if parts.scheme in ("http", "https") and parts.netloc else ""


def role_of(roles: Any) -> str | None:
    """teacher, assistant, learner or None, from the launch's roles (context roles first, a teaching assistant's
    before the rest; institution roles only when the launch has no context role)."""
    names = [role.removeprefix(ROLE_PREFIX) for role in roles if isinstance(role, str)] if isinstance(roles, list) else []
    if any(name.startswith(ASSISTING_PREFIXES) for name in names):
        return ASSISTANT
    if any(name in TEACHING or name.startswith("membership/Instructor#") for name in names):
        return TEACHER
    if any(name in LEARNING or name.startswith("membership/Learner#") for name in names):
        return LEARNER
    if not any(name.startswith("membership") for name in names):
        if any(name in INSTITUTION_TEACHING for name in names):
            return TEACHER
        if any(name in INSTITUTION_LEARNING for name in names):
            return LEARNER
    return None


def resource_title(resource: str) -> str:
    return str(lessons.get_path()["title"] if resource == PATH else lessons.lesson_data(resource)["title"])


def written_lessons() -> list[dict]:
    return [entry for entry in lessons.get_path()["lessons"] if entry.get("written")]


class Lti:
    def __init__(self, store: ProgressStore, accounts: Accounts, keys: ToolKeys, base_url: str, *, remote: Remote | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.accounts = accounts
        self.keys = keys
        self.base_url = base_url.rstrip("/")
        self.secure = self.base_url.startswith("https://")
        self.tables = LtiStore(store)
        self.remote = remote or Remote()
        self.key_sets = KeySets(self.remote)
        self.clock = clock

    # ---------------------------------------------------------------- registration

    def urls(self) -> dict[str, str]:
        """What an LMS administrator pastes into the LMS."""
        return {"login": f"{self.base_url}/lti/login", "redirect": f"{self.base_url}/lti/launch",
                "target": f"{self.base_url}/", "deep_linking": f"{self.base_url}/lti/launch",
                "jwks": f"{self.base_url}/lti/jwks.json", "domain": urlsplit(self.base_url).netloc}

    def register(self, *, issuer: str, client_id: str, deployments: list[str], jwks_url: str, auth_login_url: str,
                 token_url: str, name: str = "", lms_origins: Sequence[str] = (), token_audience: str = "") -> Platform:
        for label, url in (("issuer", issuer), ("JWKS URL", jwks_url), ("authorization URL", auth_login_url),
                           ("token URL", token_url), *(("LMS address", origin) for origin in lms_origins)):
            if not origin_of(url):
                raise ClassError(f"the {label} must be an http(s):// address, not {url!r}", kind="invalid")
        if not client_id.strip():
            raise ClassError("the client ID must not be empty", kind="invalid")
        origins = sorted({origin_of(url) for url in [issuer, auth_login_url, *lms_origins]})
        values = {"issuer": issuer.strip(), "client_id": client_id.strip(), "name": name.strip() or origin_of(issuer),
                  "auth_login_url": auth_login_url, "token_url": token_url, "jwks_url": jwks_url,
                  "token_audience": token_audience, "lms_origins": json.dumps(origins),
                  "created_at": self.store.now().isoformat()}
        platform_id = self.tables.save_platform(values, [d.strip() for d in deployments if d.strip()])
        return self.platform(platform_id)

    def platform(self, platform_id: int) -> Platform:
        row = self.tables.platform(platform_id)
        if row is None:
            raise ClassError(f"there is no LMS platform {platform_id}", kind="not-found")
        return _platform(row, self.tables.deployments(platform_id))

    def platforms(self) -> list[Platform]:
        return [_platform(row, self.tables.deployments(row.id)) for row in self.tables.platforms()]

    # ---------------------------------------------------------------- the login (third-party initiated)

    def _landing(self, target: str) -> tuple[str, str | None]:
        """(the path to land on, its resource) for a target_link_uri of this tool; LaunchRefused otherwise."""
        parts = urlsplit(target or "")
        if origin_of(target) != origin_of(self.base_url) or parts.username or parts.password:
            raise LaunchRefused("target-not-this-tool", f"the target_link_uri is not an address of this tool "
                                f"({self.base_url})", detail=f"target_link_uri {target[:300]!r}")
        path = parts.path or "/"
        if path in ("/", "/lti/launch", "/lti/login"):
            return "/", None
        if path.startswith("/lessons/") and path.count("/") == 2:
            lesson = path.removeprefix("/lessons/")
            if lesson in lessons.lesson_ids():
                return path, lesson
        raise LaunchRefused("target-not-this-tool", "the target_link_uri is not a page of this tool (the path '/', "
                            "or '/lessons/' and a lesson's id)", detail=f"target_link_uri {target[:300]!r}")

    def login(self, params: Mapping[str, str], *, client: str = "") -> Begun:
        """The login's state kept (within the strangers' budget, for ``client``: classes/stranger_budget.py) and
        where to send the browser; LaunchRefused otherwise."""
        issuer, hint, target = (str(params.get(key) or "") for key in ("iss", "login_hint", "target_link_uri"))
        missing = [key for key, value in (("iss", issuer), ("login_hint", hint), ("target_link_uri", target)) if not value]
        if missing:
            raise LaunchRefused("missing-parameter", f"the login request lacks {', '.join(missing)}")
        client_id = str(params.get("client_id") or "") or None
        rows = self.tables.platforms(issuer, client_id)
        if not rows:
            raise LaunchRefused("unknown-platform", "no LMS with the login's issuer"
                                + (" and client ID" if client_id else "") + " is registered here",
                                detail=f"issuer {issuer[:300]!r}, client ID {(client_id or '')[:300]!r}")
        if len(rows) > 1:
            raise LaunchRefused("ambiguous-platform", f"{len(rows)} registrations have the login's issuer and the "
                                "login names no client_id", detail=f"issuer {issuer[:300]!r}")
        platform = _platform(rows[0], self.tables.deployments(rows[0].id))
        deployment = str(params.get("lti_deployment_id") or "")
        if deployment and deployment not in platform.deployments:
            raise LaunchRefused("unknown-deployment", f"the login's deployment of {platform.name} is not registered "
                                "here", detail=f"deployment {deployment[:300]!r}")
        self._landing(target)
        state, nonce, now = new_state(), new_state(), self.clock()
        relaunch = {key: str(params[key]) for key in ("iss", "login_hint", "target_link_uri", "lti_message_hint",
                                                      "client_id", "lti_deployment_id") if params.get(key)}
        try:
            self.tables.add_login(digest(state), platform.id, nonce, target, relaunch, client=client, now=now,
                                  budget=BUDGET)
        except OverBudget as over:
            raise LaunchRefused(over.cause, str(over)) from None
        query = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post", "prompt": "none",
                 "client_id": platform.client_id, "redirect_uri": self.urls()["redirect"], "login_hint": hint,
                 "state": state, "nonce": nonce}
        if params.get("lti_message_hint"):
            query["lti_message_hint"] = str(params["lti_message_hint"])
        separator = "&" if urlsplit(platform.auth_login_url).query else "?"
        return Begun(platform.auth_login_url + separator + urlencode(query), state,
                     state_cookie("lti", state, self.secure))

    # ---------------------------------------------------------------- the launch

    def launch(self, form: Mapping[str, str], cookies: Mapping[str, list[str]], *, framed: bool) -> Launch:
        if form.get("error"):
            raise LaunchRefused("platform-error", "the LMS refused the login", detail=f"{str(form.get('error'))[:100]}"
                                + (f" ({str(form.get('error_description'))[:300]})" if form.get("error_description")
                                   else ""))
        state, token = str(form.get("state") or ""), str(form.get("id_token") or "")
        if not state or not token:
            raise LaunchRefused("missing-parameter", "the launch lacks its " + ("state" if not state else "id_token"))
        login = self.tables.login(digest(state))
        now = self.clock()
        if login is None or now - login.created_ts > LOGIN_LIFETIME and login.used_ts is None:
            raise LaunchRefused("unknown-state", "no login of this server has this launch's state (or it is "
                                "older than 10 minutes)")
        platform_id, nonce, target, relaunch = login.platform_id, login.nonce, login.target, login.relaunch
        if login.used_ts is not None:
            raise LaunchRefused("replayed", "this launch's login was used already: a launch works once")
        cookie = state_cookie("lti", state, self.secure)
        if not same_browser(cookies, cookie, state):
            raise LaunchRefused("not-this-browser", "the launch came without the cookie its login set in this "
                                "browser", relaunch=relaunch)
        platform = self.platform(platform_id)
        try:
            claims = verify(token, self.key_sets, platform.jwks_url, issuer=platform.issuer,
                            client_id=platform.client_id, nonce=nonce, now=now)
        except TokenRefused as refused:
            raise LaunchRefused(refused.cause, str(refused), detail=refused.detail) from None
        self._check_message(platform, claims, target)
        if not self.tables.use_login(digest(state), now):
            raise LaunchRefused("replayed", "this launch's login was used already: a launch works once")
        return self._land(platform, claims, target, cookie, framed)

    def _check_message(self, platform: Platform, claims: dict, target: str) -> None:
        if claims.get(VERSION) != "1.3.0":
            raise LaunchRefused("not-lti-1.3", "the launch's LTI version is not '1.3.0'",
                                detail=f"version {str(claims.get(VERSION))[:100]!r}")
        kind = claims.get(MESSAGE_TYPE)
        if kind not in (RESOURCE_LAUNCH, DEEP_LINKING_LAUNCH):
            raise LaunchRefused("unsupported-message", f"the launch's message type is not one chainrule takes "
                                f"({RESOURCE_LAUNCH}, {DEEP_LINKING_LAUNCH})", detail=f"type {str(kind)[:100]!r}")
        deployment = claims.get(DEPLOYMENT)
        if not isinstance(deployment, str) or deployment not in platform.deployments:
            raise LaunchRefused("unknown-deployment", f"the launch's deployment of {platform.name} is not "
                                "registered here", detail=f"deployment {str(deployment)[:300]!r}")
        if not isinstance(claims.get("sub"), str) or not claims["sub"]:
            raise LaunchRefused("no-subject", "the launch names nobody (no sub claim)")
        if claims.get(TARGET) != target:
            raise LaunchRefused("target-changed", "the launch's target_link_uri is not its login's",
                                detail=f"{str(claims.get(TARGET))[:300]!r}, not {target[:300]!r}")
        if kind == RESOURCE_LAUNCH and not (isinstance(claims.get(RESOURCE_LINK), dict)
                                            and isinstance(claims[RESOURCE_LINK].get("id"), str)):
            raise LaunchRefused("missing-claim", "the launch lacks its resource_link id")
        if kind == DEEP_LINKING_LAUNCH and not (isinstance(claims.get(DEEP_LINKING), dict) and origin_of(
                str(claims[DEEP_LINKING].get("deep_link_return_url") or ""))):
            raise LaunchRefused("missing-claim", "the deep-linking request lacks its deep_link_return_url")
        if not isinstance(claims.get(ROLES), list):
            raise LaunchRefused("missing-claim", "the launch lacks its roles claim")
        context = claims.get(CONTEXT)
        if not isinstance(context, dict) or not isinstance(context.get("id"), str) or not context["id"]:
            raise LaunchRefused("no-course", "the launch names no course (context)")

    def _land(self, platform: Platform, claims: dict, target: str, cookie: str, framed: bool) -> Launch:
        role = role_of(claims[ROLES])
        if role is None:
            raise LaunchRefused("role", "your role in this course is neither learner, teacher nor teaching assistant")
        deep_linking = claims[MESSAGE_TYPE] == DEEP_LINKING_LAUNCH
        if deep_linking and role != TEACHER:
            raise LaunchRefused("teachers-only", "a learner asked to add content to the course")
        landing, resource = self._landing(target)
        custom = _claim_object(claims, CUSTOM)
        if isinstance(custom.get("lesson"), str):
            resource = custom["lesson"]
            if resource != PATH and resource not in lessons.lesson_ids():
                raise LaunchRefused("unknown-lesson", "the link names a lesson this server does not have",
                                    detail=f"lesson {str(resource)[:100]!r}")
            landing = "/" if resource == PATH else f"/lessons/{resource}"
        if not deep_linking and resource is None:
            resource = PATH
        if role in STAFF and landing == "/":  # the course's own link: staff land on the class's page
            landing = "/teacher"
        context = claims[CONTEXT]
        now_text = self.store.now().isoformat()
        title = clean(context.get("title") or context.get("label") or "", f"Course {context['id'][:20]}")
        context_row, class_id, made = self.tables.context_class(
            platform.id, context["id"], title, lambda taken: free_name(title, taken, context.get("label")), now_text)
        if made:
            log.info("LMS course %r of %s: new class %d", title, platform.name, class_id)
        display = display_name(claims)
        try:
            account_id, _ = self.tables.linked_account(platform.issuer, claims["sub"], class_id, role,
                                                       lambda names: free_display_name(display, names), now_text)
        except ClassClosed:  # a learner new to the class: learners already in it still read their work
            raise LaunchRefused("class-closed", closed_to_newcomers(title)) from None
        grades = _claim_object(claims, GRADES)
        roster = _claim_object(claims, ROSTER)
        presentation = _claim_object(claims, PRESENTATION)
        return_origin = origin_of(str(presentation.get("return_url") or ""))
        self.tables.update_context(context_row, {
            "lineitems_url": _http_url(grades.get("lineitems")),
            "ags_scopes": json.dumps(sorted(s for s in grades.get("scope", []) if isinstance(s, str)))
            if isinstance(grades.get("scope"), list) else "",
            "memberships_url": _http_url(roster.get("context_memberships_url")),
            "frame_origin": return_origin})
        if resource is not None and not deep_linking:
            if _http_url(grades.get("lineitem")):
                self.tables.add_line_item(context_row, resource, grades["lineitem"], self.clock())
            elif resource != PATH:  # the path gets a column only by the teacher's choice (set_path_column)
                self.tables.link_resource(context_row, resource)
        account = self.accounts.written(account_id)
        settings = None
        if deep_linking:
            landing = "/lti/pick"
            settings = {"return_url": claims[DEEP_LINKING]["deep_link_return_url"],
                        "data": claims[DEEP_LINKING].get("data"), "platform": platform.id,
                        "deployment": claims[DEPLOYMENT], "context": context_row, "account": account_id,
                        "accept_multiple": bool(claims[DEEP_LINKING].get("accept_multiple"))}
        frame = tuple(sorted(set(platform.lms_origins) | ({return_origin} if return_origin else set())))
        log.info("LTI launch: account %d (%s) of class %d lands on %s%s", account_id, role, class_id, landing,
                 " in the LMS's frame" if framed else "")
        return Launch(account, landing, frame, cookie, settings, claims)


    # ---------------------------------------------------------------- the path's column: the teacher's choice

    def _course(self, class_id: int) -> Record:
        context: Record | None = self.tables.context_of_class(class_id)
        if context is None:
            raise ClassError("this class is not an LMS course's: its gradebook is chainrule's own", kind="not-found")
        return context

    def path_column(self, class_id: int) -> bool:
        """Whether each learner's score for the whole path goes to a column of the course's gradebook. Off until
        the teacher turns it on (the teacher's page, `chainrule lti path-column`, or the whole path added to the
        course through the picker): opening chainrule from the course's navigation makes no column by itself."""
        return self.tables.path_column(int(self._course(class_id).id))

    def set_path_column(self, class_id: int, on: bool) -> None:
        self.tables.set_path_column(int(self._course(class_id).id), class_id, PATH, on)


def _platform(row: Record, deployments: list[str]) -> Platform:
    return Platform(int(row.id), row.issuer, row.client_id, row.name, row.auth_login_url, row.token_url, row.jwks_url,
                    row.token_audience, tuple(json.loads(row.lms_origins)), tuple(deployments))


def _claim_object(claims: dict[str, Any], name: str) -> dict[str, Any]:
    """An optional claim that is a JSON object: {} when the launch has none (or something else there)."""
    value = claims.get(name)
    return value if isinstance(value, dict) else {}


def _http_url(value: Any) -> str:
    return value if isinstance(value, str) and origin_of(value) and len(value) <= 2000 else ""

"""What chainrule asks of an LMS after a launch (LTI Advantage): grades, the roster, and deep-linking answers.

    services = LtiServices(lti)
    services.find_or_make_line_item(platform, lineitems_url, "backprop")   # the lesson's gradebook column
    services.send_score(platform, line_item_url, score)                    # a learner's score into it
    services.roster(platform, memberships_url)                             # the course's members (NRPS)
    services.deep_link_answer(platform, settings, ["backprop"])            # the signed LtiDeepLinkingResponse

Each service call carries an access token from the platform's token endpoint (OAuth 2 client credentials,
the tool authenticating with a JWT signed by its own key: Authlib's private_key_jwt), asked for once per
platform and set of scopes and kept until a minute before it expires.
"""

from __future__ import annotations

import secrets
import threading
import time
from typing import Any, Mapping
from urllib.parse import urlsplit, urlunsplit

from chainrule import lessons
from chainrule.classes.lti import (
    DEPLOYMENT,
    MESSAGE_TYPE,
    PATH,
    VERSION,
    Lti,
    Platform,
    resource_title,
    written_lessons,
)
from chainrule.classes.remote import Answer, RemoteError, with_query

SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/"
LINE_ITEM_SCOPE, SCORE_SCOPE = SCOPE + "lineitem", SCOPE + "score"
ROSTER_SCOPE = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
LINE_ITEMS_TYPE = "application/vnd.ims.lis.v2.lineitemcontainer+json"
LINE_ITEM_TYPE = "application/vnd.ims.lis.v2.lineitem+json"
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
ROSTER_TYPE = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
TAG = "chainrule"
MAX_PAGES = 50  # a roster or a list of columns longer than 50 pages is cut there


def score_maximum(resource: str) -> int:
    """Points of a lesson (one per section) or of the whole path (every written lesson's sections)."""
    if resource == PATH:
        return sum(len(lessons.lesson_shape(entry["id"])["sections"]) for entry in written_lessons())
    return len(lessons.lesson_shape(resource)["sections"])


def _with_path(url: str, suffix: str) -> str:
    """A line item's URL with /scores (or another suffix) added to its path, its query kept (Canvas has one)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix))


def _next_page(headers: Mapping[str, str]) -> str:
    """The rel="next" address of a Link header, if any."""
    for part in headers.get("link", "").split(","):
        if 'rel="next"' in part and "<" in part and ">" in part:
            return part[part.index("<") + 1:part.index(">")]
    return ""


class LtiServices:
    def __init__(self, lti: Lti) -> None:
        self.lti = lti
        self.remote = lti.remote
        self._tokens: dict[tuple[int, str], tuple[float, str]] = {}
        self._lock = threading.Lock()

    # ---------------------------------------------------------------- access tokens

    def token(self, platform: Platform, scopes: tuple[str, ...]) -> str:
        key = (platform.id, " ".join(sorted(scopes)))
        with self._lock:
            expires, token = self._tokens.get(key, (0.0, ""))
        if token and time.monotonic() < expires:
            return token
        # OAuth 2's client credentials, the client proving itself with a JWT it signs (RFC 7523, as LTI 1.3's
        # security framework asks), sent through Remote: bounded in time and size like every call out.
        signing, issued = self.lti.keys.signing_key(), int(time.time())
        from joserfc import jwt  # here, not at the top: a class server that never talks to an LMS skips it

        assertion = jwt.encode({"alg": "RS256", "kid": signing.kid, "typ": "JWT"}, {
            "iss": platform.client_id, "sub": platform.client_id, "aud": platform.token_audience or platform.token_url,
            "iat": issued, "exp": issued + 300, "jti": secrets.token_urlsafe(16)}, signing)
        answer = self.remote.json("POST", platform.token_url, what="the LMS's token endpoint", form={
            "grant_type": "client_credentials", "scope": key[1],
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion}, ok=(200,)).body
        if not isinstance(answer, dict):
            raise RemoteError(f"the LMS's token endpoint {platform.token_url} did not answer a JSON object")
        token = str(answer.get("access_token") or "")
        if not token:
            raise RemoteError(f"the LMS's token endpoint {platform.token_url} answered without an access token")
        lifetime = float(answer.get("expires_in") or 3600)
        with self._lock:
            self._tokens[key] = (time.monotonic() + max(0.0, lifetime - 60), token)
        return token

    def forget_tokens(self, platform: Platform) -> None:
        with self._lock:
            for key in [key for key in self._tokens if key[0] == platform.id]:
                del self._tokens[key]

    def _call(self, platform: Platform, scopes: tuple[str, ...], method: str, url: str, *, what: str,
              accept: str = "application/json", body: Any = None, content_type: str = "application/json",
              ok: tuple[int, ...] = (200, 201)) -> Answer:
        headers = {"authorization": f"Bearer {self.token(platform, scopes)}", "accept": accept}
        try:
            return self.remote.json(method, url, what=what, headers=headers, body=body, content_type=content_type, ok=ok)
        except RemoteError as error:
            if error.status == 401:  # a token the LMS revoked or forgot: ask for a new one next time
                self.forget_tokens(platform)
            raise

    # ---------------------------------------------------------------- grades (Assignment and Grade Services)

    def line_items(self, platform: Platform, lineitems_url: str, resource: str) -> list[str]:
        """The course's columns for the resource (its resourceId), as the LMS lists them."""
        url, found = with_query(lineitems_url, {"resource_id": resource}), []
        for _ in range(MAX_PAGES):
            answer = self._call(platform, (LINE_ITEM_SCOPE,), "GET", url, what="the LMS's gradebook columns",
                                accept=LINE_ITEMS_TYPE)
            items = answer.body if isinstance(answer.body, list) else []
            found += [item["id"] for item in items if isinstance(item, dict) and item.get("resourceId") == resource
                      and isinstance(item.get("id"), str)]
            url = _next_page(answer.headers)
            if not url:
                break
        return found

    def make_line_item(self, platform: Platform, lineitems_url: str, resource: str) -> str:
        body = {"scoreMaximum": score_maximum(resource), "label": resource_title(resource), "resourceId": resource,
                "tag": TAG}
        answer = self._call(platform, (LINE_ITEM_SCOPE,), "POST", lineitems_url, what="a new gradebook column",
                            accept=LINE_ITEM_TYPE, body=body, content_type=LINE_ITEM_TYPE)
        made = answer.body.get("id") if isinstance(answer.body, dict) else None
        if not isinstance(made, str) or not made:
            raise RemoteError(f"the LMS made a gradebook column at {lineitems_url} but did not say its address")
        return made

    def send_score(self, platform: Platform, line_item: str, score: dict) -> None:
        self._call(platform, (SCORE_SCOPE,), "POST", _with_path(line_item, "/scores"), what="a learner's score",
                   body=score, content_type=SCORE_TYPE, ok=(200, 201, 202, 204))

    # ---------------------------------------------------------------- the roster (Names and Role Provisioning)

    def roster(self, platform: Platform, memberships_url: str) -> list[dict]:
        url, members = memberships_url, []
        for _ in range(MAX_PAGES):
            answer = self._call(platform, (ROSTER_SCOPE,), "GET", url, what="the course's roster", accept=ROSTER_TYPE)
            page = answer.body.get("members") if isinstance(answer.body, dict) else None
            members += [member for member in page or [] if isinstance(member, dict)]
            url = _next_page(answer.headers)
            if not url:
                break
        return members

    # ---------------------------------------------------------------- deep linking

    def deep_link_answer(self, platform: Platform, settings: dict, resources: list[str],
                         columns_wanted: dict[str, bool]) -> str:
        """The signed LtiDeepLinkingResponse that adds the resources (lesson ids, or 'path') to the course; a
        resource gets a gradebook column (lineItem) only if the course has none for it yet."""
        base = self.lti.base_url
        items = []
        for resource in resources:
            item = {"type": "ltiResourceLink", "title": resource_title(resource),
                    "url": f"{base}/" if resource == PATH else f"{base}/lessons/{resource}",
                    "custom": {"lesson": resource}}
            if columns_wanted.get(resource):
                item["lineItem"] = {"scoreMaximum": score_maximum(resource), "label": resource_title(resource),
                                    "resourceId": resource, "tag": TAG}
            items.append(item)
        now = int(self.lti.clock())
        claims = {"iss": platform.client_id, "aud": platform.issuer, "iat": now, "exp": now + 600,
                  "nonce": secrets.token_urlsafe(16), MESSAGE_TYPE: "LtiDeepLinkingResponse", VERSION: "1.3.0",
                  DEPLOYMENT: settings["deployment"],
                  "https://purl.imsglobal.org/spec/lti-dl/claim/content_items": items}
        if settings.get("data") is not None:
            claims["https://purl.imsglobal.org/spec/lti-dl/claim/data"] = settings["data"]
        key = self.lti.keys.signing_key()
        from joserfc import jwt

        return jwt.encode({"alg": "RS256", "kid": key.kid, "typ": "JWT"}, claims, key)


"""A small LMS for the LTI tests, run as its own process: lti1p3platform (an independent LTI 1.3 platform library,
on PyJWT and jwcrypto; the tool checks tokens with joserfc) wrapped in a FastAPI app with a course page, a
gradebook and a roster.

    python tests/lti_platform.py CONFIG.json     # {"port", "state_dir", "client_id", "deployment_id", "tool", "courses"}

What it does as a platform: starts launches (OIDC third-party-initiated login to the tool), answers the tool's
authorization request with a signed id_token (lti1p3platform builds and signs it), in the course page's frame
or a window of its own; deep linking (a teacher's request, the tool's answer checked by lti1p3platform against
the tool's published keys, a link and, when asked, a gradebook column made from each content item); the
token endpoint (lti1p3platform checks the tool's signed client assertion); Assignment and Grade Services
(line items listed, filtered by resource_id and tag, made; scores kept, each POST logged); Names and Role
Provisioning Services (the course's members). GET /state shows everything for the tests. Its key and its
gradebook are kept in state_dir, so a platform stopped and started again (an LMS that was down) knows them.
"""

from __future__ import annotations

import asyncio
import collections
import html
import json
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration

ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#"


def role_uris(roles: list[str]) -> list[str]:
    """A member's roles as the launch and the roster send them: a short context role under LIS v2's membership
    vocabulary, a role given whole (a sub-role's URI, an LTI 1.1 URN) as it is."""
    return [role if ":" in role else ROLE + role for role in roles]
SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/"


class Gradebook:
    """Everything the platform keeps, in state_dir/state.json: its key, links, line items, scores."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "state.json"
        self.lock = threading.Lock()
        if self.path.exists():
            self.data = json.loads(self.path.read_text())
        else:
            key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()).decode()
            public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                                   serialization.PublicFormat.SubjectPublicKeyInfo).decode()
            self.data = {"private_key": pem, "public_key": public, "links": {}, "line_items": {}, "results": {},
                         "score_posts": [], "deep_link_answers": [], "next": 1}
            self.save()

    def save(self) -> None:
        self.path.write_text(json.dumps(self.data, indent=1))

    def new_id(self) -> str:
        self.data["next"] += 1
        return str(self.data["next"])


class LmsRegistration(Registration):
    """lti1p3platform's Registration holding the platform's private key read once (a key object, which PyJWT signs
    with as it is) and its key ID, where the library read both from the key's PEM text for every token it signed
    (a launch's id_token, an access token): 88 ms of CPU a token on the 2-core machine against 0.8 ms, most of the
    LMS's work in the tests. The tokens are the same, byte for byte: RS256's signatures are deterministic, and the
    key ID is the library's own, worked out once."""

    def __init__(self, private_key: Any, kid: str | None) -> None:
        super().__init__()
        self._kid = kid
        self.set_platform_private_key(private_key)

    def get_kid(self) -> str | None:
        return self._kid


class LmsPlatform(LTI1P3PlatformConfAbstract):
    """lti1p3platform's view of this platform: its one registration, the tool's."""

    def init_platform_config(self, **kwargs: Any) -> None:
        self.lms: Lms = kwargs["lms"]

    def get_registration_by_params(self, **kwargs: Any) -> Registration:
        return self.lms.registration()


class Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs: Any) -> None:
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url: str) -> RedirectResponse:
        return RedirectResponse(url, status_code=302)


class Launch(LTIAdvantageMessageLaunchAbstract):
    def __init__(self, query: dict, platform: LmsPlatform) -> None:
        self.query = query
        super().__init__(None, platform)

    def get_preflight_response(self) -> dict:
        return self.query

    def render_launch_form(self, launch_data: dict, **kwargs: Any) -> HTMLResponse:
        return HTMLResponse(
            f'<!doctype html><html><body><form method="post" action="{html.escape(launch_data["launch_url"])}" '
            f'id="f"><input type="hidden" name="id_token" value="{html.escape(launch_data["id_token"])}">'
            f'<input type="hidden" name="state" value="{html.escape(launch_data["state"])}"></form>'
            '<script>document.getElementById("f").submit()</script></body></html>')


class Lms:
    """What every route reads: the platform's address, the tool's URLs, the courses and the gradebook."""

    def __init__(self, config: dict) -> None:
        self.config = config
        self.base = f"http://127.0.0.1:{config['port']}"
        self.tool = config["tool"]
        self.book = Gradebook(Path(config["state_dir"]))
        self.courses = config["courses"]
        pem = self.book.data["private_key"]
        self.signing_key = serialization.load_pem_private_key(pem.encode(), password=None)
        self.kid = Registration().set_platform_private_key(pem).get_kid()

    def registration(self) -> Registration:
        return (LmsRegistration(self.signing_key, self.kid).set_iss(self.base).set_client_id(self.config["client_id"])
                .set_deployment_id(self.config["deployment_id"]).set_oidc_login_url(self.tool["login"])
                .set_launch_url(self.tool["target"]).set_deeplink_launch_url(self.tool["target"])
                .set_tool_key_set_url(self.tool["jwks"]).set_platform_public_key(self.book.data["public_key"]))

    def platform(self) -> LmsPlatform:
        return LmsPlatform(lms=self)

    def member(self, course: str, user: str) -> dict:
        found = self.courses.get(course, {}).get("members", {}).get(user)
        if found is None:
            raise HTTPException(404, f"no member {user!r} in course {course!r}")
        return found

    def allowed(self, request: Request, scope: str) -> None:
        header = request.headers.get("authorization", "")
        platform = self.platform()
        platform.get_registration()
        try:
            ok = header.startswith("Bearer ") and platform.validate_token(header[7:], [scope])
        except Exception:
            ok = False
        if not ok:
            raise HTTPException(401, "invalid access token")

    def make_line_item(self, course: str, body: dict) -> str:
        item_id = self.book.new_id()
        url = f"{self.base}/courses/{course}/lineitems/{item_id}"
        self.book.data["line_items"][url] = {"id": url, "course": course, **{k: body[k] for k in (
            "scoreMaximum", "label", "resourceId", "tag", "resourceLinkId") if k in body}}
        return url


def create_platform(config: dict) -> FastAPI:
    lms = Lms(config)
    app = FastAPI()
    add_course_routes(app, lms)
    add_key_set_routes(app, lms)
    add_deep_linking_routes(app, lms)
    add_service_routes(app, lms)
    add_test_routes(app, lms)
    return app


def add_course_routes(app: FastAPI, lms: Lms) -> None:
    """The course, as people see it: its page, and the launches it starts."""

    @app.get("/course/{course}", response_class=HTMLResponse)
    def course_page(course: str, user: str, link: str = "", window: int = 0) -> str:
        """The course's page for one member: the link opened in a frame (or a link to a new window)."""
        lms.member(course, user)
        launch = f"/start/{link}?" + urlencode({"user": user, "window": window})
        if window:
            return f'<html><body><h1>{lms.courses[course]["title"]}</h1><a id="open" target="_blank" href="{launch}">Open</a></body></html>'
        return (f'<html><body><h1>{lms.courses[course]["title"]}</h1><iframe id="tool" src="{launch}" '
                'style="width:1200px;height:800px" allow="clipboard-write"></iframe></body></html>')

    @app.get("/start/{link}")
    def start(link: str, user: str, window: int = 0) -> RedirectResponse:
        """Third-party-initiated login of a resource link (or 'dl:COURSE': a teacher's deep linking)."""
        if link.startswith("dl:"):
            target = lms.tool["target"]
        else:
            found = lms.book.data["links"].get(link)
            if found is None:
                raise HTTPException(404, f"no link {link}")
            target = found["url"]
        login = Login(None, lms.platform())
        login.set_lti_message_hint(hint=f"{link}|{window}")
        login.set_launch_url(target)
        return login.initiate_login(user)

    @app.get("/auth")
    def authorize(request: Request) -> HTMLResponse:
        """The tool's authentication request: its redirect_uri must be the registered one; the id_token is
        lti1p3platform's, for the member and the link the message hint names."""
        query = dict(request.query_params)
        if query.get("redirect_uri") != lms.tool["redirect"] or query.get("response_mode") != "form_post" \
                or query.get("scope") != "openid" or query.get("response_type") != "id_token":
            raise HTTPException(400, "invalid authentication request")
        link, _, window = str(query.get("lti_message_hint", "")).partition("|")
        deep = link.startswith("dl:")
        course = link[3:] if deep else lms.book.data["links"].get(link, {}).get("course")
        if course not in lms.courses:
            raise HTTPException(400, "unknown message hint")
        who = lms.member(course, query.get("login_hint", ""))
        launch = Launch(query, lms.platform())
        launch.set_user_data(query["login_hint"], role_uris(who["roles"]), full_name=who["name"],
                             email_address=who.get("email"))
        launch.set_launch_context_claim(course, ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
                                        lms.courses[course]["title"], lms.courses[course].get("label"))
        launch.set_launch_presentation_claim("window" if window == "1" else "iframe", f"{lms.base}/course/{course}")
        lineitems = f"{lms.base}/courses/{course}/lineitems"
        if deep:
            launch.set_dl(f"{lms.base}/deep-link-return?" + urlencode({"course": course}), title="chainrule",
                          accept_types={"ltiResourceLink"}, extra_data={"course": course})
            launch.set_ags(lineitems, None, allow_creating_lineitems=True)
        else:
            found = lms.book.data["links"][link]
            launch.set_launch_url(found["url"])
            launch.set_resource_link_claim(link, title=found["title"])
            if found.get("custom"):
                launch.set_custom_parameters_claim(found["custom"])
            launch.set_ags(lineitems, found.get("line_item"), allow_creating_lineitems=True)
        launch.set_nrps(f"{lms.base}/courses/{course}/memberships")
        return launch.lti_launch()


def add_key_set_routes(app: FastAPI, lms: Lms) -> None:
    """The platform's public keys at /jwks and, the same keys, at /jwks/NAME: an address of a registration's own
    (a test's second registration of the tool). Each address answers as slowly as a test asks and counts its
    fetches, apart from the others."""

    served: dict[str, dict] = collections.defaultdict(lambda: {"fetches": 0, "delay": 0.0})  # by the address's NAME

    async def answer(name: str) -> dict:
        served[name]["fetches"] += 1
        if served[name]["delay"]:
            await asyncio.sleep(served[name]["delay"])  # a slow LMS (not a wait for an event: the delay is the point)
        return {"keys": lms.registration().get_jwks()}

    @app.get("/jwks")
    async def jwks() -> dict:
        return await answer("")

    @app.get("/jwks/{name}")
    async def named_jwks(name: str) -> dict:
        return await answer(name)

    @app.post("/jwks-mode")
    async def jwks_mode(request: Request) -> dict:
        """{"delay": seconds, "name": NAME} for every answer of /jwks/NAME (of /jwks without a name) from now;
        the count of its fetches so far (then 0 again)."""
        body = await request.json()
        name = str(body.get("name", ""))
        counted = served[name]["fetches"]
        served[name].update(fetches=0, delay=float(body.get("delay", 0.0)))
        return {"fetches": counted}

    @app.get("/jwks-fetches")
    def jwks_fetches(name: str = "") -> dict:
        return {"fetches": served[name]["fetches"]}


def add_deep_linking_routes(app: FastAPI, lms: Lms) -> None:
    """Deep linking's answer: the tool's chosen items checked, each made a link (and a gradebook column)."""

    @app.post("/deep-link-return", response_class=HTMLResponse)
    async def deep_link_return(request: Request, course: str) -> str:
        form = dict(parse_qsl((await request.body()).decode()))
        platform = lms.platform()
        platform.get_registration()
        items = platform.validate_deeplinking_resp({"JWT": form.get("JWT", "")})
        claims = platform._jwt["body"]  # lti1p3platform checked the signature and exp; the rest of the answer here
        if claims.get("iss") != lms.config["client_id"] or claims.get("aud") != lms.base \
                or claims.get("https://purl.imsglobal.org/spec/lti-dl/claim/data") != {"course": course}:
            raise HTTPException(400, "the deep-linking answer is not for this platform and request")
        with lms.book.lock:
            lms.book.data["deep_link_answers"].append({"course": course, "items": items})
            made = []
            for item in items:
                link = lms.book.new_id()
                found = {"course": course, "title": item.get("title", ""), "url": item["url"],
                         "custom": item.get("custom") or {}}
                if item.get("lineItem"):
                    found["line_item"] = lms.make_line_item(course, dict(item["lineItem"], resourceLinkId=link))
                lms.book.data["links"][link] = found
                made.append(link)
            lms.book.save()
        return "<html><body><h1>Added</h1>" + "".join(f'<p class="added" data-link="{link}">{link}</p>' for link in made) \
            + "</body></html>"


def add_service_routes(app: FastAPI, lms: Lms) -> None:
    """The token endpoint, Assignment and Grade Services and Names and Role Provisioning Services."""

    @app.post("/token")
    async def token(request: Request) -> dict:
        form = dict(parse_qsl((await request.body()).decode()))
        platform = lms.platform()
        platform.get_registration()
        try:
            return dict(platform.get_access_token(form))
        except Exception as error:
            raise HTTPException(400, f"invalid_client: {error}") from None

    @app.get("/courses/{course}/lineitems")
    def line_items(request: Request, course: str, resource_id: str = "", tag: str = "") -> JSONResponse:
        lms.allowed(request, SCOPE + "lineitem")
        found = [item for item in lms.book.data["line_items"].values() if item["course"] == course
                 and (not resource_id or item.get("resourceId") == resource_id) and (not tag or item.get("tag") == tag)]
        return JSONResponse([{k: v for k, v in item.items() if k != "course"} for item in found],
                            media_type="application/vnd.ims.lis.v2.lineitemcontainer+json")

    @app.post("/courses/{course}/lineitems")
    async def new_line_item(request: Request, course: str) -> JSONResponse:
        lms.allowed(request, SCOPE + "lineitem")
        body = await request.json()
        if not isinstance(body.get("scoreMaximum"), (int, float)) or not body.get("label"):
            raise HTTPException(400, "a line item needs scoreMaximum and label")
        with lms.book.lock:
            url = lms.make_line_item(course, body)
            lms.book.save()
        item = {k: v for k, v in lms.book.data["line_items"][url].items() if k != "course"}
        return JSONResponse(item, status_code=201, media_type="application/vnd.ims.lis.v2.lineitem+json")

    @app.post("/courses/{course}/lineitems/{item}/scores")
    async def score(request: Request, course: str, item: str) -> JSONResponse:
        lms.allowed(request, SCOPE + "score")
        url = f"{lms.base}/courses/{course}/lineitems/{item}"
        if url not in lms.book.data["line_items"]:
            raise HTTPException(404, "no such line item")
        if request.headers.get("content-type") != "application/vnd.ims.lis.v1.score+json":
            raise HTTPException(415, "scores are application/vnd.ims.lis.v1.score+json")
        body = await request.json()
        for key in ("userId", "activityProgress", "gradingProgress", "timestamp"):
            if key not in body:
                raise HTTPException(400, f"a score needs {key}")
        if body["userId"] not in lms.courses[course]["members"]:
            raise HTTPException(400, "the user is not in the course")
        with lms.book.lock:
            lms.book.data["score_posts"].append(dict(body, line_item=url))
            key = f"{url} {body['userId']}"
            kept = lms.book.data["results"].get(key)
            if kept is None or kept["timestamp"] < body["timestamp"]:  # an older score never replaces a newer one
                lms.book.data["results"][key] = body
            lms.book.save()
        return JSONResponse({}, status_code=200)

    @app.get("/courses/{course}/memberships")
    def memberships(request: Request, course: str) -> JSONResponse:
        lms.allowed(request, "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly")
        members = [{"user_id": user, "name": who["name"], "status": "Active",
                    "roles": role_uris(who["roles"])} for user, who in lms.courses[course]["members"].items()]
        return JSONResponse({"id": f"{lms.base}/courses/{course}/memberships",
                             "context": {"id": course, "title": lms.courses[course]["title"]}, "members": members},
                            media_type="application/vnd.ims.lti-nrps.v2.membershipcontainer+json")


def add_test_routes(app: FastAPI, lms: Lms) -> None:
    """What only the tests call: the whole state, and links made by hand."""

    @app.get("/state")
    def state() -> dict:
        with lms.book.lock:
            return {key: value for key, value in lms.book.data.items() if key not in ("private_key",)}

    @app.post("/links")
    async def add_link(request: Request) -> dict:
        """A link the teacher made by hand (no deep linking): {"course", "title", "url", "custom"?, "line_item"?}."""
        body = await request.json()
        with lms.book.lock:
            link = lms.book.new_id()
            found = {key: body[key] for key in ("course", "title", "url", "custom") if key in body}
            if body.get("line_item"):
                found["line_item"] = lms.make_line_item(body["course"], {"scoreMaximum": 8, "label": body["title"],
                                                                      "resourceLinkId": link})
            lms.book.data["links"][link] = found
            lms.book.save()
        return {"link": link}


if __name__ == "__main__":
    import uvicorn

    settings = json.loads(Path(sys.argv[1]).read_text())
    uvicorn.run(create_platform(settings), host="127.0.0.1", port=settings["port"], log_level="warning")

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


def create_platform(config: dict) -> FastAPI:
    base = f"http://127.0.0.1:{config['port']}"
    tool = config["tool"]
    book = Gradebook(Path(config["state_dir"]))
    courses = config["courses"]
    app = FastAPI()

    def registration() -> Registration:
        return (Registration().set_iss(base).set_client_id(config["client_id"])
                .set_deployment_id(config["deployment_id"]).set_oidc_login_url(tool["login"])
                .set_launch_url(tool["target"]).set_deeplink_launch_url(tool["target"])
                .set_tool_key_set_url(tool["jwks"]).set_platform_private_key(book.data["private_key"])
                .set_platform_public_key(book.data["public_key"]))

    class Platform(LTI1P3PlatformConfAbstract):
        def init_platform_config(self, **kwargs: Any) -> None:
            pass

        def get_registration_by_params(self, **kwargs: Any) -> Registration:
            return registration()

    class Login(OIDCLoginAbstract):
        def set_lti_message_hint(self, **kwargs: Any) -> None:
            self._lti_message_hint = kwargs["hint"]

        def get_redirect(self, url: str) -> RedirectResponse:
            return RedirectResponse(url, status_code=302)

    class Launch(LTIAdvantageMessageLaunchAbstract):
        def __init__(self, query: dict, platform: Platform) -> None:
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

    def member(course: str, user: str) -> dict:
        found = courses.get(course, {}).get("members", {}).get(user)
        if found is None:
            raise HTTPException(404, f"no member {user!r} in course {course!r}")
        return found

    # ------------------------------------------------------------ the course, as people see it

    @app.get("/course/{course}", response_class=HTMLResponse)
    def course_page(course: str, user: str, link: str = "", window: int = 0) -> str:
        """The course's page for one member: the link opened in a frame (or a link to a new window)."""
        member(course, user)
        launch = f"/start/{link}?" + urlencode({"user": user, "window": window})
        if window:
            return f'<html><body><h1>{courses[course]["title"]}</h1><a id="open" target="_blank" href="{launch}">Open</a></body></html>'
        return (f'<html><body><h1>{courses[course]["title"]}</h1><iframe id="tool" src="{launch}" '
                'style="width:1200px;height:800px" allow="clipboard-write"></iframe></body></html>')

    @app.get("/start/{link}")
    def start(link: str, user: str, window: int = 0) -> RedirectResponse:
        """Third-party-initiated login of a resource link (or 'dl:COURSE': a teacher's deep linking)."""
        if link.startswith("dl:"):
            target = tool["target"]
        else:
            found = book.data["links"].get(link)
            if found is None:
                raise HTTPException(404, f"no link {link}")
            target = found["url"]
        login = Login(None, Platform())
        login.set_lti_message_hint(hint=f"{link}|{window}")
        login.set_launch_url(target)
        return login.initiate_login(user)

    @app.get("/auth")
    def authorize(request: Request) -> HTMLResponse:
        """The tool's authentication request: its redirect_uri must be the registered one; the id_token is
        lti1p3platform's, for the member and the link the message hint names."""
        query = dict(request.query_params)
        if query.get("redirect_uri") != tool["redirect"] or query.get("response_mode") != "form_post" \
                or query.get("scope") != "openid" or query.get("response_type") != "id_token":
            raise HTTPException(400, "invalid authentication request")
        link, _, window = str(query.get("lti_message_hint", "")).partition("|")
        deep = link.startswith("dl:")
        course = link[3:] if deep else book.data["links"].get(link, {}).get("course")
        if course not in courses:
            raise HTTPException(400, "unknown message hint")
        who = member(course, query.get("login_hint", ""))
        launch = Launch(query, Platform())
        launch.set_user_data(query["login_hint"], [ROLE + role for role in who["roles"]], full_name=who["name"],
                             email_address=who.get("email"))
        launch.set_launch_context_claim(course, ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"],
                                        courses[course]["title"], courses[course].get("label"))
        launch.set_launch_presentation_claim("window" if window == "1" else "iframe", f"{base}/course/{course}")
        lineitems = f"{base}/courses/{course}/lineitems"
        if deep:
            launch.set_dl(f"{base}/deep-link-return?" + urlencode({"course": course}), title="chainrule",
                          accept_types={"ltiResourceLink"}, extra_data={"course": course})
            launch.set_ags(lineitems, None, allow_creating_lineitems=True)
        else:
            found = book.data["links"][link]
            launch.set_launch_url(found["url"])
            launch.set_resource_link_claim(link, title=found["title"])
            if found.get("custom"):
                launch.set_custom_parameters_claim(found["custom"])
            launch.set_ags(lineitems, found.get("line_item"), allow_creating_lineitems=True)
        launch.set_nrps(f"{base}/courses/{course}/memberships")
        return launch.lti_launch()

    jwks_served = {"fetches": 0, "delay": 0.0}  # how often the key set was asked for; how slowly it answers

    @app.get("/jwks")
    async def jwks() -> dict:
        jwks_served["fetches"] += 1
        if jwks_served["delay"]:
            await asyncio.sleep(jwks_served["delay"])  # a slow LMS (not a wait for an event: the delay is the point)
        return {"keys": registration().get_jwks()}

    @app.post("/jwks-mode")
    async def jwks_mode(request: Request) -> dict:
        """{"delay": seconds} for every answer of /jwks from now; the count of fetches so far (then 0 again)."""
        body = await request.json()
        counted = jwks_served["fetches"]
        jwks_served.update(fetches=0, delay=float(body.get("delay", 0.0)))
        return {"fetches": counted}

    @app.get("/jwks-fetches")
    def jwks_fetches() -> dict:
        return {"fetches": jwks_served["fetches"]}

    # ------------------------------------------------------------ deep linking

    @app.post("/deep-link-return", response_class=HTMLResponse)
    async def deep_link_return(request: Request, course: str) -> str:
        form = dict(parse_qsl((await request.body()).decode()))
        platform = Platform()
        platform.get_registration()
        items = platform.validate_deeplinking_resp({"JWT": form.get("JWT", "")})
        claims = platform._jwt["body"]  # lti1p3platform checked the signature and exp; the rest of the answer here
        if claims.get("iss") != config["client_id"] or claims.get("aud") != base \
                or claims.get("https://purl.imsglobal.org/spec/lti-dl/claim/data") != {"course": course}:
            raise HTTPException(400, "the deep-linking answer is not for this platform and request")
        with book.lock:
            book.data["deep_link_answers"].append({"course": course, "items": items})
            made = []
            for item in items:
                link = book.new_id()
                found = {"course": course, "title": item.get("title", ""), "url": item["url"],
                         "custom": item.get("custom") or {}}
                if item.get("lineItem"):
                    found["line_item"] = _make_line_item(course, dict(item["lineItem"], resourceLinkId=link))
                book.data["links"][link] = found
                made.append(link)
            book.save()
        return "<html><body><h1>Added</h1>" + "".join(f'<p class="added" data-link="{link}">{link}</p>' for link in made) \
            + "</body></html>"

    # ------------------------------------------------------------ services

    @app.post("/token")
    async def token(request: Request) -> dict:
        form = dict(parse_qsl((await request.body()).decode()))
        platform = Platform()
        platform.get_registration()
        try:
            return dict(platform.get_access_token(form))
        except Exception as error:
            raise HTTPException(400, f"invalid_client: {error}") from None

    def allowed(request: Request, scope: str) -> None:
        header = request.headers.get("authorization", "")
        platform = Platform()
        platform.get_registration()
        try:
            ok = header.startswith("Bearer ") and platform.validate_token(header[7:], [scope])
        except Exception:
            ok = False
        if not ok:
            raise HTTPException(401, "invalid access token")

    def _make_line_item(course: str, body: dict) -> str:
        item_id = book.new_id()
        url = f"{base}/courses/{course}/lineitems/{item_id}"
        book.data["line_items"][url] = {"id": url, "course": course, **{k: body[k] for k in (
            "scoreMaximum", "label", "resourceId", "tag", "resourceLinkId") if k in body}}
        return url

    @app.get("/courses/{course}/lineitems")
    def line_items(request: Request, course: str, resource_id: str = "", tag: str = "") -> JSONResponse:
        allowed(request, SCOPE + "lineitem")
        found = [item for item in book.data["line_items"].values() if item["course"] == course
                 and (not resource_id or item.get("resourceId") == resource_id) and (not tag or item.get("tag") == tag)]
        return JSONResponse([{k: v for k, v in item.items() if k != "course"} for item in found],
                            media_type="application/vnd.ims.lis.v2.lineitemcontainer+json")

    @app.post("/courses/{course}/lineitems")
    async def new_line_item(request: Request, course: str) -> JSONResponse:
        allowed(request, SCOPE + "lineitem")
        body = await request.json()
        if not isinstance(body.get("scoreMaximum"), (int, float)) or not body.get("label"):
            raise HTTPException(400, "a line item needs scoreMaximum and label")
        with book.lock:
            url = _make_line_item(course, body)
            book.save()
        item = {k: v for k, v in book.data["line_items"][url].items() if k != "course"}
        return JSONResponse(item, status_code=201, media_type="application/vnd.ims.lis.v2.lineitem+json")

    @app.post("/courses/{course}/lineitems/{item}/scores")
    async def score(request: Request, course: str, item: str) -> JSONResponse:
        allowed(request, SCOPE + "score")
        url = f"{base}/courses/{course}/lineitems/{item}"
        if url not in book.data["line_items"]:
            raise HTTPException(404, "no such line item")
        if request.headers.get("content-type") != "application/vnd.ims.lis.v1.score+json":
            raise HTTPException(415, "scores are application/vnd.ims.lis.v1.score+json")
        body = await request.json()
        for key in ("userId", "activityProgress", "gradingProgress", "timestamp"):
            if key not in body:
                raise HTTPException(400, f"a score needs {key}")
        if body["userId"] not in courses[course]["members"]:
            raise HTTPException(400, "the user is not in the course")
        with book.lock:
            book.data["score_posts"].append(dict(body, line_item=url))
            key = f"{url} {body['userId']}"
            kept = book.data["results"].get(key)
            if kept is None or kept["timestamp"] < body["timestamp"]:  # an older score never replaces a newer one
                book.data["results"][key] = body
            book.save()
        return JSONResponse({}, status_code=200)

    @app.get("/courses/{course}/memberships")
    def memberships(request: Request, course: str) -> JSONResponse:
        allowed(request, "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly")
        members = [{"user_id": user, "name": who["name"], "status": "Active",
                    "roles": [ROLE + role for role in who["roles"]]} for user, who in courses[course]["members"].items()]
        return JSONResponse({"id": f"{base}/courses/{course}/memberships",
                             "context": {"id": course, "title": courses[course]["title"]}, "members": members},
                            media_type="application/vnd.ims.lti-nrps.v2.membershipcontainer+json")

    # ------------------------------------------------------------ for the tests

    @app.get("/state")
    def state() -> dict:
        with book.lock:
            return {key: value for key, value in book.data.items() if key not in ("private_key",)}

    @app.post("/links")
    async def add_link(request: Request) -> dict:
        """A link the teacher made by hand (no deep linking): {"course", "title", "url", "custom"?, "line_item"?}."""
        body = await request.json()
        with book.lock:
            link = book.new_id()
            found = {key: body[key] for key in ("course", "title", "url", "custom") if key in body}
            if body.get("line_item"):
                found["line_item"] = _make_line_item(body["course"], {"scoreMaximum": 8, "label": body["title"],
                                                                      "resourceLinkId": link})
            book.data["links"][link] = found
            book.save()
        return {"link": link}

    return app


if __name__ == "__main__":
    import uvicorn

    settings = json.loads(Path(sys.argv[1]).read_text())
    uvicorn.run(create_platform(settings), host="127.0.0.1", port=settings["port"], log_level="warning")

"""The three HTML pages. The templates (web-front's) build everything from the JSON API; the server
gives them only {"request", "title"} and, on the lesson page, "lesson_id". Until a template exists,
a minimal fallback page is served, so that the server never depends on the front end to start."""

from __future__ import annotations

import html

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from chainrule import lessons
from chainrule.web.page_templates import TEMPLATES_DIR, templates
from chainrule.web.roles import LEARNER

router = APIRouter(include_in_schema=False, dependencies=[LEARNER])  # every page: a learner's (web/roles.py)

FALLBACK = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title} · chainrule</title></head>
<body><main id="main" data-page="{page}" data-lesson-id="{lesson_id}"><h1>{title}</h1>
<p>The page for this address is not installed in this build of chainrule; its data is served under
<code>/api/</code>.</p></main></body></html>
"""


def render(request: Request, template: str, title: str, status_code: int = 200, lesson_id: str = "") -> HTMLResponse:
    context = {"request": request, "title": title}
    if lesson_id:
        context["lesson_id"] = lesson_id
    if (TEMPLATES_DIR / template).is_file():
        return templates.TemplateResponse(request, template, context, status_code=status_code)
    page = template.removesuffix(".html")
    text = FALLBACK.format(title=html.escape(title), page=page, lesson_id=html.escape(lesson_id))
    return HTMLResponse(text, status_code=status_code)


@router.get("/", response_class=HTMLResponse)
def path_page(request: Request) -> HTMLResponse:
    return render(request, "path.html", lessons.get_path()["title"])


@router.get("/lessons/{lesson_id}", response_class=HTMLResponse)
def lesson_page(request: Request, lesson_id: str) -> HTMLResponse:
    if lesson_id not in lessons.lesson_ids():
        message = (
            f"There is no lesson {lesson_id!r}. The lessons you can open are: "
            + ", ".join(lessons.lesson_ids()) + "."
        )
        body = (
            '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>No such lesson · chainrule</title>'
            f'</head><body><main><h1>No such lesson</h1><p>{html.escape(message)}</p>'
            '<p><a href="/">Back to the path</a></p></main></body></html>'
        )
        return HTMLResponse(body, status_code=404)
    return render(request, "lesson.html", lessons.lesson_data(lesson_id)["title"], lesson_id=lesson_id)


@router.get("/review", response_class=HTMLResponse)
def review_page(request: Request) -> HTMLResponse:
    return render(request, "review.html", "Review")

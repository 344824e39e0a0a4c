"""The HTML pages' templates (web/templates/), with the names every template may use.

    templates.TemplateResponse(request, "account.html", {"request": request, "title": "Your account"})
"""

from __future__ import annotations

from pathlib import Path

from fastapi.templating import Jinja2Templates

from chainrule.classes.people import state_banner
from chainrule.expr import FUNCTIONS
from chainrule.web.static_files import static_bundle

__all__ = ["TEMPLATES_DIR", "templates"]

TEMPLATES_DIR = Path(__file__).parent / "templates"
templates = Jinja2Templates(directory=str(TEMPLATES_DIR))
templates.env.globals["static"] = lambda path: static_bundle().url(path)  # {{ static("js/lesson.js") }}
# The expression language's functions, read from the engine's op table whenever a page shows them.
templates.env.globals["expression_functions"] = lambda: " ".join(FUNCTIONS)
# What a class that is not open says at the top of every page to those who may only read in it.
templates.env.globals["state_banner"] = lambda account: state_banner(account or None)

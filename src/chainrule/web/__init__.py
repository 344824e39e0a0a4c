"""The local lesson server: `create_app` (FastAPI app) and its security layer. See docs/security.md."""

from chainrule.web.app import create_app
from chainrule.web.security import COOKIE_NAME, TOKEN_HEADER, new_token

__all__ = ["create_app", "new_token", "COOKIE_NAME", "TOKEN_HEADER"]

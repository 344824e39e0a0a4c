"""What the app keeps for its routes, named and typed in one place; every route reads it one way:

    state = app_state(request)        # (or the app itself: app_state(app))
    state.accounts.learners(class_id)

`create_app` sets every name below to its default (``install``); class mode, LTI and single sign-on set
theirs when they are added. A route never reads ``request.app.state.X`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, cast

if TYPE_CHECKING:
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.lti import Lti
    from chainrule.classes.lti_services import LtiServices
    from chainrule.classes.sessions import CookieNames
    from chainrule.classes.sso import Sso
    from chainrule.web.rate_buckets import ComputeRate
    from chainrule.web.store_access import StoreAccess

__all__ = ["AppState", "app_state", "install"]


class AppState:
    """The names the app keeps (a typed view of Starlette's ``app.state``)."""

    services: "StoreAccess"          # the progress store and graded runs (class mode: ClassServices)
    class_mode: bool                 # `chainrule serve` (accounts) rather than `chainrule lesson` (a token)
    accounts: "Accounts"             # class mode: the class database's accounts
    secret: str                      # class mode: the secret sessions and CSRF tokens are signed with
    secure: bool                     # class mode: served over https (cookies marked Secure, __Host- names)
    cookie_names: "CookieNames"      # class mode: the session, CSRF and device cookies' names
    clock: Callable[[], Any]         # class mode: the class store's clock
    learner_quota: int               # class mode: the characters one learner may keep
    lti: "Lti | None"                # web/routes_lti.py, when the class server speaks LTI
    lti_services: "LtiServices | None"
    frame_origins: Any               # routes_lti.FrameOrigins: which LMS may frame which class's pages
    frame_ancestors: Any             # the same, as security.py's SecurityHeaders asks it
    sso: "Sso | None"                # web/routes_sso.py, when the class server has sign-in providers
    file_slot: Any                   # progress_files.file_slot: (event loop, lock)
    regrade_tasks: set               # routes_regrade: regrades grading in the background
    compute_rate: "ComputeRate"      # web/rate_buckets.py (compute_rate.py's rule): each learner's bucket for work that costs CPU


DEFAULTS: dict[str, Any] = {"class_mode": False, "lti": None, "lti_services": None, "frame_origins": None,
                            "frame_ancestors": None, "sso": None, "file_slot": None}


def install(app: Any, **values: Any) -> None:
    """Set ``values`` on the app (names of AppState only; at first, every default)."""
    unknown = set(values) - set(AppState.__annotations__)
    if unknown:
        raise TypeError(f"not a name of AppState: {', '.join(sorted(unknown))}")
    for name, value in values.items():
        setattr(app.state, name, value)


def app_state(holder: Any) -> AppState:
    """The app's state, from a request or from the app."""
    app = getattr(holder, "app", holder)
    return cast(AppState, app.state)

"""`chainrule lti ...`: chainrule as an LTI 1.3 tool in a school's LMS (docs/classroom.md, "In the school's LMS").

    chainrule lti register --url https://class.example.org
        prints what the LMS administrator pastes into the LMS (tool URLs, JWKS URL, redirect URIs)
    chainrule lti register --url https://class.example.org --issuer ISS --client-id ID --deployment-id DEP \\
        --jwks-url URL --auth-url URL --token-url URL [--lms-url https://school.instructure.com]
        registers the LMS (what the LMS shows once the tool is added)
    chainrule lti list                 the registered LMS platforms and their deployments
    chainrule lti rotate-key           a new key pair (the old public key stays published until the next rotation)
    chainrule lti scores [CLASS]       the scores on their way to the LMS gradebook, and why one waits
    chainrule lti path-column CLASS [on|off]   whether the course's gradebook gets a column for the whole path
                                       (off until the teacher turns it on; without on|off: what it is)

Each takes --data-dir / --database like `chainrule serve`. The tool's key pair lives in the data folder
(lti-keys/, each private key of mode 0600): a web process on another host needs a copy of that folder.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from chainrule.commands.class_ import add_database_options
from chainrule.text_safety import terminal_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("lti", help="put the class server in a school's LMS (LTI 1.3)",
                                   description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="lti_command", metavar="ACTION", required=True)
    sub = commands.add_parser("register", help="print what the LMS needs; with --issuer ..., register an LMS",
                              description="Without --issuer: print the URLs an LMS administrator pastes into the LMS. "
                              "With --issuer and the rest: register that LMS (again: update it, add a deployment).")
    sub.add_argument("--url", required=True, help="the address learners open, as `chainrule serve --url` has it")
    sub.add_argument("--issuer", help="the platform's issuer (Canvas: https://canvas.instructure.com)")
    sub.add_argument("--client-id", help="the client ID the LMS gave the tool")
    sub.add_argument("--deployment-id", action="append", default=[], metavar="ID",
                     help="a deployment ID the LMS gave the tool (repeatable)")
    sub.add_argument("--jwks-url", help="the platform's public keyset URL")
    sub.add_argument("--auth-url", help="the platform's OIDC authorization (authentication request) URL")
    sub.add_argument("--token-url", help="the platform's OAuth 2 access token URL")
    sub.add_argument("--token-audience", default="", help="the aud of the tool's token request, when the LMS wants "
                     "another than the token URL")
    sub.add_argument("--lms-url", action="append", default=[], metavar="URL",
                     help="the address people open the LMS at, whose pages frame the tool (repeatable)")
    sub.add_argument("--name", default="", help="a name for this LMS in listings")
    add_database_options(sub)
    sub.set_defaults(func=guarded(_register))
    for name, function, help_text in (("list", _list, "the registered LMS platforms"),
                                      ("rotate-key", _rotate, "make a new key pair; the previous one stays published")):
        sub = commands.add_parser(name, help=help_text, description=help_text)
        add_database_options(sub)
        sub.set_defaults(func=guarded(function))
    sub = commands.add_parser("scores", help="the scores on their way to the LMS gradebook",
                              description="Every score of an LMS class (or of all): sent, or waiting and why.")
    sub.add_argument("name", nargs="?", help="the class's name (default: every class)")
    add_database_options(sub)
    sub.set_defaults(func=guarded(_scores))
    sub = commands.add_parser("path-column", help="whether the LMS gradebook gets a column for the whole path",
                              description="Each lesson linked in the course has its gradebook column; the whole path "
                              "gets one (each learner's credit in every lesson) only when its teacher turns it on.")
    sub.add_argument("name", help="the class's name (an LMS course's)")
    sub.add_argument("setting", nargs="?", choices=("on", "off"), help="turn it on or off (default: say what it is)")
    add_database_options(sub)
    sub.set_defaults(func=guarded(_path_column))


def guarded(command: Any, name: str = "lti") -> Any:
    """The command, with its refusals (and a store or file that cannot be used) as one line on stderr, exit 1."""

    def run(args: argparse.Namespace) -> int:
        from chainrule.classes.accounts import ClassError
        from chainrule.progress import StoreError

        try:
            return command(args)
        except (ClassError, StoreError, OSError) as error:
            print(f"chainrule {name}: error: {terminal_text(str(error))}", file=sys.stderr)
            return 1

    return run


def tool(data_dir: Any, store: Any, accounts: Any, url: str) -> Any:
    """The LTI tool of a class store: its keys in the data folder, its URLs under ``url``."""
    from pathlib import Path

    from chainrule.classes.lti import Lti
    from chainrule.classes.lti_keys import KEY_FOLDER, ToolKeys
    from chainrule.progress.store import default_data_dir

    folder = Path(data_dir).expanduser() if data_dir else default_data_dir()
    return Lti(store, accounts, ToolKeys(folder / KEY_FOLDER), url)


def _open(args: argparse.Namespace, url: str = "http://localhost:8000") -> tuple[Any, Any]:
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts

    store = open_class_store(args.data_dir, args.database)
    return store, tool(args.data_dir, store, Accounts(store), url)


def check_url(url: str) -> str:
    from urllib.parse import urlsplit

    from chainrule.classes.accounts import ClassError
    from chainrule.classes.addresses import check_address
    from chainrule.errors import InputError
    from chainrule.loopback import is_loopback_bind

    try:
        url = check_address(url)
    except InputError as error:
        raise ClassError(str(error), kind="invalid") from None
    parts = urlsplit(url)
    if parts.scheme == "http" and not is_loopback_bind(parts.hostname or ""):
        raise ClassError("an LMS launches tools over HTTPS only: --url must be the https:// address of the TLS proxy "
                         "(docs/classroom.md, 'On a server: systemd and TLS')", kind="invalid")
    return url


def _register(args: argparse.Namespace) -> int:
    from chainrule.classes.accounts import ClassError

    url = check_url(args.url)
    store, lti = _open(args, url)
    with store:
        given = [args.issuer, args.client_id, args.jwks_url, args.auth_url, args.token_url]
        if not any(given) and not args.deployment_id:
            _print_tool(lti)
            return 0
        names = ("--issuer", "--client-id", "--jwks-url", "--auth-url", "--token-url")
        missing = [name for name, value in zip(names, given) if not value] + (
            ["--deployment-id"] if not args.deployment_id else [])
        if missing:
            raise ClassError("to register an LMS give " + ", ".join(missing) + " too (the LMS shows them once the "
                             "tool is added: docs/classroom.md)", kind="invalid")
        platform = lti.register(issuer=args.issuer, client_id=args.client_id, deployments=args.deployment_id,
                                jwks_url=args.jwks_url, auth_login_url=args.auth_url, token_url=args.token_url,
                                name=args.name, lms_origins=args.lms_url, token_audience=args.token_audience)
    print(terminal_text(f"Registered {platform.name}: issuer {platform.issuer}, client ID {platform.client_id}, "
                        f"deployments {', '.join(platform.deployments)}."))
    print(terminal_text("Pages of its courses may be framed by: " + ", ".join(platform.lms_origins)
                        + " (add the address people open the LMS at with --lms-url, if it is not there)."))
    return 0


def _print_tool(lti: Any) -> None:
    urls = lti.urls()
    lti.keys.signing_key()  # the key pair exists from now on: the LMS may fetch the key set at once
    rows = [("Tool URL, Target Link URI", urls["target"]), ("Login initiation URL", urls["login"]),
            ("Redirect URI(s)", urls["redirect"]), ("Deep linking (content selection) URL", urls["deep_linking"]),
            ("Public keyset (JWKS) URL", urls["jwks"]), ("Domain", urls["domain"])]
    lines = ["Paste these into the LMS (docs/classroom.md has the steps for Canvas, Moodle and Blackboard):", ""]
    lines += [f"  {label + ':':38} {value}" for label, value in rows]
    lines += [
        "",
        "  Services: Assignment and Grade Services (line items, scores), Names and Role Provisioning.",
        "  Privacy: send the user's name. Placements: course navigation, and assignment or link selection",
        "  (deep linking).",
        "",
        "Then register the LMS here with what it shows (chainrule lti register --url URL --issuer ...",
        "--client-id ... --deployment-id ... --jwks-url ... --auth-url ... --token-url ...).",
    ]
    for line in lines:
        print(terminal_text(line))


def _list(args: argparse.Namespace) -> int:
    store, lti = _open(args)
    with store:
        platforms = lti.platforms()
    if not platforms:
        print("No LMS registered: `chainrule lti register --url URL` says what to paste into one.")
    for platform in platforms:
        print(terminal_text(f"{platform.name}  issuer {platform.issuer}  client ID {platform.client_id}  "
                            f"deployments {', '.join(platform.deployments) or '-'}"))
        print(terminal_text(f"    authorization {platform.auth_login_url}  token {platform.token_url}  "
                            f"keys {platform.jwks_url}  framed by {', '.join(platform.lms_origins)}"))
    return 0


def _rotate(args: argparse.Namespace) -> int:
    store, lti = _open(args)
    with store:
        kid, retired = lti.keys.rotate()
    print(terminal_text(f"New signing key {kid}; the previous key stays in the key set until the next rotation."
                        + (f" Retired: {', '.join(retired)}." if retired else "")))
    return 0


def _scores(args: argparse.Namespace) -> int:
    store, lti = _open(args)
    with store:
        class_id = lti.accounts.class_id(args.name) if args.name else None
        rows = lti.tables.outbox(class_id)
    if not rows:
        print("No scores for the LMS yet.")
    for row in rows:
        state = "sent" if row.sent else f"waiting ({row.attempts} tries: {row.last_error or 'not tried yet'})"
        print(terminal_text(f"{row.name[:24]:24} {row.resource:36} {row.score_given:g} of {row.score_maximum:g}  {state}"))
    return 0


def _path_column(args: argparse.Namespace) -> int:
    store, lti = _open(args)
    with store:
        class_id = lti.accounts.class_id(args.name)
        if args.setting is not None:
            lti.set_path_column(class_id, args.setting == "on")
        on = lti.path_column(class_id)
    print(terminal_text(f"{args.name}: the whole path " + (
        "has a column in the LMS gradebook (each learner's credit in every lesson)." if on else
        "has no column in the LMS gradebook (each lesson linked in the course has its own).")))
    return 0

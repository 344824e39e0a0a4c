"""`chainrule sso ...`: single sign-on for a standalone class server (OpenID Connect; docs/classroom.md,
"Single sign-on").

    chainrule sso redirect-uri "School account" --url https://class.example.org
        (the redirect URI to register at the provider, before it gives a client ID)
    chainrule sso add "School account" --issuer https://login.school.example --client-id ID --url https://class.example.org
        (the client secret is read from $CHAINRULE_SSO_SECRET, or --client-secret-file FILE: never on a command line)
    chainrule sso list
    chainrule sso remove "School account"
    chainrule sso passwords "Physics 2b" on|off      the administrator's override of the teacher's choice
        (off: refused while a teacher has no linked sign-in account; learners without one are named, and
        --lock-out turns passwords off anyway)

Each takes --data-dir / --database like `chainrule serve`.
"""

from __future__ import annotations

import argparse
import os
import shlex
from typing import Any

from chainrule.commands.class_ import add_database_options
from chainrule.commands.lti import check_url, guarded
from chainrule.text_safety import terminal_text

SECRET_ENV = "CHAINRULE_SSO_SECRET"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("sso", help="sign in to the class server through the school's OpenID provider",
                                   description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="sso_command", metavar="ACTION", required=True)
    sub = commands.add_parser("redirect-uri", help="the redirect URI to register at a provider, before adding it",
                              description="Print the redirect URI the provider named NAME will send people back to: "
                              "register it at the provider, which then gives the client ID `chainrule sso add` needs.")
    sub.add_argument("name", help="the provider's name on the sign-in button, as `chainrule sso add` will be given it")
    sub.add_argument("--url", required=True, help="the address learners open, as `chainrule serve --url` has it")
    sub.set_defaults(func=guarded(_redirect_uri, "sso"))
    sub = commands.add_parser("add", help="add (or change) a sign-in provider",
                              description="Add a provider learners and teachers sign in with. Register this server "
                              "at the provider first: the command prints the redirect URI it needs.")
    sub.add_argument("name", help="the provider's name on the sign-in button (e.g. 'School account')")
    sub.add_argument("--issuer", required=True, help="the provider's issuer URL (its discovery document is under it)")
    sub.add_argument("--client-id", required=True, help="the client ID the provider gave this server")
    sub.add_argument("--client-secret-file", default=None, metavar="FILE",
                     help=f"a file holding the client secret (default: ${SECRET_ENV})")
    sub.add_argument("--url", required=True, help="the address learners open, as `chainrule serve --url` has it")
    add_database_options(sub)
    sub.set_defaults(func=guarded(_add, "sso"))
    sub = commands.add_parser("list", help="the sign-in providers")
    add_database_options(sub)
    sub.set_defaults(func=guarded(_list, "sso"))
    sub = commands.add_parser("remove", help="remove a sign-in provider (linked accounts keep their link)")
    sub.add_argument("name")
    add_database_options(sub)
    sub.set_defaults(func=guarded(_remove, "sso"))
    sub = commands.add_parser("passwords", help="allow or forbid passwords in a class (the teacher decides on the "
                              "teacher's page; this is the administrator's way back)")
    sub.add_argument("class_name", metavar="class")
    sub.add_argument("setting", choices=("on", "off"))
    sub.add_argument("--lock-out", action="store_true",
                     help="turn passwords off even though learners with no linked sign-in account could not sign in")
    add_database_options(sub)
    sub.set_defaults(func=guarded(_passwords, "sso"))


def _open(args: argparse.Namespace, url: str = "http://localhost:8000") -> tuple[Any, Any]:
    from chainrule.classes import open_class_store
    from chainrule.classes.accounts import Accounts
    from chainrule.classes.sso import Sso

    store = open_class_store(args.data_dir, args.database)
    return store, Sso(store, Accounts(store), url)


def _secret(args: argparse.Namespace) -> str:
    from chainrule.classes.accounts import ClassError

    if args.client_secret_file:
        with open(args.client_secret_file, encoding="utf-8") as handle:
            return handle.read().strip()
    if os.environ.get(SECRET_ENV):
        return os.environ[SECRET_ENV].strip()
    raise ClassError(f"give the client secret in ${SECRET_ENV} or with --client-secret-file FILE (a secret on the "
                     "command line would be visible to every user of this machine)", kind="invalid")


def _redirect_uri(args: argparse.Namespace) -> int:
    from chainrule.classes.sso import callback_uri

    print(terminal_text(callback_uri(check_url(args.url), args.name)))
    return 0


def _add(args: argparse.Namespace) -> int:
    store, sso = _open(args, check_url(args.url))
    with store:
        provider = sso.add_provider(args.name, args.issuer, args.client_id, _secret(args))
    print(terminal_text(f"Sign-in provider {provider.name!r} ({provider.issuer}) is ready."))
    print(terminal_text(f"Register this redirect URI at the provider: {sso.callback(provider)}"))
    return 0


def _list(args: argparse.Namespace) -> int:
    store, sso = _open(args)
    with store:
        providers = sso.providers()
    if not providers:
        print("No sign-in provider: add one with `chainrule sso add NAME --issuer URL --client-id ID --url URL`.")
    for provider in providers:
        print(terminal_text(f"{provider.name}  issuer {provider.issuer}  client ID {provider.client_id}"))
    return 0


def _remove(args: argparse.Namespace) -> int:
    from chainrule.classes.accounts import ClassError

    store, sso = _open(args)
    with store:
        if not sso.tables.remove_provider(args.name):
            raise ClassError(f"there is no sign-in provider named {args.name!r}", kind="not-found")
    print(terminal_text(f"Removed the sign-in provider {args.name!r}."))
    return 0


def _passwords(args: argparse.Namespace) -> int:
    from chainrule.classes.accounts import ClassError
    from chainrule.classes.sso import LockOut, count, names

    store, sso = _open(args)
    with store:
        class_id = sso.accounts.class_id(args.class_name)
        try:
            sso.set_passwords(class_id, args.setting == "on", lock_out=args.lock_out)
        except LockOut as error:
            raise ClassError(f"{error}. To turn them off anyway: chainrule sso passwords {shlex.quote(args.class_name)} "
                             "off --lock-out", kind="conflict") from None
        if args.setting == "off" and args.lock_out and (people := sso.locked_out(class_id)):
            print(terminal_text(f"Locked out until passwords are on again: {count(people)} ({names(people)})."))
    print(terminal_text(f"Passwords are {args.setting} in {args.class_name!r}."))
    return 0

"""The session secret that keeps a signed-in browser signed in across server restarts.

Every start of `chainrule lesson` prints a fresh link token. Opening that link sets a cookie; the
cookie's value is not the token but a value derived from a secret kept in the data folder
(`session_secret`, readable by its owner only, like Jupyter's cookie secret). A restarted server
reads the same secret, so an open tab's cookie is still good, while the new link's token is new.
Deleting the file signs every browser out.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import stat
from pathlib import Path

__all__ = ["SECRET_NAME", "load_or_create_secret", "cookie_value"]

SECRET_NAME = "session_secret"
SECRET_BYTES = 32
OWNER_ONLY = 0o600


class SecretError(Exception):
    """The secret cannot be read or written; str() says which file and why."""


def _read(path: Path) -> str:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:  # readable by others: tighten it rather than trust a file others may have read
        os.chmod(path, OWNER_ONLY)
    text = path.read_text(encoding="ascii").strip()
    if len(text) < SECRET_BYTES * 2 or any(c not in "0123456789abcdef" for c in text):
        raise SecretError(f"{path} does not hold a session secret (64 hex digits); delete it to make a new one")
    return text


def load_or_create_secret(data_dir: Path) -> str:
    """The secret in `data_dir/session_secret`, created (mode 0600) if missing. Raises SecretError."""
    path = Path(data_dir) / SECRET_NAME
    try:
        Path(data_dir).mkdir(parents=True, exist_ok=True)
        if path.exists():
            return _read(path)
        secret = secrets.token_hex(SECRET_BYTES)
        try:
            # O_EXCL: two servers starting at once agree on one secret (the loser reads the winner's).
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, OWNER_ONLY)
        except FileExistsError:
            return _read(path)
        with os.fdopen(handle, "w", encoding="ascii") as file:
            file.write(secret + "\n")
        return secret
    except (OSError, UnicodeDecodeError) as error:
        raise SecretError(f"cannot keep the session secret in {path}: {getattr(error, 'strerror', None) or error}") from error


def cookie_value(secret: str) -> str:
    """The session cookie for a secret (the secret itself never leaves the data folder)."""
    return hmac.new(secret.encode("ascii"), b"chainrule session cookie v1", hashlib.sha256).hexdigest()

"""The LTI tool's own key pair: made and rotated by the tool, each private key in a file of mode 0600.

    keys = ToolKeys(data_dir / "lti-keys")
    keys.signing_key()      # the newest key (made on first use): signs deep-linking answers and service requests
    keys.jwks()             # {"keys": [...]}: the public keys an LMS fetches from /lti/jwks.json
    keys.rotate()           # a new signing key; the one before stays published, older ones are removed

Why two are published: an LMS caches the tool's key set for a while, so a message signed just before a
rotation must still verify after it. Rotating twice retires the oldest key. Each key is one file
``<made, epoch seconds>-<kid>.pem`` in a folder of mode 0700; a file readable by others is set back to 0600
(the server says so on its log).

The keys are read from their files once and kept in memory, with the public key set built from them
(``jwks()`` answers every LMS's fetch of /lti/jwks.json from memory, in no time): a request lists the folder
(one system call) and reads the files again only when the list changed, after a rotation by this process or
by ``chainrule lti rotate-key`` in another. A key file is never rewritten in place: a new key is a new file.
"""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from joserfc.jwk import RSAKey  # imported where a key is read or made: a server that never signs skips it

KEY_FOLDER = "lti-keys"
KEY_BITS = 2048
PUBLISHED = 2  # the signing key and the one before it
log = logging.getLogger("chainrule.lti")


class ToolKeys:
    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self._lock = threading.Lock()
        self._loaded: tuple[tuple[str, ...], list[RSAKey], dict] = ((), [], {"keys": []})  # files, keys, set

    def _current(self) -> tuple[list[RSAKey], dict]:
        """The published keys (oldest first) and their public set: from memory unless the files changed."""
        files = self._files()[-PUBLISHED:]
        names = tuple(path.name for path in files)
        loaded = self._loaded
        if names and names == loaded[0]:
            return loaded[1], loaded[2]
        with self._lock:
            files = self._files()[-PUBLISHED:] or [self._newest_made()]
            names = tuple(path.name for path in files)
            if names != self._loaded[0]:
                keys = [self._load(path) for path in files]
                self._loaded = (names, keys, {"keys": [key.as_dict(private=False) for key in keys]})
            return self._loaded[1], self._loaded[2]

    def _newest_made(self) -> Path:
        self._make()
        return self._files()[-1]

    def _files(self) -> list[Path]:
        if not self.folder.is_dir():
            return []
        return sorted((path for path in self.folder.glob("*.pem") if path.name.split("-", 1)[0].isdigit()),
                      key=lambda path: (int(path.name.split("-", 1)[0]), path.name))

    def _load(self, path: Path) -> RSAKey:
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            log.warning("the LTI key %s was readable by others (mode %o): set back to 0600", path, mode)
            path.chmod(0o600)
        kid = path.stem.split("-", 1)[1]
        from joserfc.jwk import RSAKey

        return RSAKey.import_key(path.read_bytes(), parameters={"kid": kid, "use": "sig", "alg": "RS256"})

    def _make(self) -> str:
        """A new key in its file; returns its kid."""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.folder.chmod(0o700)
        kid = secrets.token_hex(8)
        from joserfc.jwk import RSAKey

        key = RSAKey.generate_key(KEY_BITS, parameters={"kid": kid, "use": "sig", "alg": "RS256"})
        made = time.time_ns() // 1000  # microseconds: two rotations in one second still sort in order
        path = self.folder / f"{made}-{kid}.pem"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(key.as_pem(private=True))
        return kid

    def signing_key(self) -> RSAKey:
        return self._current()[0][-1]

    def published(self) -> list[RSAKey]:
        return list(self._current()[0])

    def jwks(self) -> dict:
        """The public key set (the same dict each time until the keys change: do not modify it)."""
        return self._current()[1]

    def rotate(self) -> tuple[str, list[str]]:
        """A new signing key; returns its kid and the kids retired (no longer published)."""
        self.signing_key()  # a folder without a key gets its first one, so that the rotation keeps it published
        kid = self._make()
        files = self._files()
        retired = []
        for path in files[:-PUBLISHED]:
            retired.append(path.stem.split("-", 1)[1])
            path.unlink()
        return kid, retired

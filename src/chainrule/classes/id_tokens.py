"""Checking an id_token, the one rule for an LTI launch (classes/lti.py) and an OpenID Connect sign-in
(classes/sso.py): its signature against the issuer's published keys, then its claims.

    keys = KeySets(Remote())
    claims = verify(token, keys, jwks_url, issuer=..., client_id=..., nonce=..., now=time.time())

The signature: only asymmetric algorithms (never "none", never an HMAC keyed with a public key), with the key
the token's header names (``kid``) in the issuer's key set, which is fetched again when it does not hold that
key (the issuer rotated its keys) but at most every 10 seconds. The claims, through Authlib's OpenID Connect
claim classes (joserfc underneath): ``iss`` is the issuer, ``aud`` holds our client id, ``azp`` is our client id
when present and present when there are several audiences, ``exp`` not passed and ``iat`` not in the future (a
minute of leeway for clocks), ``nonce`` the one we sent. Every refusal is a TokenRefused whose ``cause`` names
the check that failed.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from typing import Any

from authlib.oidc.core import CodeIDToken, ImplicitIDToken
from joserfc import jwt
from joserfc.errors import (
    BadSignatureError,
    ClaimError,
    DecodeError,
    ExpiredTokenError,
    JoseError,
    MissingClaimError,
    UnsupportedAlgorithmError,
)
from joserfc.jwk import KeySet

from chainrule.classes.remote import Remote, RemoteError

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
LEEWAY = 60  # seconds of clock difference allowed on exp and iat
MAX_TOKEN = 64 * 1024
REFETCH_AFTER = 10.0  # seconds: an unknown kid fetches the key set again, at most this often
KEEP_KEYS = 3600.0  # seconds a fetched key set is used before it is fetched again

# The claim that failed -> the cause a refusal names.
CLAIM_CAUSES = {"iss": "wrong-issuer", "aud": "wrong-audience", "azp": "wrong-authorized-party", "nonce": "wrong-nonce",
                "exp": "expired", "iat": "issued-in-the-future", "nbf": "not-yet-valid", "sub": "no-subject"}


class TokenRefused(Exception):
    def __init__(self, cause: str, detail: str) -> None:
        super().__init__(detail)
        self.cause = cause


class KeySets:
    """The issuers' key sets, fetched when needed and kept for an hour (shared by every request)."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self._sets: dict[str, tuple[float, KeySet]] = {}
        self._lock = threading.Lock()

    def _fetch(self, url: str) -> KeySet:
        try:
            document = self.remote.json("GET", url, what="the issuer's public keys").body
            keys = KeySet.import_key_set({"keys": [key for key in document.get("keys", [])
                                                   if isinstance(key, dict) and key.get("kty") in ("RSA", "EC")]})
        except RemoteError as error:
            raise TokenRefused("keys-unreachable", str(error)) from None
        except (AttributeError, TypeError, ValueError, JoseError) as error:
            raise TokenRefused("keys-unreadable", f"the key set at {url} cannot be read: {error}") from None
        with self._lock:
            self._sets[url] = (time.monotonic(), keys)
        return keys

    def key(self, url: str, kid: str | None) -> Any:
        with self._lock:
            fetched, keys = self._sets.get(url, (0.0, None))
        age = time.monotonic() - fetched
        if keys is None or age > KEEP_KEYS:
            keys = self._fetch(url)
        found = _find(keys, kid)
        if found is None and age > REFETCH_AFTER:
            found = _find(self._fetch(url), kid)
        if found is None:
            raise TokenRefused("unknown-key", f"the token is signed with a key ({kid!r}) that the issuer does not "
                               f"publish at {url}")
        return found


def _find(keys: KeySet, kid: str | None) -> Any:
    if kid is None:
        return keys.keys[0] if len(keys.keys) == 1 else None
    return next((key for key in keys.keys if key.kid == kid), None)


def header(token: str) -> dict:
    """The token's JOSE header, unverified (to pick its key); TokenRefused if it is no compact JWS."""
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN or token.count(".") != 2:
        raise TokenRefused("not-a-token", "what arrived as the id_token is not a signed JSON Web Token")
    try:
        first = token.split(".", 1)[0]
        found = json.loads(base64.urlsafe_b64decode(first + "=" * (-len(first) % 4)))
    except (ValueError, UnicodeError):
        found = None
    if not isinstance(found, dict):
        raise TokenRefused("not-a-token", "the id_token's header cannot be read")
    return found


def verify(token: str, keys: KeySets, jwks_url: str, *, issuer: str, client_id: str, nonce: str, now: float,
           access_token: str | None = None) -> dict:
    """The token's claims once its signature and claims check out (access_token: a code flow's, whose hash
    the token may carry); TokenRefused naming the cause otherwise."""
    head = header(token)
    if head.get("alg") not in ALGORITHMS:
        raise TokenRefused("algorithm", f"the token is signed with {head.get('alg')!r}; only asymmetric "
                           f"signatures are accepted ({', '.join(ALGORITHMS)})")
    key = keys.key(jwks_url, head.get("kid"))
    try:
        decoded = jwt.decode(token, key, algorithms=list(ALGORITHMS))
    except BadSignatureError:
        raise TokenRefused("bad-signature", "the token's signature does not match the issuer's key: it was "
                           "not made by the issuer, or was changed on the way") from None
    except UnsupportedAlgorithmError as error:
        raise TokenRefused("algorithm", f"the token's algorithm does not fit the issuer's key: {error}") from None
    except (DecodeError, JoseError, ValueError) as error:
        raise TokenRefused("not-a-token", f"the token cannot be read: {error}") from None
    claims_class = CodeIDToken if access_token is not None else ImplicitIDToken
    params = {"client_id": client_id, "nonce": nonce} | ({"access_token": access_token} if access_token else {})
    claims = claims_class(decoded.claims, decoded.header,
                          {"iss": {"essential": True, "value": issuer}, "aud": {"essential": True, "value": client_id}},
                          params)
    try:
        claims.validate(now=int(now), leeway=LEEWAY)
    except ExpiredTokenError:
        raise TokenRefused("expired", "the token has expired (its exp claim is in the past)") from None
    except ClaimError as error:
        claim = error.claim.split(",")[0]
        cause = CLAIM_CAUSES.get(claim, "missing-claim" if isinstance(error, MissingClaimError) else "bad-claim")
        shown = decoded.claims.get(claim)
        raise TokenRefused(cause, f"the token's {claim!r} claim " + (
            "is missing" if isinstance(error, MissingClaimError) else f"({shown!r}) is not what this server expects")
        ) from None
    iat = decoded.claims.get("iat")
    if isinstance(iat, (int, float)) and iat > now + LEEWAY:
        raise TokenRefused("issued-in-the-future", "the token's iat claim is in the future")
    return dict(decoded.claims)

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
from typing import TYPE_CHECKING, Any

from chainrule.classes.remote import Remote, RemoteError

if TYPE_CHECKING:
    from joserfc.jwk import KeySet

# joserfc and Authlib (with the cryptography they load) are imported where a token is checked: every class
# server can check tokens, and most never get one, so they need not import them at start.

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512")
LEEWAY = 60  # seconds of clock difference allowed on exp and iat
MAX_TOKEN = 64 * 1024
REFETCH_AFTER = 10.0  # seconds: an unknown kid fetches the key set again, at most this often
KEEP_KEYS = 3600.0  # seconds a fetched key set is used before it is fetched again

# The claim that failed -> the cause a refusal names.
CLAIM_CAUSES = {"iss": "wrong-issuer", "aud": "wrong-audience", "azp": "wrong-authorized-party", "nonce": "wrong-nonce",
                "exp": "expired", "iat": "issued-in-the-future", "nbf": "not-yet-valid", "sub": "no-subject"}


class TokenRefused(Exception):
    """``cause`` names the check that failed; the sentence is this server's words, ``detail`` what came from
    outside (a value of the token, an error text, the key set's URL), for the log only (federation.Refused)."""

    def __init__(self, cause: str, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.cause = cause
        self.detail = detail


class KeySets:
    """The issuers' key sets, fetched when needed and kept for an hour (shared by every request). One fetch of a
    URL is in flight at a time (issue 41, item 8): the requests that need it meanwhile wait for it and use its
    answer. A key id the set lacks fetches it again at most every REFETCH_AFTER seconds per URL, and a fetch
    that failed is not tried again for REFETCH_AFTER seconds (its refusal is given instead): a stranger's
    tokens with made-up key ids cost the issuer one fetch per REFETCH_AFTER, not one each."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self._sets: dict[str, tuple[float, KeySet]] = {}
        self._failed: dict[str, tuple[float, TokenRefused]] = {}
        self._fetching: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def _fetch(self, url: str) -> KeySet:
        from joserfc.errors import JoseError
        from joserfc.jwk import KeySet

        try:
            document = self.remote.json("GET", url, what="the issuer's public keys").body
            keys = KeySet.import_key_set({"keys": [key for key in document.get("keys", [])
                                                   if isinstance(key, dict) and key.get("kty") in ("RSA", "EC")]})
        except RemoteError as error:
            raise TokenRefused("keys-unreachable", "the issuer's public keys could not be fetched",
                               f"{url}: {error}") from None
        except (AttributeError, TypeError, ValueError, JoseError) as error:
            raise TokenRefused("keys-unreadable", "the issuer's public keys cannot be read",
                               f"{url}: {error}") from None
        return keys

    def _cached(self, url: str) -> tuple[float, KeySet | None]:
        with self._lock:
            return self._sets.get(url, (float("-inf"), None))

    def _refresh(self, url: str, older_than: float) -> KeySet:
        """The URL's key set, fetched again unless a fetch younger than ``older_than`` seconds is known (one
        that finished while this request waited its turn included)."""
        with self._lock:
            turn = self._fetching.setdefault(url, threading.Lock())
        with turn:  # one fetch per URL in flight; the others wait here, then find its answer
            fetched, keys = self._cached(url)
            now = time.monotonic()
            if keys is not None and now - fetched <= older_than:
                return keys
            with self._lock:
                failed_at, refusal = self._failed.get(url, (float("-inf"), None))
            if refusal is not None and now - failed_at <= REFETCH_AFTER:
                raise refusal
            try:
                keys = self._fetch(url)
            except TokenRefused as refused:
                with self._lock:
                    self._failed[url] = (time.monotonic(), refused)
                raise
            with self._lock:
                self._sets[url] = (time.monotonic(), keys)
                self._failed.pop(url, None)
            return keys

    def key(self, url: str, kid: str | None) -> Any:
        fetched, keys = self._cached(url)
        if keys is None or time.monotonic() - fetched > KEEP_KEYS:
            keys = self._refresh(url, KEEP_KEYS)
        found = _find(keys, kid)
        if found is None:  # the issuer may have rotated its keys: look again, unless looked at just now
            found = _find(self._refresh(url, REFETCH_AFTER), kid)
        if found is None:
            raise TokenRefused("unknown-key", "the token is signed with a key that the issuer does not publish",
                               f"kid {str(kid)[:80]!r} is not in {url}")
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
        raise TokenRefused("algorithm", f"only asymmetric signatures are accepted ({', '.join(ALGORITHMS)})",
                           f"alg {str(head.get('alg'))[:40]!r}")
    key = keys.key(jwks_url, head.get("kid"))
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

    try:
        decoded = jwt.decode(token, key, algorithms=list(ALGORITHMS))
    except BadSignatureError:
        raise TokenRefused("bad-signature", "the token's signature does not match the issuer's key: it was "
                           "not made by the issuer, or was changed on the way") from None
    except UnsupportedAlgorithmError as error:
        raise TokenRefused("algorithm", "the token's algorithm does not fit the issuer's key", str(error)) from None
    except (DecodeError, JoseError, ValueError) as error:
        raise TokenRefused("not-a-token", "the token cannot be read", str(error)) from None
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
        known = claim if claim in CLAIM_CAUSES else "a"
        raise TokenRefused(cause, f"the token's {known} claim " + (
            "is missing" if isinstance(error, MissingClaimError) else "is not what this server expects"),
            f"{claim!r}: {str(shown)[:200]!r}") from None
    iat = decoded.claims.get("iat")
    if isinstance(iat, (int, float)) and iat > now + LEEWAY:
        raise TokenRefused("issued-in-the-future", "the token's iat claim is in the future")
    return dict(decoded.claims)

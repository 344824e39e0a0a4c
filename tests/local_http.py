"""The HTTP clients the tests talk to their own servers with (chainrule's servers, the test LMS and sign-on
provider): every one speaks plain HTTP on this machine.

httpx makes a TLS context for each new client or transport, reading and parsing the system's certificates (about
35 ms of CPU), even when the client only ever asks for http:// addresses; the class tests make a client per
learner, thousands in a run (six class files took 66 s of CPU with a context per client, 41 s with one). So every
client here shares one TLS context per process: nothing about the requests changes.
tests/test_suite_helpers.py keeps every test on these (no httpx.Client, AsyncClient, HTTPTransport or httpx.get
and the like elsewhere in tests/)."""

from __future__ import annotations

import functools
import ssl

import httpx

TLS = ssl.create_default_context()


def client(**options) -> httpx.Client:
    """httpx.Client(**options) with the shared TLS context."""
    return httpx.Client(verify=TLS, **options)


def async_client(**options) -> httpx.AsyncClient:
    """httpx.AsyncClient(**options) with the shared TLS context."""
    return httpx.AsyncClient(verify=TLS, **options)


def transport(**options) -> httpx.HTTPTransport:
    """httpx.HTTPTransport(**options) (retries=..., say) with the shared TLS context."""
    return httpx.HTTPTransport(verify=TLS, **options)


def request(method: str, url: str, **options) -> httpx.Response:
    """httpx.request(method, url, **options): one request by a client of its own, with the shared TLS context."""
    return httpx.request(method, url, verify=TLS, **options)


get = functools.partial(request, "GET")
post = functools.partial(request, "POST")

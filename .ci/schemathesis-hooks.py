"""Schemathesis hooks for .ci/schemathesis: the credentials of the admin routes and, with
auth.sessions=token or jwt, of the session routes.

The admin token goes to the admin session routes and to nothing else (in token mode the Authorization
header would hide the session's own token). Each session has its own capability token, so no fixed header
can authenticate the session routes: for every generated request on /sessions/{id}... the session provider
asks the admin route for a fresh token of that session (POST /admin/sessions/{id}/token, which replaces
it) and sends it as Authorization: Bearer. A session that does not exist gets no token from the admin
route, and the request goes out with one that is wrong, so the server answers 401, as the document says.
With auth.sessions=jwt every session route (creation and /events too) gets an HS256 JWT signed with the server's secret,
granting every right on every session.
Schemathesis checks on each operation that the same request without the credential, or with a wrong one,
is refused.
"""
import base64
import hashlib
import hmac
import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request

import schemathesis

BASE_URL = os.environ["REACTOR_BASE_URL"]
ADMIN_TOKEN = os.environ["REACTOR_ADMIN_TOKEN"]
MODE = os.environ.get("REACTOR_AUTH_SESSIONS", "open")
JWT_SECRET = os.environ.get("REACTOR_AUTH_JWT_SECRET", "")
# Well formed (43 base64url characters) but never issued.
UNKNOWN = "A" * 43


def bearer(case, token):
    case.headers = {**(case.headers or {}), "Authorization": f"Bearer {token}"}


@schemathesis.auth().apply_to(path_regex="^/admin/sessions")
class AdminToken:
    def get(self, case, context):
        return ADMIN_TOKEN

    def set(self, case, data, context):
        bearer(case, data)


@schemathesis.auth(refresh_interval=None).apply_to(path_regex="^/sessions/")
class SessionToken:
    def get(self, case, context):
        if MODE != "token":
            return None
        session = (case.path_parameters or {}).get("id")
        if not isinstance(session, str):
            return UNKNOWN
        request = urllib.request.Request(
            f"{BASE_URL}/admin/sessions/{urllib.parse.quote(session, safe='')}/token",
            method="POST", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return json.load(response)["token"]
        except urllib.error.HTTPError:
            return UNKNOWN

    def set(self, case, data, context):
        bearer(case, data)


def base64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@schemathesis.auth().apply_to(path_regex="^/(sessions|events)")
class SessionJWT:
    def get(self, case, context):
        if MODE != "jwt":
            return None
        header = base64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
        claims = {"exp": int(time.time()) + 3600, "sessions": ["*"], "rights": ["create", "read", "act", "delete"]}
        signed = f"{header}.{base64url(json.dumps(claims).encode())}"
        signature = hmac.new(JWT_SECRET.encode(), signed.encode(), hashlib.sha256).digest()
        return f"{signed}.{base64url(signature)}"

    def set(self, case, data, context):
        bearer(case, data)

#!/usr/bin/env python3
"""Writes Tests/TokensTests/JWTFixtures.swift: JWTs minted with Python's standard library only
(hmac, hashlib, base64, json), so that the Swift verifier is checked against an implementation
it shares no code with. Run once and commit the output; the tests never run Python:

    python3 Tests/TokensTests/make-jwt-fixtures.py > Tests/TokensTests/JWTFixtures.swift

Each accepted fixture lists the claims the verifier must return; each refused fixture names the
JWTError.Reason it must give and a fragment its message must contain. Everything is deterministic:
fixed secret, fixed clock, no randomness.
"""
import base64
import hashlib
import hmac
import json
import re

SECRET = b"fixture secret: 32 bytes or more, for tests only"
OTHER_SECRET = b"another secret, also 32 bytes or more long"
NOW = 1_800_000_000
HOUR = 3600


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def compact(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


HS256 = compact({"alg": "HS256", "typ": "JWT"})


def mint(header=HS256, payload=None, *, key=SECRET, digest=hashlib.sha256, raw_header=None, raw_payload=None):
    """header.payload.signature with an HMAC over the exact ASCII signing input (RFC 7515 §5.1)."""
    h = raw_header if raw_header is not None else b64(header)
    p = raw_payload if raw_payload is not None else b64(payload)
    signing_input = f"{h}.{p}"
    return signing_input + "." + b64(hmac.new(key, signing_input.encode(), digest).digest())


def claims(**extra):
    base = {"sessions": ["cart-42"], "rights": ["read"], "exp": NOW + HOUR}
    base.update(extra)
    return compact({k: v for k, v in base.items() if v is not DROP})


DROP = object()

accepted = []  # (name, token, sessions, rights, exp, nbf, iat, sub)
refused = []  # (name, token, reason, message fragment)


def accept(name, token, sessions=("cart-42",), rights=("read",), exp=NOW + HOUR, nbf=None, iat=None, sub=None):
    accepted.append((name, token, list(sessions), list(rights), exp, nbf, iat, sub))


def refuse(name, token, reason, fragment):
    refused.append((name, token, reason, fragment))


# Accepted.
accept("minimal", mint(payload=claims()))
accept("header without typ", mint(compact({"alg": "HS256"}), claims()))
accept("lower-case typ and a kid", mint(compact({"typ": "jwt", "kid": "k1", "alg": "HS256"}), claims()))
accept("header with CRLF and spaces, signed as received",
       mint(raw_header=b64(b'{"typ":"JWT",\r\n "alg":"HS256"}'), raw_payload=b64(claims())))
accept("fractional dates", mint(payload=claims(exp=NOW + 0.5, nbf=NOW - 10.25, iat=NOW - 20.5)),
       exp=NOW + 0.5, nbf=NOW - 10.25, iat=NOW - 20.5)
accept("expired 59 s ago, inside the leeway", mint(payload=claims(exp=NOW - 59)), exp=NOW - 59)
accept("nbf 60 s ahead, inside the leeway", mint(payload=claims(nbf=NOW + 60)), nbf=NOW + 60)
accept("iat 60 s ahead, inside the leeway", mint(payload=claims(iat=NOW + 60)), iat=NOW + 60)
accept("every id and every right",
       mint(payload=claims(sessions=["*"], rights=["create", "read", "act", "delete"])),
       sessions=["*"], rights=["create", "read", "act", "delete"])
accept("prefixes, repeated rights and unknown claims ignored",
       mint(payload=claims(sessions=["user-7-*", "cart-42"], rights=["act", "read", "act"], iss="app",
                           jti="x1", extra={"nested": [1, {"deep": True}]})),
       sessions=["user-7-*", "cart-42"], rights=["act", "read"])
accept("subject", mint(payload=claims(sub="user-7")), sub="user-7")
accept("no sessions and no rights grant nothing but are valid", mint(payload=claims(sessions=[], rights=[])),
       sessions=[], rights=[])
accept("exp as a float with an exact integer value", mint(payload=claims(exp=float(NOW + HOUR))))

# Refused: the header and its algorithm.
refuse("alg none, unsigned",
       b64(compact({"alg": "none", "typ": "JWT"})) + "." + b64(claims()) + ".",
       "algorithmNotAccepted", "alg none is not accepted; only HS256")
refuse("alg none with an HS256 signature", mint(compact({"alg": "none"}), claims()),
       "algorithmNotAccepted", "alg none is not accepted")
refuse("HS384, correctly signed", mint(compact({"alg": "HS384", "typ": "JWT"}), claims(), digest=hashlib.sha384),
       "algorithmNotAccepted", "alg HS384 is not accepted; only HS256")
refuse("HS512, correctly signed", mint(compact({"alg": "HS512", "typ": "JWT"}), claims(), digest=hashlib.sha512),
       "algorithmNotAccepted", "alg HS512 is not accepted; only HS256")
refuse("RS256 with a made-up signature",
       b64(compact({"alg": "RS256", "typ": "JWT"})) + "." + b64(claims()) + "." + b64(bytes(range(256))),
       "algorithmNotAccepted", "alg RS256 is not accepted; only HS256")
refuse("hs256 in lower case, HS256-signed", mint(compact({"alg": "hs256"}), claims()),
       "algorithmNotAccepted", "alg hs256 is not accepted")
refuse("HS256 with a trailing space", mint(compact({"alg": "HS256 "}), claims()),
       "algorithmNotAccepted", 'alg "HS256 " is not accepted')
refuse("no alg", mint(compact({"typ": "JWT"}), claims()), "algorithmNotAccepted", "the header has no alg")
refuse("alg is a number", mint(compact({"alg": 256}), claims()), "algorithmNotAccepted", "not a number")
refuse("alg is null", mint(compact({"alg": None}), claims()), "algorithmNotAccepted", "not null")
refuse("alg twice, HS256 first", mint(raw_header=b64(b'{"alg":"HS256","alg":"none"}'), raw_payload=b64(claims())),
       "malformed", "the header is not JSON: a member name appears twice")
refuse("alg twice, none first", mint(raw_header=b64(b'{"alg":"none","alg":"HS256"}'), raw_payload=b64(claims())),
       "malformed", "a member name appears twice")
refuse("alg twice, the second spelled with an escape",
       mint(raw_header=b64(b'{"alg":"HS256","\\u0061lg":"none"}'), raw_payload=b64(claims())),
       "malformed", "a member name appears twice")
refuse("crit header", mint(compact({"alg": "HS256", "crit": ["exp"], "exp": NOW}), claims()),
       "headerNotAccepted", "the header has crit")
refuse("b64 header (RFC 7797)", mint(compact({"alg": "HS256", "b64": False}), claims()),
       "headerNotAccepted", "b64")
refuse("typ at+jwt", mint(compact({"alg": "HS256", "typ": "at+jwt"}), claims()),
       "headerNotAccepted", 'typ "at+jwt" is not accepted')
refuse("typ is a number", mint(compact({"alg": "HS256", "typ": 1}), claims()), "headerNotAccepted", "typ must be a string")
refuse("header is an array", mint(raw_header=b64(b'["HS256"]'), raw_payload=b64(claims())),
       "malformed", "the header must be a JSON object, not an array")
refuse("header is not JSON", mint(raw_header=b64(b"HS256"), raw_payload=b64(claims())),
       "malformed", "the header is not JSON")
refuse("header is empty", mint(raw_header="", raw_payload=b64(claims())), "malformed", "the header is empty")

# Refused: the signature.
refuse("signed with another secret", mint(payload=claims(), key=OTHER_SECRET),
       "signatureMismatch", "signature does not match the configured secret")
ATTACKER_KEY = b"a key the attacker chose, 32 bytes+"
refuse("signed with the key embedded in its own jwk header",
       mint(compact({"alg": "HS256", "jwk": {"kty": "oct", "k": b64(ATTACKER_KEY)}}), claims(), key=ATTACKER_KEY),
       "signatureMismatch", "signature does not match the configured secret")
good = mint(payload=claims())
head, body, sig = good.split(".")
refuse("signature cut to 31 bytes", f"{head}.{body}." + b64(base64.urlsafe_b64decode(sig + "=")[:31]),
       "signatureMismatch", "the signature is 31 bytes; an HS256 signature is 32")
refuse("signature empty", f"{head}.{body}.", "signatureMismatch", "the signature is 0 bytes")
refuse("payload changed after signing", f"{head}.{b64(claims(rights=['read', 'delete']))}.{sig}",
       "signatureMismatch", "signature does not match")
refuse("signature padded with =", good + "=", "malformed", "the signature is not base64url: '=' at offset 43")
last = sig[-1]
alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
flipped = alphabet[alphabet.index(last) ^ 1]  # the lowest of the two bits past the last byte
refuse("signature with non-zero trailing bits", f"{head}.{body}.{sig[:-1]}{flipped}",
       "malformed", "sets bits beyond the last byte")
refuse("header padded with =", f"{head}=.{body}.{sig}", "malformed", "the header is not base64url: '='")

# RFC 7515 Appendix A.1's signature holds '-' and '_'; in standard base64 they are '+' and '/'.
std = "dBjftJeZ4CVP+mB92K27uhbUJU1p1r/wW1gFWFOEjXk"
refuse("signature in standard base64 (+ and /)", f"{head}.{body}.{std}", "malformed", "standard base64, not base64url")
refuse("leading space", " " + good, "malformed", "whitespace is not allowed")
refuse("trailing newline", good + "\n", "malformed", "whitespace is not allowed")
refuse("two parts", f"{head}.{body}", "malformed", "expected three base64url parts separated by '.', found 2")
refuse("four parts", good + ".", "malformed", "found 4")
refuse("a JWE-like five parts", good + ".a.b", "malformed", "found 5")

# Refused: the payload, validly signed (so the verifier gets past the signature to see it).
refuse("payload length 4n+1", mint(raw_payload=b64(claims()) + "A" * ((1 - len(b64(claims()))) % 4)),
       "malformed", "the payload is not base64url: a length of 4n+1")
refuse("space inside the payload, signed", mint(raw_payload=body[:10] + " " + body[10:]), "malformed",
       "the payload is not base64url: byte 0x20 at offset 10: whitespace is not allowed")
refuse("payload is not JSON", mint(raw_payload=b64(b"exp=1")), "malformed", "the payload is not JSON")
refuse("payload is an array", mint(raw_payload=b64(b"[1]")), "malformed", "the payload must be a JSON object, not an array")
refuse("payload repeats exp",
       mint(raw_payload=b64(b'{"sessions":["a"],"rights":["read"],"exp":%d,"exp":%d}' % (NOW - HOUR, NOW + HOUR))),
       "malformed", "a member name appears twice")
refuse("payload with data after the object", mint(raw_payload=b64(claims() + b"{}")), "malformed", "data after the JSON value")

# Refused: the claims.
refuse("exp missing", mint(payload=claims(exp=DROP)), "missingClaim", "exp is required")
refuse("exp as a string", mint(payload=claims(exp=str(NOW + HOUR))), "invalidClaim",
       "exp must be a NumericDate (a number of seconds since 1970), not a string")
refuse("exp as a boolean", mint(payload=claims(exp=True)), "invalidClaim", "not a boolean")
refuse("exp null", mint(payload=claims(exp=None)), "invalidClaim", "not null")
refuse("exp negative", mint(payload=claims(exp=-1)), "invalidClaim", "exp -1 is out of range")
refuse("exp after year 9999", mint(payload=claims(exp=253402300800)), "invalidClaim", "exp 253402300800 is out of range")
refuse("exp 1e20", mint(payload=claims(exp=1e20)), "invalidClaim", "is out of range")
refuse("nbf as a string", mint(payload=claims(nbf="soon")), "invalidClaim", "nbf must be a NumericDate")
refuse("iat as an array", mint(payload=claims(iat=[NOW])), "invalidClaim", "iat must be a NumericDate")
refuse("expired 61 s ago", mint(payload=claims(exp=NOW - 61)), "expired",
       f"expired 61 s ago (exp {NOW - 61}, leeway 60 s)")
refuse("expired exactly at the leeway", mint(payload=claims(exp=NOW - 60)), "expired", "expired 60 s ago")
refuse("expired long ago, fractional", mint(payload=claims(exp=NOW - 86400.5)), "expired",
       f"expired 86400.5 s ago (exp {NOW - 86400.5}, leeway 60 s)")
refuse("nbf 61 s ahead", mint(payload=claims(nbf=NOW + 61)), "notYetValid",
       f"not valid for another 61 s (nbf {NOW + 61}, leeway 60 s)")
refuse("iat 61 s ahead", mint(payload=claims(iat=NOW + 61)), "issuedInTheFuture",
       f"issued 61 s in the future (iat {NOW + 61}, leeway 60 s)")
refuse("sessions missing", mint(payload=claims(sessions=DROP)), "missingClaim", "sessions is required")
refuse("sessions as a string", mint(payload=claims(sessions="cart-42")), "invalidClaim",
       "sessions must be an array of strings, not a string")
refuse("sessions holding a number", mint(payload=claims(sessions=["a", 42])), "invalidClaim",
       "sessions[1] must be a string, not a number")
refuse("sessions with an inner *", mint(payload=claims(sessions=["a*b"])), "invalidClaim",
       "sessions[0] has a '*' that is not its last character")
refuse("sessions with **", mint(payload=claims(sessions=["**"])), "invalidClaim", "sessions[0] has a '*'")
refuse("sessions with an empty entry", mint(payload=claims(sessions=["ok", ""])), "invalidClaim", "sessions[1] is empty")
refuse("sessions with a space", mint(payload=claims(sessions=["a b"])), "invalidClaim",
       "sessions[0] has a character outside A-Z a-z 0-9 _ -")
refuse("sessions with a 65-character id", mint(payload=claims(sessions=["x" * 65])), "invalidClaim",
       "sessions[0] is longer than a session id")
refuse("rights missing", mint(payload=claims(rights=DROP)), "missingClaim", "rights is required")
refuse("rights as a string", mint(payload=claims(rights="read")), "invalidClaim", "rights must be an array")
refuse("unknown right", mint(payload=claims(rights=["read", "admin"])), "invalidClaim",
       'rights[1] "admin" is not a right; the rights are create, read, act, delete')
refuse("right in upper case", mint(payload=claims(rights=["READ"])), "invalidClaim", 'rights[0] "READ" is not a right')
refuse("right null", mint(payload=claims(rights=[None])), "invalidClaim", "rights[0] must be a string, not null")
refuse("sub as a number", mint(payload=claims(sub=7)), "invalidClaim", "sub must be a string, not a number")
refuse("aud with no audience configured", mint(payload=claims(aud="reactor-server")), "audienceNotAccepted",
       "names an audience (aud) but none is configured")


def swift_string(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


def swift_token(text: str, indent: str) -> str:
    """A token as concatenated literals split after its dots (and within a part longer than a line), so that no line
    is wider than 120 columns; a short one stays on the line of its label."""
    if len(text) <= 120 - len(indent) - len("token: ") - 3:
        return " " + swift_string(text)
    width = 120 - len(indent) - 4 - len('+ ""') - 1
    pieces = []
    for part in re.findall(r"[^.]*\.|[^.]+$", text):
        pieces += [part[i:i + width] for i in range(0, len(part), width)]
    lines = [swift_string(pieces[0])] + ["+ " + swift_string(piece) for piece in pieces[1:]]
    return "\n" + "\n".join(indent + "    " + line for line in lines)


def swift_double(value) -> str:
    return "nil" if value is None else repr(float(value))


def swift_list(items) -> str:
    return "[" + ", ".join(swift_string(item) for item in items) + "]"


out = []
out.append("// Generated by Tests/TokensTests/make-jwt-fixtures.py (Python standard library: hmac, hashlib, base64, json).")
out.append("// Do not edit by hand; change the script and run:")
out.append("//   python3 Tests/TokensTests/make-jwt-fixtures.py > Tests/TokensTests/JWTFixtures.swift")
out.append("")
out.append("import Tokens")
out.append("")
out.append("/// The secret every fixture is signed with (fixtures signed with another one say so).")
out.append(f"let fixtureSecret = Array({swift_string(SECRET.decode())}.utf8)")
out.append("/// The Unix time the fixtures are verified at.")
out.append(f"let fixtureNow: Double = {float(NOW)!r}")
out.append("")
out.append("/// Tokens the verifier must accept at `fixtureNow` (default leeway), with the claims it must return.")
out.append("let acceptedFixtures: [AcceptedFixture] = [")
for name, token, sessions, rights, exp, nbf, iat, sub in accepted:
    out.append("    AcceptedFixture(")
    out.append(f"        name: {swift_string(name)},")
    out.append(f"        token:{swift_token(token, '        ')},")
    out.append(f"        sessions: {swift_list(sessions)}, rights: {swift_list(rights)},")
    out.append(f"        exp: {swift_double(exp)}, nbf: {swift_double(nbf)}, iat: {swift_double(iat)}, sub: {swift_string(sub) if sub else 'nil'}),")
out.append("]")
out.append("")
out.append("/// Tokens the verifier must refuse at `fixtureNow` (default leeway, no audience), with the reason and a")
out.append("/// fragment of the message.")
out.append("let refusedFixtures: [RefusedFixture] = [")
for name, token, reason, fragment in refused:
    out.append("    RefusedFixture(")
    out.append(f"        name: {swift_string(name)},")
    out.append(f"        token:{swift_token(token, '        ')},")
    out.append(f"        reason: .{reason}, message: {swift_string(fragment)}),")
out.append("]")
print("\n".join(out))

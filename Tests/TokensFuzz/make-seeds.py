#!/usr/bin/env python3
"""Writes the seed inputs of the Tokens fuzzer into its corpus (Tests/TokensFuzz/corpus/) with Python's standard library.
Tokens are signed with the harness's secret so that the fuzzer starts from tokens that verify.

    cd Tests/TokensFuzz/corpus && python3 ../make-seeds.py
"""
import base64
import hashlib
import hmac

KEY = b"fuzz secret: 32 bytes or more, not for production"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def mint(header: bytes, payload: bytes) -> str:
    signing_input = b64(header) + "." + b64(payload)
    return signing_input + "." + b64(hmac.new(KEY, signing_input.encode(), hashlib.sha256).digest())


HS256 = b'{"alg":"HS256","typ":"JWT"}'
CLAIMS = (b'{"sub":"u","sessions":["cart-42","user-7-*"],"rights":["read","act"],'
          b'"iat":1799999000,"nbf":1799999000.5,"exp":1800003600}')
SEEDS = {
    "token-valid": mint(HS256, CLAIMS),
    "token-wildcard": mint(b'{"alg":"HS256"}',
                           b'{"sessions":["*"],"rights":["create","read","act","delete"],"exp":1800000030.25,"aud":"x"}'),
    "token-alg-none": b64(b'{"alg":"none"}') + "." + b64(CLAIMS) + ".",
    "token-crit": mint(b'{"alg":"HS256","crit":["exp"]}', CLAIMS),
    "token-expired": mint(HS256, b'{"sessions":["a"],"rights":["read"],"exp":1700000000}'),
    "payload-claims": CLAIMS.decode(),
    "payload-bad-claims": '{"sessions":["a*b",""],"rights":["admin"],"exp":"soon","nbf":-1,"iat":1e400}',
    "header-hs256-kid": '{"typ":"jwt","kid":"k1","alg":"HS256"}',
    "base64url": "-_8Zm9vYmFy",
}
for name, text in SEEDS.items():
    with open(name, "w") as seed:
        seed.write(text)

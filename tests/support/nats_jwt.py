#!/usr/bin/env python3
"""Test material for NATS in operator (JWT) mode, made without nsc: an operator, its system account,
an account with JetStream, a user of it and a credentials file, plus a second user signed by an account the server
does not know. NKeys and JWTs are encoded as nats-io/nkeys and nats-io/jwt do (ed25519, base32 with a
CRC-16, JWT header alg ed25519-nkey). Usage: nats_jwt.py DIR JETSTREAM_DIR -> DIR/server.conf (to
include), DIR/user.creds, DIR/stranger.creds, DIR/user.seed (the secret the tests search for)."""
import base64, hashlib, json, os, sys, time
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization

PREFIX = {"operator": 14 << 3, "account": 0, "user": 20 << 3}
SEED = 18 << 3


def crc16(data):
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


def b32(data):
    return base64.b32encode(data).decode().rstrip("=")


def encode(prefix_bytes, raw):
    body = bytes(prefix_bytes) + raw
    return b32(body + crc16(body).to_bytes(2, "little"))


class Key:
    def __init__(self, kind):
        self.kind = kind
        self.sk = Ed25519PrivateKey.generate()
        raw = self.sk.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                    serialization.NoEncryption())
        pub = self.sk.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        p = PREFIX[kind]
        self.public = encode([p], pub)
        self.seed = encode([SEED | (p >> 5), (p & 31) << 3], raw)


def b64url(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jwt(issuer, subject, name, nats):
    claims = {"iat": int(time.time()), "iss": issuer.public, "name": name, "sub": subject.public, "nats": nats}
    claims["jti"] = b32(hashlib.sha256(json.dumps(claims, sort_keys=True).encode()).digest())
    head = b64url(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = b64url(json.dumps(claims).encode())
    sig = issuer.sk.sign((head + "." + body).encode())
    return head + "." + body + "." + b64url(sig)


def account_jwt(operator, account, name, jetstream):
    limits = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True, "conn": -1,
              "leaf": -1}
    if jetstream:
        limits.update({"mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1})
    return jwt(operator, account, name, {"limits": limits, "default_permissions": {"pub": {}, "sub": {}},
                                            "type": "account", "version": 2})


def user_jwt(account, user):
    return jwt(account, user, "agora-user", {"pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1,
                                             "type": "user", "version": 2})


def creds(path, token, seed):
    with open(path, "w") as f:
        f.write("-----BEGIN NATS USER JWT-----\n%s\n------END NATS USER JWT------\n\n" % token)
        f.write("-----BEGIN USER NKEY SEED-----\n%s\n------END USER NKEY SEED------\n" % seed)
    os.chmod(path, 0o600)


def main():
    out = sys.argv[1]
    operator, account, user, system = Key("operator"), Key("account"), Key("user"), Key("account")
    stranger_account, stranger = Key("account"), Key("user")
    op = jwt(operator, operator, "agora-test", {"type": "operator", "version": 2})
    with open(os.path.join(out, "operator.jwt"), "w") as f:
        f.write(op + "\n")
    with open(os.path.join(out, "server.conf"), "w") as f:
        f.write('operator: "%s"\nsystem_account: %s\nresolver: MEMORY\nresolver_preload: {\n  %s: "%s"\n  %s: "%s"\n}\n'
                % (os.path.join(out, "operator.jwt"), system.public, account.public,
                   account_jwt(operator, account, "agora", True), system.public,
                   account_jwt(operator, system, "SYS", False)))
    creds(os.path.join(out, "user.creds"), user_jwt(account, user), user.seed)
    creds(os.path.join(out, "stranger.creds"), user_jwt(stranger_account, stranger), stranger.seed)
    with open(os.path.join(out, "user.seed"), "w") as f:
        f.write(user.seed)


main()

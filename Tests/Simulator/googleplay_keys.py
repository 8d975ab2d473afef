"""The Google Play double's keys and JWTs (imported by googleplay_sim.py):

  ServiceAccount  the service account's RSA key, written as Google's JSON key file (client_email,
                  private_key, private_key_id, token_uri pointing at the double); checks the JWT grants
                  made with it as Google's token endpoint does
  PushSigner      a trusted key (published in the JWKS) and an untrusted one (not published) that sign
                  Pub/Sub push OIDC tokens with the claims a test chooses
"""
import base64
import json
import os
import time

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

SCOPE = "https://www.googleapis.com/auth/androidpublisher"
GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer"
MAX_GRANT_LIFE_S = 3600
CLOCK_SKEW_S = 60
PUSH_ISSUER = "https://accounts.google.com"


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(part):
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def new_rsa_key():
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def key_id(public_key):
    """A kid derived from the key, hex like Google's."""
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    digest = hashes.Hash(hashes.SHA1())
    digest.update(der)
    return digest.finalize().hex()


def sign_rs256(key, header, claims):
    signing_input = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + \
        b64url(json.dumps(claims, separators=(",", ":")).encode())
    signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
    return signing_input + "." + b64url(signature)


def split_jwt(token):
    """(header, claims, signing input, signature), or None when it is not a JWT of JSON objects."""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        return None
    try:
        header, claims = json.loads(b64url_decode(parts[0])), json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except ValueError:
        return None
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return None
    return header, claims, (parts[0] + "." + parts[1]).encode(), signature


def rs256_valid(public_key, signing_input, signature):
    try:
        public_key.verify(signature, signing_input, padding.PKCS1v15(), hashes.SHA256())
        return True
    except InvalidSignature:
        return False


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


class ServiceAccount:
    """The service account whose JWT grants the token endpoint accepts."""

    def __init__(self, path, client_email, token_uri):
        self.client_email, self.token_uri = client_email, token_uri
        self.key = self._existing_key(path) or new_rsa_key()
        self.key_id = key_id(self.key.public_key())
        if path:
            self._write(path)

    @staticmethod
    def _existing_key(path):
        """The key of a file written before (a restart keeps it, so a running client's copy stays good)."""
        try:
            with open(path, encoding="utf-8") as source:
                pem = json.load(source)["private_key"].encode()
            return serialization.load_pem_private_key(pem, password=None)
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def as_json(self):
        pem = self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode()
        return {"type": "service_account", "project_id": "iap-test", "private_key_id": self.key_id,
                "private_key": pem, "client_email": self.client_email, "client_id": "109876543210987654321",
                "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": self.token_uri,
                "universe_domain": "googleapis.com"}

    def _write(self, path):
        temporary = path + ".tmp"
        with open(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w", encoding="utf-8") as out:
            json.dump(self.as_json(), out, indent=2)
        os.replace(temporary, path)

    def grant(self, **claims):
        """A JWT grant as a client makes it (claims override the good ones; a None value leaves one out)."""
        now = int(time.time())
        good = {"iss": self.client_email, "scope": SCOPE, "aud": self.token_uri, "iat": now, "exp": now + 3600}
        good.update(claims)
        return sign_rs256(self.key, {"alg": "RS256", "typ": "JWT", "kid": self.key_id},
                          {k: v for k, v in good.items() if v is not None})

    def grant_problem(self, assertion, now=None):
        """None for a grant Google would accept, else the `error_description` of its 400."""
        parts = split_jwt(assertion)
        if parts is None:
            return "Invalid JWT: not a JWT."
        header, claims, signing_input, signature = parts
        if header.get("alg") != "RS256" or header.get("kid") != self.key_id \
                or not rs256_valid(self.key.public_key(), signing_input, signature):
            return "Invalid JWT Signature."
        if claims.get("iss") != self.client_email:
            return "Invalid grant: account not found"
        if claims.get("aud") != self.token_uri:
            return "Invalid JWT: Failed audience check."
        scope = claims.get("scope")
        if not isinstance(scope, str) or SCOPE not in scope.split(" "):
            return "Invalid JWT: scope must name " + SCOPE
        now = now or time.time()
        iat, exp = claims.get("iat"), claims.get("exp")
        if not _is_int(iat) or not _is_int(exp) or not 0 < exp - iat <= MAX_GRANT_LIFE_S \
                or iat > now + CLOCK_SKEW_S or exp <= now:
            return ("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. "
                    "Check your iat and exp values in the JWT claim.")
        return None


class PushSigner:
    """Signs Pub/Sub push OIDC tokens: `trusted` with the key the JWKS publishes, `untrusted` with one
    it does not."""

    def __init__(self, audience, service_account_email):
        self.audience, self.email = audience, service_account_email
        self.keys = {"trusted": new_rsa_key(), "untrusted": new_rsa_key()}
        self.kids = {name: key_id(key.public_key()) for name, key in self.keys.items()}

    def jwks(self):
        numbers = self.keys["trusted"].public_key().public_numbers()
        return {"keys": [{"kty": "RSA", "alg": "RS256", "use": "sig", "kid": self.kids["trusted"],
                          "n": b64url(numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big")),
                          "e": b64url(numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big"))}]}

    def sign(self, key="trusted", header=None, claims=None, now=None):
        """An OIDC token as Pub/Sub sends it; `claims`/`header` override the good ones (a None value
        leaves one out)."""
        if key not in self.keys:
            raise ValueError('key is "trusted" or "untrusted"')
        if not isinstance(header or {}, dict) or not isinstance(claims or {}, dict):
            raise ValueError("header and claims are JSON objects")
        now = int(now or time.time())
        good_claims = {"aud": self.audience, "azp": "113774264463038321964", "email": self.email,
                       "email_verified": True, "exp": now + 3600, "iat": now, "iss": PUSH_ISSUER,
                       "sub": "113774264463038321964"}
        good_claims.update(claims or {})
        good_header = {"alg": "RS256", "kid": self.kids[key], "typ": "JWT"}
        good_header.update(header or {})
        return sign_rs256(self.keys[key], {k: v for k, v in good_header.items() if v is not None},
                          {k: v for k, v in good_claims.items() if v is not None})

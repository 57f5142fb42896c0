"""`Referee-Signature` (issue 18): the referee's signer and verifier (referee/match/signing.py) and
the SDK's own verifier (bots/python/sdk.py, standard library only) agree on every case."""

import hashlib
import hmac

import pytest

from bots.python import sdk
from referee.match import signing

SECRET = "whsec-test"
BODY = b'{"protocol":"referee/1","type":"decision","match_id":"m1"}'
NOW = 1_760_000_000

VERIFIERS = {"referee": (signing.verify_signature, signing.SignatureError),
             "sdk": (sdk.verify_signature, sdk.SignatureError)}


def test_the_header_is_t_and_v1_the_hex_hmac_of_t_dot_body():
    expected = hmac.new(SECRET.encode(), f"{NOW}.".encode() + BODY, hashlib.sha256).hexdigest()
    assert signing.signature_header(SECRET, BODY, NOW) == f"t={NOW},v1={expected}"


@pytest.mark.parametrize("side", sorted(VERIFIERS))
def test_a_good_signature_passes(side):
    verify, _ = VERIFIERS[side]
    verify(SECRET, signing.signature_header(SECRET, BODY, NOW), BODY, NOW + 299.5)
    verify(SECRET, signing.signature_header(SECRET, BODY, NOW), BODY, NOW - 300)


@pytest.mark.parametrize("side", sorted(VERIFIERS))
def test_while_a_secret_rotates_one_matching_v1_among_several_is_enough(side):
    verify, _ = VERIFIERS[side]
    old = signing.signature(SECRET, BODY, NOW)
    new = signing.signature("the-new-secret", BODY, NOW)
    header = f"t={NOW}, v1={new}, v0=ignored, v1={old.upper()}"
    verify(SECRET, header, BODY, NOW)
    verify("the-new-secret", header, BODY, NOW)


BAD = {
    "missing": (None, "missing"),
    "empty": ("", "missing"),
    "no v1": (f"t={NOW}", "malformed"),
    "no t": ("v1=" + "0" * 64, "malformed"),
    "two t": (f"t={NOW},t={NOW},v1=00", "malformed"),
    "t not a number": ("t=soon,v1=00", "malformed"),
    "t too long": ("t=" + "9" * 40 + ",v1=00", "malformed"),
    "huge header": ("t=1," + "v1=0," * 5000, "malformed"),
    "stale": (signing.signature_header(SECRET, BODY, NOW - 301), "timestamp"),
    "from the future": (signing.signature_header(SECRET, BODY, NOW + 301), "timestamp"),
    "wrong secret": (signing.signature_header("guess", BODY, NOW), "does not match"),
    "other time signed": (f"t={NOW},v1=" + signing.signature(SECRET, BODY, NOW - 1),
                          "does not match"),
}


@pytest.mark.parametrize("case", sorted(BAD))
@pytest.mark.parametrize("side", sorted(VERIFIERS))
def test_a_bad_signature_is_refused_saying_why(side, case):
    verify, error = VERIFIERS[side]
    header, reason = BAD[case]
    with pytest.raises(error, match=reason):
        verify(SECRET, header, BODY, NOW)


@pytest.mark.parametrize("side", sorted(VERIFIERS))
def test_a_changed_body_is_refused(side):
    verify, error = VERIFIERS[side]
    header = signing.signature_header(SECRET, BODY, NOW)
    with pytest.raises(error, match="does not match"):
        verify(SECRET, header, BODY.replace(b"m1", b"m2"), NOW)

"""The results log and the keys to check it (issue 25, a public contract), all anonymous:

- `GET /keys`: every public key records were ever signed with;
- `GET /log/head`: the signed tree head;
- `GET /log/proof/{match_id}?tree_size=N`: a record's inclusion proof (RFC 6962 2.1.1);
- `GET /log/consistency?first=M&second=N`: a consistency proof (RFC 6962 2.1.2);
- `GET /log/entries?start=S&end=E`: the leaves, at most 1,000 at once.

The log itself is `tournament.results_log`; `referee log monitor` is its auditor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from flask import Blueprint, Response
from marshmallow import Schema, fields, validate

from referee.api.common import SHA256_HEX, BoundedList, FullMatch, required
from referee.api.matches import find_match
from referee.api.operations import MATCH_ID, operation
from referee.api.problems import Problem
from referee.api.web import load_query, reply, services
from referee.errors import LOG_NOT_LOGGED, LOG_OUT_OF_RANGE
from referee.match.sealing import ALGORITHMS, ED25519
from tournament import results_log

bp = Blueprint("log", __name__)
T = TypeVar("T")

MAX_TREE_SIZE = (1 << 53) - 1
TREE_SIZE = validate.Range(min=0, max=MAX_TREE_SIZE)


class KeySchema(Schema):
    key_id = required(fields.String, metadata={
        "description": "the first 16 hex digits of sha256 of the raw public key"})
    algorithm = required(fields.String, validate=validate.OneOf([ED25519]))
    public_key = required(fields.String, metadata={
        "description": "the raw 32-byte Ed25519 public key, base64url without padding"})
    not_before = required(fields.String, metadata={
        "description": "when it was first published (ISO 8601 UTC)"})
    not_after = required(fields.String, allow_none=True, metadata={
        "description": "when a newer key replaced it; null while current. Records it "
                       "signed keep verifying with it"})


class KeysSchema(Schema):
    keys = required(fields.List, fields.Nested(KeySchema), metadata={
        "description": "every key ever used, oldest first"})


class SignatureSchema(Schema):
    algorithm = required(fields.String, validate=validate.OneOf(ALGORITHMS), metadata={
        "description": "ed25519 (value: base64url, no padding); hmac-sha256 on an HMAC-only "
                       "server (value: hex)"})
    key_id = required(fields.String, validate=FullMatch(r"^[0-9a-f]{16}$"))
    value = required(fields.String, validate=FullMatch(r"^[A-Za-z0-9_-]{1,128}$"),
                     metadata={"description": "base64url (ed25519) or hex (hmac-sha256)"})


class TreeHeadSchema(Schema):
    tree_size = required(fields.Integer, validate=TREE_SIZE)
    root_hash = required(fields.String, validate=SHA256_HEX, metadata={
        "description": "MTH of the tree's leaves (RFC 6962 2.1), hex"})
    timestamp = required(fields.Integer, metadata={"description": "when it was signed, ms"})
    key_id = required(fields.String, allow_none=True)
    signature = required(fields.Nested, SignatureSchema, allow_none=True, metadata={
        "description": "over the RFC 8785 JSON of tree_size, root_hash, timestamp and "
                       "key_id; null only on a server that signs nothing"})


class InclusionProofSchema(Schema):
    index = required(fields.Integer, validate=TREE_SIZE)
    tree_size = required(fields.Integer, validate=TREE_SIZE)
    leaf_hash = required(fields.String, validate=SHA256_HEX, metadata={
        "description": "sha256(0x00 || sha256(the record's canonical bytes without `log`))"})
    audit_path = required(BoundedList, fields.String(validate=SHA256_HEX), 64, metadata={
        "description": "PATH(index, D[tree_size]), leaf side first (RFC 6962 2.1.1)"})


class ProofQuerySchema(Schema):
    tree_size = fields.Integer(validate=validate.Range(min=1, max=MAX_TREE_SIZE), metadata={
        "description": "the tree to prove inclusion in (default: the current one)"})


class ConsistencyQuerySchema(Schema):
    first = fields.Integer(required=True, validate=TREE_SIZE)
    second = fields.Integer(required=True, validate=TREE_SIZE)


class ConsistencyProofSchema(Schema):
    first = required(fields.Integer)
    second = required(fields.Integer)
    proof = required(fields.List, fields.String(validate=SHA256_HEX), metadata={
        "description": "PROOF(first, D[second]) (RFC 6962 2.1.2); empty when first is 0 "
                       "or equals second"})


class EntriesQuerySchema(Schema):
    start = fields.Integer(required=True, validate=TREE_SIZE)
    end = fields.Integer(required=True, validate=TREE_SIZE, metadata={
        "description": "exclusive; the answer stops at start + 1000 and at the tree's size "
                       "(none at all when end <= start)"})


class EntrySchema(Schema):
    index = required(fields.Integer)
    match_id = required(fields.String)
    leaf_hash = required(fields.String, validate=SHA256_HEX)


class EntriesSchema(Schema):
    entries = required(fields.List, fields.Nested(EntrySchema))


RANGE_409 = {409: "a tree size beyond the log's, one without the leaf, or a first tree "
                  "larger than the second (`log/out-of-range`)"}

PATHS = {
    "/keys": {"get": operation(
        "listKeys", "Every public key records and tree heads were signed with", "log",
        (200, KeysSchema), (503,),
        description="Check a record offline with only these: `referee verify FILE --keys "
                    "URL`. Empty on an HMAC-only server.")},
    "/log/head": {"get": operation(
        "getLogHead", "The results log's signed tree head", "log", (200, TreeHeadSchema),
        (503,), description="Every finished match is a leaf, in the order results are "
                            "recorded. Keep a head: a later consistency proof shows the log "
                            "only grew since (`referee log monitor`).")},
    "/log/proof/{match_id}": {"get": operation(
        "getLogProof", "A finished match's inclusion proof", "log",
        (200, InclusionProofSchema), (400, 404, 409, 503),
        parameters=[MATCH_ID, {"in": "query", "schema": ProofQuerySchema}],
        error_text={**RANGE_409, 404: "no such match, or not logged (`log/not-logged`: not "
                                      "finished, or failed)"})},
    "/log/consistency": {"get": operation(
        "getLogConsistency", "A consistency proof between two tree sizes", "log",
        (200, ConsistencyProofSchema), (400, 409, 503),
        parameters=[{"in": "query", "schema": ConsistencyQuerySchema}], error_text=RANGE_409)},
    "/log/entries": {"get": operation(
        "listLogEntries", "The log's leaves [start, end)", "log", (200, EntriesSchema),
        (400, 503), parameters=[{"in": "query", "schema": EntriesQuerySchema}])},
}


@bp.get("/keys")
def list_keys() -> Response:
    services().publish_keys()
    keys = [{**key, "algorithm": ED25519} for key in services().store.published_keys()]
    return reply(KeysSchema, {"keys": keys})


@bp.get("/log/head")
def log_head() -> Response:
    services().publish_keys()
    return reply(TreeHeadSchema, results_log.signed_head(services().store, services().sealer))


@bp.get("/log/proof/<id:match_id>")
def log_proof(match_id: str) -> Response:
    match = find_match(match_id)
    index = match.get("log_index")
    if index is None:
        raise Problem(LOG_NOT_LOGGED, f"match {match_id} is {match['status']}: only a "
                                      "finished match is in the results log")
    size = load_query(ProofQuerySchema).get("tree_size")
    return reply(InclusionProofSchema, _in_range(results_log.inclusion_proof, index, size))


@bp.get("/log/consistency")
def log_consistency() -> Response:
    query = load_query(ConsistencyQuerySchema)
    proof = _in_range(results_log.consistency_proof, query["first"], query["second"])
    return reply(ConsistencyProofSchema, {**query, "proof": proof})


@bp.get("/log/entries")
def log_entries() -> Response:
    query = load_query(EntriesQuerySchema)
    start = query["start"]
    end = min(query["end"], start + results_log.MAX_ENTRIES)
    entries = results_log.entries(services().store, start, end) if end > start else []
    return reply(EntriesSchema, {"entries": [vars(entry) for entry in entries]})


def _in_range(prove: Callable[..., T], *sizes: int | None) -> T:
    """`prove(store, *sizes)`, a 400 `log/out-of-range` when the log is smaller."""
    try:
        return prove(services().store, *sizes)
    except results_log.LogRangeError as error:
        raise Problem(LOG_OUT_OF_RANGE, str(error)) from None

"""The results log's Merkle tree, hashed exactly as RFC 6962 section 2.1.

    leaf hash  = sha256(0x00 || leaf data)
    node hash  = sha256(0x01 || left || right)
    MTH(D[n])  = the node over MTH(D[0:k]) and MTH(D[k:n]), k the largest power of two < n

Every subtree that the definitions use is *aligned*: it covers leaves [i * 2^l, (i+1) * 2^l)
for some level l, or it is a range [a, b) whose hash folds its aligned pieces
(`range_nodes`). A store that keeps the hash of every complete aligned subtree, as
`(level, index)` nodes, answers any head or proof with O(log n) reads: the proofs here are
lists of ranges (`inclusion_ranges`, `consistency_ranges`), each hashed from its nodes.

The verifying side (`verify_inclusion`, `verify_consistency`) follows RFC 9162 sections
2.1.3.2 and 2.1.4.2 and needs nothing but the proof and the tree heads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence

HASH_BYTES = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()
Node = tuple[int, int]  # (level, index): the aligned subtree over [index << level, ...)
Range = tuple[int, int]  # leaves [start, end)


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def split(size: int) -> int:
    """The largest power of two strictly below `size` (> 1)."""
    return 1 << ((size - 1).bit_length() - 1)


def range_nodes(start: int, end: int) -> list[Node]:
    """The aligned subtrees whose hashes fold into MTH(D[start:end]), left to right (the
    range is one that the RFC's definitions reach, so each piece is aligned)."""
    nodes = []
    while end - start > 0:
        size = end - start
        if size & (size - 1) == 0 and start % size == 0:
            nodes.append((size.bit_length() - 1, start // size))
            break
        left = split(size)
        nodes.append((left.bit_length() - 1, start // left))
        start += left
    return nodes


def fold(hashes: Sequence[bytes]) -> bytes:
    """The hash of a range from its aligned pieces' hashes, left to right."""
    if not hashes:
        return EMPTY_ROOT
    result = hashes[-1]
    for left in reversed(hashes[:-1]):
        result = node_hash(left, result)
    return result


def range_hash(span: Range, nodes: Mapping[Node, bytes]) -> bytes:
    return fold([nodes[node] for node in range_nodes(*span)])


def inclusion_ranges(index: int, size: int) -> list[Range]:
    """The ranges whose hashes make PATH(index, D[size]), leaf side first (RFC 6962
    2.1.1)."""
    ranges: list[Range] = []
    start, end = 0, size
    while end - start > 1:
        k = split(end - start)
        if index - start < k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start += k
    return ranges[::-1]


def consistency_ranges(first: int, second: int) -> list[Range]:
    """The ranges whose hashes make PROOF(first, D[second]) (RFC 6962 2.1.2); empty when
    `first` is 0 or `second`."""
    if first <= 0 or first >= second:
        return []
    ranges: list[Range] = []
    start, end, whole = 0, second, True
    while True:
        m = first - start
        if m == end - start:
            if not whole:
                ranges.append((start, end))
            break
        k = split(end - start)
        if m <= k:
            ranges.append((start + k, end))
            end = start + k
        else:
            ranges.append((start, start + k))
            start, whole = start + k, False
    return ranges[::-1]


def nodes_of(ranges: Iterable[Range]) -> list[Node]:
    """Every aligned node the ranges need, each once."""
    return list(dict.fromkeys(node for span in ranges for node in range_nodes(*span)))


def complete_nodes(size: int) -> Iterable[Node]:
    """Every complete aligned subtree of a tree of `size` leaves, level by level."""
    level = 0
    while size >> level:
        for index in range(size >> level):
            yield level, index
        level += 1


# ----- verifying (RFC 9162 2.1.3.2 and 2.1.4.2) ----------------------------------------------
def verify_inclusion(index: int, size: int, leaf: bytes, path: Sequence[bytes],
                     root: bytes) -> bool:
    """Whether `path` proves that `leaf` (a leaf hash) is leaf `index` of the tree of
    `size` leaves whose root is `root`."""
    if not 0 <= index < size:
        return False
    fn, sn, result = index, size - 1, leaf
    for sibling in path:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            result = node_hash(sibling, result)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            result = node_hash(result, sibling)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and result == root


def verify_consistency(first: int, second: int, first_root: bytes, second_root: bytes,
                       proof: Sequence[bytes]) -> bool:
    """Whether `proof` proves that the tree of `first` leaves with root `first_root` is a
    prefix of the tree of `second` leaves with root `second_root`."""
    if not 0 <= first <= second:
        return False
    if first == second:
        return not proof and first_root == second_root
    if first == 0:
        return not proof and first_root == EMPTY_ROOT  # every tree extends the empty one
    path = list(proof)
    if first & (first - 1) == 0:  # a power of two: the first tree is a node of the second
        path.insert(0, first_root)
    if not path:
        return False
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr, sr = node_hash(c, fr), node_hash(c, sr)
            while not fn & 1 and fn:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node_hash(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == first_root and sr == second_root


class Frontier:
    """The right edge of a tree being built leaf by leaf (the hashes of its largest
    complete subtrees, left to right): its root at any size, in O(log n) memory. A monitor
    keeps one to check that the entries it reads give the signed root."""

    def __init__(self, size: int = 0, hashes: Sequence[bytes] = ()):
        if len(hashes) != bin(size).count("1"):
            raise ValueError(f"a frontier of {size} leaves has {bin(size).count('1')} "
                             f"hashes, not {len(hashes)}")
        self.size, self.hashes = size, list(hashes)

    def append(self, leaf: bytes) -> None:
        self.hashes.append(leaf)
        self.size += 1
        carry = self.size
        while not carry & 1:  # each trailing zero of the new size merges two subtrees
            right = self.hashes.pop()
            self.hashes[-1] = node_hash(self.hashes[-1], right)
            carry >>= 1

    def root(self) -> bytes:
        return fold(self.hashes)


def tree_root(leaves: Iterable[bytes]) -> bytes:
    """The root over leaf hashes given in order (built with a `Frontier`)."""
    frontier = Frontier()
    for leaf in leaves:
        frontier.append(leaf)
    return frontier.root()

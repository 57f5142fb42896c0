"""The results log's tree math (referee/match/merkle.py) against a reference written here
straight from RFC 6962 section 2.1's recursive definitions (MTH, PATH, PROOF/SUBPROOF),
over lists of leaf data and hashlib only: sizes 1..65 for heads and audit paths, every pair
of sizes up to 33 for consistency proofs."""

from __future__ import annotations

import hashlib
from functools import cache

import pytest

from referee.match import merkle

MAX_SIZE = 65  # heads and audit paths: every size 1..65, every leaf
MAX_CONSISTENCY = 33  # consistency proofs: every pair 0 <= M <= N <= 33

# leaf data of several lengths, the empty one included, all different
LEAVES: tuple[bytes, ...] = tuple(b"" if i == 0 else f"leaf {i}:".encode() * (i % 4 + 1)
                                  for i in range(MAX_SIZE + 1))


# ----- the reference: RFC 6962 section 2.1, word for word --------------------------------------
def _k(n: int) -> int:
    """The largest power of two smaller than n (n > 1)."""
    k = 1
    while k * 2 < n:
        k *= 2
    return k


@cache
def mth(data: tuple[bytes, ...]) -> bytes:
    """MTH(D[n]) (RFC 6962 2.1)."""
    if not data:
        return hashlib.sha256(b"").digest()
    if len(data) == 1:
        return hashlib.sha256(b"\x00" + data[0]).digest()
    k = _k(len(data))
    return hashlib.sha256(b"\x01" + mth(data[:k]) + mth(data[k:])).digest()


def path(m: int, data: tuple[bytes, ...]) -> list[bytes]:
    """PATH(m, D[n]) (RFC 6962 2.1.1)."""
    n = len(data)
    if n == 1:
        return []
    k = _k(n)
    if m < k:
        return path(m, data[:k]) + [mth(data[k:])]
    return path(m - k, data[k:]) + [mth(data[:k])]


def proof(m: int, data: tuple[bytes, ...]) -> list[bytes]:
    """PROOF(m, D[n]) (RFC 6962 2.1.2), for 0 < m < n."""
    return subproof(m, data, True)


def subproof(m: int, data: tuple[bytes, ...], b: bool) -> list[bytes]:
    """SUBPROOF(m, D[n], b) (RFC 6962 2.1.2)."""
    n = len(data)
    if m == n:
        return [] if b else [mth(data)]
    k = _k(n)
    if m <= k:
        return subproof(m, data[:k], b) + [mth(data[k:])]
    return subproof(m - k, data[k:], False) + [mth(data[:k])]


# ----- the module's side: every complete node, hashed by the reference -------------------------
@cache
def stored_nodes(size: int) -> dict[merkle.Node, bytes]:
    """What a store keeps for a tree of `size` leaves: the hash of every complete aligned
    subtree that `complete_nodes` names, each computed with the reference MTH."""
    return {(level, index): mth(LEAVES[index << level:(index + 1) << level])
            for level, index in merkle.complete_nodes(size)}


def module_path(index: int, size: int) -> list[bytes]:
    nodes = stored_nodes(size)
    return [merkle.range_hash(span, nodes) for span in merkle.inclusion_ranges(index, size)]


def module_proof(first: int, second: int) -> list[bytes]:
    nodes = stored_nodes(second)
    return [merkle.range_hash(span, nodes)
            for span in merkle.consistency_ranges(first, second)]


def flipped(digest: bytes) -> bytes:
    """The digest with the low bit of its last byte flipped."""
    return digest[:-1] + bytes([digest[-1] ^ 1])


def root(size: int) -> bytes:
    return mth(LEAVES[:size])


def test_the_reference_hashes_leaves_and_nodes_as_the_module_does():
    """RFC 6962 2.1: a leaf is sha256(0x00 || d), a node sha256(0x01 || left || right)."""
    assert merkle.leaf_hash(b"abc") == hashlib.sha256(b"\x00abc").digest() == mth((b"abc",))
    left, right = mth((b"a",)), mth((b"b",))
    assert merkle.node_hash(left, right) == hashlib.sha256(b"\x01" + left + right).digest()
    assert merkle.node_hash(left, right) == mth((b"a", b"b")) != mth((b"b", b"a"))


def test_the_empty_tree_has_the_hash_of_the_empty_string():
    """RFC 6962 2.1: MTH({}) = SHA-256()."""
    empty = hashlib.sha256(b"").digest()
    assert mth(()) == empty
    assert empty == merkle.EMPTY_ROOT
    assert merkle.tree_root([]) == empty
    assert merkle.Frontier().root() == empty
    assert merkle.range_hash((0, 0), {}) == empty
    assert list(merkle.complete_nodes(0)) == []


@pytest.mark.parametrize("size", [1, 2, 3, 5, 8, 13, 64, 65])
def test_complete_nodes_are_every_aligned_subtree_inside_the_tree(size):
    """RFC 6962 2.1: the subtrees the definitions split into are the aligned ones,
    [i * 2^l, (i+1) * 2^l); a store keeps each complete one, once."""
    nodes = list(merkle.complete_nodes(size))
    expected = {(level, index) for level in range(size.bit_length())
                for index in range(size) if (index + 1) << level <= size}
    assert len(nodes) == len(set(nodes)) and set(nodes) == expected


def test_the_root_from_stored_nodes_is_the_reference_mth_for_sizes_1_to_65():
    """RFC 6962 2.1: MTH(D[n]) for n = 1..65, folded from the stored nodes."""
    for size in range(1, MAX_SIZE + 1):
        assert merkle.range_hash((0, size), stored_nodes(size)) == root(size), size


def test_tree_root_and_the_frontier_give_the_reference_mth_for_sizes_1_to_65():
    """RFC 6962 2.1: MTH(D[n]) for n = 1..65, built leaf by leaf."""
    frontier = merkle.Frontier()
    for size in range(1, MAX_SIZE + 1):
        frontier.append(merkle.leaf_hash(LEAVES[size - 1]))
        assert frontier.size == size
        assert frontier.root() == root(size), size
        assert merkle.tree_root(merkle.leaf_hash(d) for d in LEAVES[:size]) == root(size)
        assert len(frontier.hashes) == bin(size).count("1")


def test_roots_of_different_sizes_differ():
    """RFC 6962 2.1: the tree of n leaves is not the tree of n + 1 leaves (so the checks
    below that use another size's root are meaningful)."""
    roots = [root(size) for size in range(MAX_SIZE + 1)]
    assert len(set(roots)) == len(roots)


def test_audit_paths_are_the_reference_path_for_every_leaf_of_sizes_1_to_65():
    """RFC 6962 2.1.1: PATH(m, D[n]) for every 0 <= m < n <= 65."""
    for size in range(1, MAX_SIZE + 1):
        data = LEAVES[:size]
        for index in range(size):
            assert module_path(index, size) == path(index, data), (index, size)


def test_audit_paths_verify_for_every_leaf_of_sizes_1_to_65():
    """RFC 6962 2.1.1 (verified as RFC 9162 2.1.3.2): each PATH(m, D[n]) leads from leaf m
    to MTH(D[n])."""
    for size in range(1, MAX_SIZE + 1):
        for index in range(size):
            leaf = merkle.leaf_hash(LEAVES[index])
            assert merkle.verify_inclusion(index, size, leaf, module_path(index, size),
                                           root(size)), (index, size)


def test_an_audit_path_does_not_verify_another_leaf_or_index():
    """RFC 6962 2.1.1: PATH(m, D[n]) proves leaf m, and only leaf m, of D[n]."""
    for size in range(1, MAX_SIZE + 1):
        top = root(size)
        for index in range(size):
            audit = path(index, LEAVES[:size])
            leaf = merkle.leaf_hash(LEAVES[index])
            other = merkle.leaf_hash(LEAVES[index + 1])
            assert not merkle.verify_inclusion(index, size, other, audit, top)
            assert not merkle.verify_inclusion(index, size, flipped(leaf), audit, top)
            for wrong in (index - 1, index + 1, size, -1):
                assert not merkle.verify_inclusion(wrong, size, leaf, audit, top), (
                    index, wrong, size)


def test_an_audit_path_does_not_verify_against_another_tree_size():
    """RFC 6962 2.1.1: PATH(m, D[n]) does not prove leaf m of a tree of another size,
    neither with that tree's own root, nor with this root when the other size needs a
    path of another length."""
    for size in range(1, MAX_SIZE + 1):
        for index in range(size):
            audit = path(index, LEAVES[:size])
            leaf = merkle.leaf_hash(LEAVES[index])
            for other in (size - 1, size + 1, 2 * size):
                if other <= index:
                    continue
                assert not merkle.verify_inclusion(index, other, leaf, audit, root(other)), (
                    index, size, other)
                if len(path(index, LEAVES[:other])) != len(audit):
                    assert not merkle.verify_inclusion(index, other, leaf, audit,
                                                       root(size)), (index, size, other)
            assert not merkle.verify_inclusion(index, 0, leaf, audit, root(size))


def test_a_changed_truncated_or_extended_audit_path_does_not_verify():
    """RFC 6962 2.1.1: every node of PATH(m, D[n]) counts, and nothing else does."""
    for size in range(1, MAX_SIZE + 1):
        top = root(size)
        for index in range(size):
            audit = path(index, LEAVES[:size])
            leaf = merkle.leaf_hash(LEAVES[index])
            for at in range(len(audit)):
                changed = audit[:at] + [flipped(audit[at])] + audit[at + 1:]
                assert not merkle.verify_inclusion(index, size, leaf, changed, top)
            if audit:
                assert not merkle.verify_inclusion(index, size, leaf, audit[:-1], top)
                assert not merkle.verify_inclusion(index, size, leaf, audit[1:], top)
            for extra in (top, leaf, merkle.EMPTY_ROOT):
                assert not merkle.verify_inclusion(index, size, leaf, audit + [extra], top)
            assert not merkle.verify_inclusion(index, size, leaf, audit, flipped(top))


def test_a_path_longer_than_the_tree_is_refused_even_against_the_root_it_leads_to():
    """RFC 6962 2.1.1: PATH(m, D[n]) has one node per level of the tree of n leaves; a node
    beyond the top makes another tree (RFC 9162 2.1.3.2 fails once sn is 0)."""
    for size in range(1, MAX_SIZE + 1):
        for index in range(size):
            audit = path(index, LEAVES[:size])
            leaf = merkle.leaf_hash(LEAVES[index])
            for extra in (root(size), leaf):
                above = merkle.node_hash(extra, root(size))
                assert not merkle.verify_inclusion(index, size, leaf, audit + [extra], above)


def test_consistency_proofs_are_the_reference_proof_for_every_pair_up_to_33():
    """RFC 6962 2.1.2: PROOF(m, D[n]) for every 0 < m < n <= 33; no node for m = 0 or
    m = n."""
    for second in range(MAX_CONSISTENCY + 1):
        data = LEAVES[:second]
        for first in range(second + 1):
            expected = proof(first, data) if 0 < first < second else []
            assert module_proof(first, second) == expected, (first, second)


def test_consistency_proofs_verify_for_every_pair_up_to_33():
    """RFC 6962 2.1.2 (verified as RFC 9162 2.1.4.2): PROOF(m, D[n]) shows that
    MTH(D[m]) is the head of a prefix of D[n]."""
    for second in range(MAX_CONSISTENCY + 1):
        for first in range(second + 1):
            assert merkle.verify_consistency(first, second, root(first), root(second),
                                             module_proof(first, second)), (first, second)


def test_a_consistency_proof_does_not_verify_other_roots():
    """RFC 6962 2.1.2: the proof ties these two roots, no others (for m = 0 every tree
    extends the empty one: see the next test)."""
    for second in range(1, MAX_CONSISTENCY + 1):
        for first in range(1, second + 1):
            shown = module_proof(first, second)
            old, new = root(first), root(second)
            assert not merkle.verify_consistency(first, second, flipped(old), new, shown)
            assert not merkle.verify_consistency(first, second, old, flipped(new), shown)
            if first < second:
                assert not merkle.verify_consistency(first, second, new, old, shown)
                assert not merkle.verify_consistency(first, second, root(first - 1), new,
                                                     shown)
                assert not merkle.verify_consistency(first, second, old, root(second - 1),
                                                     shown)


def test_a_consistency_proof_from_the_empty_tree_needs_the_empty_root():
    """RFC 6962 2.1: the tree of 0 leaves has one root, MTH({}) = SHA-256(); a head of
    size 0 with another root is no tree head at all."""
    assert merkle.verify_consistency(0, 5, merkle.EMPTY_ROOT, root(5), [])
    assert not merkle.verify_consistency(0, 5, flipped(merkle.EMPTY_ROOT), root(5), [])


def test_a_changed_dropped_or_added_consistency_node_does_not_verify():
    """RFC 6962 2.1.2: every node of PROOF(m, D[n]) counts, and nothing else does."""
    for second in range(MAX_CONSISTENCY + 1):
        for first in range(second + 1):
            shown = module_proof(first, second)
            old, new = root(first), root(second)
            for at in range(len(shown)):
                changed = shown[:at] + [flipped(shown[at])] + shown[at + 1:]
                assert not merkle.verify_consistency(first, second, old, new, changed)
                dropped = shown[:at] + shown[at + 1:]
                assert not merkle.verify_consistency(first, second, old, new, dropped), (
                    first, second, at)
            for extra in (old, new):
                assert not merkle.verify_consistency(first, second, old, new,
                                                     shown + [extra]), (first, second)


def test_a_larger_first_tree_is_never_consistent():
    """RFC 6962 2.1.2: PROOF(m, D[n]) is defined for m <= n only; a tree does not shrink."""
    for second in range(MAX_CONSISTENCY + 1):
        for first in range(second + 1, MAX_CONSISTENCY + 2):
            for shown in ([], module_proof(second, first) if first <= MAX_CONSISTENCY else []):
                assert not merkle.verify_consistency(first, second, root(first),
                                                     root(second), shown), (first, second)
    assert not merkle.verify_consistency(-1, 3, root(0), root(3), [])
    # a proof the RFC 9162 2.1.4.2 loop would take for 3 -> 2, were the sizes not checked
    a, b = root(3), root(2)
    assert not merkle.verify_consistency(3, 2, a, merkle.node_hash(a, b), [a, b])


@pytest.mark.parametrize("size, count", [(0, 1), (1, 0), (1, 2), (5, 1), (5, 3), (8, 2),
                                         (7, 2), (7, 4)])
def test_a_frontier_refuses_a_wrong_number_of_hashes(size, count):
    """RFC 6962 2.1: a tree of n leaves is one complete subtree per 1 bit of n, so its right
    edge has popcount(n) hashes."""
    with pytest.raises(ValueError, match=f"a frontier of {size} leaves has"):
        merkle.Frontier(size, [merkle.EMPTY_ROOT] * count)


def test_a_frontier_holds_the_largest_complete_subtrees_left_to_right():
    """RFC 6962 2.1: MTH(D[n]) splits at the largest power of two below n, so the tree is
    the complete subtrees of n's 1 bits, largest first."""
    for size in range(MAX_SIZE + 1):
        frontier = merkle.Frontier()
        for data in LEAVES[:size]:
            frontier.append(merkle.leaf_hash(data))
        start, expected = 0, []
        for bit in reversed(range(size.bit_length())):
            if size >> bit & 1:
                expected.append(mth(LEAVES[start:start + (1 << bit)]))
                start += 1 << bit
        assert frontier.hashes == expected, size


def test_a_restored_frontier_grows_to_the_root_built_from_scratch():
    """RFC 6962 2.1: MTH(D[n]) from a frontier saved at size m (its size and hashes) and
    given the leaves m..n-1 is MTH(D[n]) built from the first leaf; the saved list is not
    changed by the restored frontier."""
    for saved_at in range(MAX_CONSISTENCY + 1):
        frontier = merkle.Frontier()
        for data in LEAVES[:saved_at]:
            frontier.append(merkle.leaf_hash(data))
        saved = list(frontier.hashes)
        kept = list(saved)
        restored = merkle.Frontier(saved_at, saved)
        assert restored.root() == root(saved_at)
        for size in range(saved_at + 1, MAX_CONSISTENCY + 1):
            restored.append(merkle.leaf_hash(LEAVES[size - 1]))
            assert restored.size == size and restored.root() == root(size), (saved_at, size)
        assert saved == kept

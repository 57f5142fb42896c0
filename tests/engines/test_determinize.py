"""`game.determinize(observation, seed)` (design.md section 5d, issue 30): a full state drawn
from the seed that the observation could have been seen in.

What is hidden, game by game:
- aladino: the faces of face-down tokens, which show only their back (rules/aladino.md,
  "Tokens").
- aldabas: other players' hands and vaults, doors and coins (rulebook 000 "Setup" steps 2
  and 4, "Your Vault & Your Purse": "Coins and cards in your Vault are secret"), the doors
  another player drew for a Fisher, the Rival's vault doors (solo), the deck's order.
- caravans: each player's three starting cards, drawn in secret from their own colour's
  pile, and the order within each colour of the deck, stacked in seat order
  (rules/caravans.md "Setup").

The sweep plays 200 random games per setup and checks every decision (the seat to move's
observation); every SAMPLE-th state (a different residue per game, so every point of a
game is covered in some game) it checks every other seat's observation too, the state's
JSON round trip and, in the first PLAYOUTS games, a playout to the end: every seat at every
state would cost several minutes.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter

import orjson
import pytest

import engines
from engines.aladino.components import TOKENS, back
from engines.aldabas.components import FULL_DECK
from engines.caravans.components import CARDS, ROUTES, STARTING_CARDS

GAMES = 200
SAMPLE = 15
PLAYOUTS = 3
"""Games per setup whose sampled determinized states are also played out to the end."""
MAX_STEPS = 5000

SETUPS = [pytest.param(name, variant, id=f"{name}-{variant['num_players']}p-"
                       f"{variant['options'].get('mode', '')}".rstrip("-"))
          for name in engines.names() for variant in engines.get(name).variants()]


def _new(name, variant, seed):
    return engines.get(name).new_game(variant["num_players"], seed, variant["options"])


def _states(name, variant, seed):
    """Every state of one random game, the last included."""
    game, chooser = engines.get(name), random.Random(seed)
    state = _new(name, variant, seed)
    for _ in range(MAX_STEPS):
        yield state
        if game.is_over(state):
            return
        state = game.apply(state, chooser.choice(game.legal_actions(state)))
    pytest.fail(f"{name} seed {seed} did not finish")


def _play_out(game, state, seed):
    chooser = random.Random(seed)
    for _ in range(MAX_STEPS):
        if game.is_over(state):
            return game.result(state)
        state = game.apply(state, chooser.choice(game.legal_actions(state)))
    pytest.fail(f"a playout from a determinized {game.name} state did not finish")


def _bytes(game, state) -> bytes:
    return orjson.dumps(game.to_json(state))


# ----- every setup: the observation comes back ------------------------------------------
@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_determinized_states_show_the_same_observation(name, variant):
    """The seat to move at every decision, and every seat every SAMPLE-th state: the same
    observation (its legal actions included), a state that round-trips through JSON and
    plays on to the end."""
    game = engines.get(name)
    decisions = 0
    for seed in range(GAMES):
        chooser = random.Random(seed)
        state = _new(name, variant, seed)
        for step in range(MAX_STEPS):
            if (step + seed) % SAMPLE == 0:
                _check_every_seat(game, state, seed)
            if game.is_over(state):
                break
            seat = game.current_seat(state)
            observation = game.observation(state, seat)
            determinized = game.determinize(observation, seed=seed * 31 + seat)
            assert game.observation(determinized, seat) == observation, (seed, step, seat)
            decisions += 1
            state = game.apply(state, chooser.choice(observation["legal_actions"]))
        else:
            pytest.fail(f"{name} seed {seed} did not finish")
    assert decisions > GAMES


def _check_every_seat(game, state, seed):
    for seat in range(game.seats(state)):
        observation = game.observation(state, seat)
        determinized = game.determinize(observation, seed=seed * 31 + seat)
        assert game.observation(determinized, seat) == observation, (seed, seat)
        assert game.from_json(game.to_json(determinized)) == determinized
        if seed < PLAYOUTS:
            _play_out(game, determinized, seed)


@pytest.mark.parametrize(("name", "variant"), SETUPS)
def test_a_spectator_observation_determinizes_too(name, variant):
    game = engines.get(name)
    for state in list(_states(name, variant, 5))[::15]:
        observation = game.observation(state, None)
        assert game.observation(game.determinize(observation, seed=9), None) == observation


# ----- purity and chance --------------------------------------------------------------
def _early_states():
    """A position per setup where much is hidden: a few decisions into a game."""
    for param in SETUPS:
        name, variant = param.values
        states = list(_states(name, variant, 11))
        yield pytest.param(name, states[min(6, len(states) - 1)], id=param.id)


@pytest.mark.parametrize(("name", "state"), list(_early_states()))
def test_the_same_seed_gives_the_same_state_and_other_seeds_others(name, state):
    game = engines.get(name)
    seat = game.current_seat(state)
    observation = game.observation(state, seat)
    before = orjson.dumps(observation)
    first = _bytes(game, game.determinize(observation, seed=123))
    assert _bytes(game, game.determinize(observation, seed=123)) == first
    assert orjson.dumps(observation) == before, "determinize changed its argument"
    others = {_bytes(game, {**game.determinize(observation, seed=s), "rng": 0, "seed": 0})
              for s in range(20)}
    assert len(others) > 10, "the hidden part hardly depends on the seed"
    rngs = {game.determinize(observation, seed=s)["rng"] for s in range(20)}
    assert len(rngs) == 20, "future chance does not start from the seed"


def test_determinize_rejects_other_games_and_bad_seeds():
    aladino, caravans = engines.get("aladino"), engines.get("caravans")
    observation = aladino.observation(aladino.new_game(2, 1), 0)
    with pytest.raises(engines.InvalidState):
        caravans.determinize(observation, seed=1)
    with pytest.raises(engines.InvalidSetup):
        aladino.determinize(observation, seed=-1)
    with pytest.raises(engines.InvalidState):
        aladino.determinize({"game": "aladino", "seat": 0, "log": []}, seed=1)
    with pytest.raises(NotImplementedError):
        engines.get("aladino", version=engines.versions("aladino")[0]).determinize(
            observation, seed=1)


# ----- coverage: every consistent hidden assignment comes up --------------------------
def _seen_assignments(game, observation, hidden, seeds):
    return {hidden(game.determinize(observation, seed=s)) for s in range(seeds)}


def test_aladino_every_arrangement_of_face_down_tokens_comes_up():
    """rules/aladino.md "Tokens": a face-down token shows only its back, so the unseen
    tokens of one back may lie in any order on the face-down spaces with that back (and on
    no space of another back). Here 3 + 2 tokens lie face down: 3! * 2! arrangements."""
    game = engines.get("aladino")
    state = game.new_game(2, seed=4)
    down = [c for c, t in enumerate(state["cells"]) if t is not None and not state["up"][t]]
    by_back: dict[str, list[int]] = {}
    for cell in down:
        by_back.setdefault(back(TOKENS[state["cells"][cell]]), []).append(cell)
    (_, first), (_, second) = [item for item in by_back.items() if len(item[1]) >= 3][:2]
    kept = first[:3] + second[:2]
    state["up"] = [t not in [state["cells"][c] for c in kept] for t in range(len(TOKENS))]
    observation = game.observation(state, 0)

    visible = {space["token"]["id"] for space in observation["cave"]
               if space["token"] is not None and space["token"]["face"] == "up"}
    groups = [[c for c in kept if back(TOKENS[state["cells"][c]]) == face]
              for face in {back(TOKENS[state["cells"][c]]) for c in kept}]
    expected = set()
    per_group = [[dict(zip(cells, order, strict=True)) for order in itertools.permutations(
        [t.id for t in TOKENS if t.id not in visible
         and back(t) == back(TOKENS[state["cells"][cells[0]]])])] for cells in groups]
    for combination in itertools.product(*per_group):
        merged = {cell: token for part in combination for cell, token in part.items()}
        expected.add(tuple(merged[c] for c in sorted(kept)))
    assert len(expected) == 12

    seen = _seen_assignments(game, observation,
                             lambda d: tuple(d["cells"][c] for c in sorted(kept)), 500)
    assert seen == expected


def _caravans_position(found):
    """The first state of random 2-player games where `found(state)` holds."""
    for seed in range(300):
        for state in _states("caravans", {"num_players": 2, "options": {}}, seed):
            if found(state):
                return state
    pytest.fail("no such position in 300 games")


def _caravans_allowed(observation, owner):
    """rules/caravans.md: a player's secret cards are starting cards of their colour; one who
    bought a route held no card of either of its city types ("Routes and control", build
    with a matching card, buy with none); one who handed over cards of a type in a trade
    handed over their lowest-id ones (engine: trade.cards_for_types)."""
    colour = observation["colours"][owner]
    seen = {*(observation["hand"] or []), *observation["face_up"], *observation["discard"],
            *(c for cards in observation["known_cards"] for c in cards)}
    unseen = [c["id"] for c in CARDS if c["colour"] == colour and c["id"] not in seen]
    allowed = []
    for card in unseen:
        bought = any(e["event"] == "buy" and e["seat"] == owner
                     and CARDS[card]["type"] in ROUTES[e["route"]]["types"]
                     for e in observation["log"])
        traded = any(e["event"] == "accept_trade" and e["seat"] == owner
                     and any(CARDS[g]["type"] == CARDS[card]["type"] and g > card
                             for g in e["cards_given"]) for e in observation["log"])
        if not bought and not traded:
            allowed.append(card)
    return unseen, allowed


def _secret_count(observation, owner):
    return observation["hand_counts"][owner] - len(observation["known_cards"][owner])


def test_caravans_every_secret_hand_the_log_allows_comes_up_and_no_other():
    """Seat 1 bought a route, so it holds no card of either city type: of the unseen cards
    of its colour, exactly the combinations avoiding them appear."""
    def bought_with_secrets(state):
        observation = engines.get("caravans").observation(state, 0)
        unseen, allowed = _caravans_allowed(observation, 1)
        return (_secret_count(observation, 1) >= 2
                and len(allowed) < len(unseen) and len(allowed) > _secret_count(observation, 1))

    game = engines.get("caravans")
    state = _caravans_position(bought_with_secrets)
    observation = game.observation(state, 0)
    unseen, allowed = _caravans_allowed(observation, 1)
    count = _secret_count(observation, 1)
    expected = {tuple(sorted(c)) for c in itertools.combinations(allowed, count)}
    assert len(expected) < len(list(itertools.combinations(unseen, count)))

    def secret(d):
        return tuple(sorted(c for c in d["hands"][1] if c not in d["known"][1]))

    assert _seen_assignments(game, observation, secret, 400) == expected


def _trade_that_rules_out_a_card():
    """Seat 0 asks seat 1 for a card of a type whose lower-id copy seat 1 lacks (it is in
    the deck) while it holds the higher one; seat 1 accepts. The first such trade."""
    game = engines.get("caravans")

    def ask(state):
        if state["phase"] != "actions" or game.current_seat(state) != 0:
            return None
        if state["actions"]["offer"] is not None or state["actions"]["offers"][0] >= 3:
            return None
        secret = [c for c in state["hands"][1] if c not in state["known"][1]]
        for card in secret:
            copies = sorted(c["id"] for c in CARDS if c["type"] == CARDS[card]["type"]
                            and c["colour"] == CARDS[card]["colour"])
            if len(secret) >= 2 and copies[-1] == card and copies[0] in state["deck"]:
                return CARDS[card]["type"]
        return None

    state = _caravans_position(lambda s: ask(s) is not None)
    offer = {"type": "offer_trade", "to": 1, "take": {"card_types": [ask(state)]}}
    state = game.apply(state, offer)
    return game.apply(state, {"type": "accept_trade"})


def test_caravans_a_trade_rules_out_lower_id_cards_of_the_type_handed_over():
    """The published action schema (offer_trade, `take.card_types`): the other player hands
    over their lowest-id cards of the types asked, so they held no lower-id card of that
    type: the lower copy, unseen, can only be in the deck."""
    game = engines.get("caravans")
    state = _trade_that_rules_out_a_card()
    observation = game.observation(state, 0)
    unseen, allowed = _caravans_allowed(observation, 1)
    count = _secret_count(observation, 1)
    expected = {tuple(sorted(c)) for c in itertools.combinations(allowed, count)}
    assert len(allowed) < len(unseen)

    def secret(d):
        return tuple(sorted(c for c in d["hands"][1] if c not in d["known"][1]))

    assert _seen_assignments(game, observation, secret, 400) == expected


def test_caravans_every_deck_order_and_secret_hand_comes_up_late_in_a_game():
    """Late in a game few cards are unseen: every (secret hand, deck order) appears, each
    deck position holding a card of the colour stacked there (rules/caravans.md "Setup":
    the piles are stacked in seat order, cards revealed from the top)."""
    game = engines.get("caravans")

    def assignments(state):
        observation = game.observation(state, 0)
        colours, deck_count = observation["colours"], observation["deck_count"]
        stacked = [c for c in colours for _ in range(
            sum(card["colour"] == c for card in CARDS) - STARTING_CARDS)]
        deck_colours = stacked[len(stacked) - deck_count:]
        per_colour = []
        for owner, colour in enumerate(colours):
            unseen, allowed = _caravans_allowed(observation, owner)
            secret = 0 if owner == 0 else _secret_count(observation, owner)
            positions = [i for i, c in enumerate(deck_colours) if c == colour]
            options = [(tuple(sorted(order[:secret])), dict(zip(positions, order[secret:],
                                                                strict=True)))
                       for order in itertools.permutations(unseen)
                       if all(card in allowed for card in order[:secret])]
            per_colour.append(set((s, tuple(sorted(d.items()))) for s, d in options))
        return {(choice[1][0], tuple(card for _, card in sorted(
                    pair for part in choice for pair in part[1])))
                for choice in itertools.product(*per_colour)}

    state = _caravans_position(
        lambda s: s["deck"] and 6 <= len(s["deck"]) + sum(map(len, s["hands"][1:])) <= 7
        and 2 <= len(assignments(s)) <= 80)
    expected = assignments(state)
    observation = game.observation(state, 0)

    def hidden(d):
        return (tuple(sorted(c for c in d["hands"][1] if c not in d["known"][1])),
                tuple(d["deck"]))

    assert _seen_assignments(game, observation, hidden, 1500) == expected


def _aldabas_position(variant, found, games=300):
    for seed in range(games):
        for state in _states("aldabas", variant, seed):
            if found(state):
                return state
    pytest.fail("no such position")


def test_aldabas_solo_every_rival_vault_and_deck_order_comes_up():
    """Solo: the Rival's vault doors and the deck's order are hidden (rulebook "Solo
    Setup"); near the end few doors are unseen and every arrangement appears."""
    game = engines.get("aldabas")
    solo = {"num_players": 1, "options": {"mode": "solo"}}

    def hidden_slots(state):
        return state["rival"]["vault_cards"] + state["deck"]

    state = _aldabas_position(solo, lambda s: s["phase"] != "over"
                              and 3 <= len(hidden_slots(s)) <= 4)
    observation = game.observation(state, 0)
    expected = set(itertools.permutations(sorted(hidden_slots(state))))
    seen = _seen_assignments(game, observation, lambda d: tuple(hidden_slots(d)), 800)
    assert seen == expected


def _clergy_splits(observation, owner):
    """Which of the doors `owner` bought and nobody has seen since may be in their vault
    rather than their hand, found by trying every way their Clergy powers could have chosen
    (rules/aldabas.md "Turn details": the C1 door goes from hand to vault, secretly): each
    Clergy takes an unseen door or a bought one held at the time, and the hand must hold an
    unseen door whenever one left it in view (placed or discarded)."""
    shown = {*observation["discard"], *(s["card"] for s in observation["dock"]),
             *(d["card"] for p in observation["players"] for d in p["block"]),
             *observation["you"]["hand"], *observation["you"]["vault_cards"]}
    events = [e for e in observation["log"] if e["event"] == "setup" or e.get("seat") == owner]
    bought = [e["card"] for e in events if e["event"] == "buy"]
    clergies = sum(e["event"] == "door_to_vault" for e in events)
    splits = set()
    for choices in itertools.product([None, *bought], repeat=clergies):
        loose, held, vaulted, picks, fits = 0, set(), [], iter(choices), True
        for e in events:
            kind = e["event"]
            if kind == "setup":
                loose += 5
            elif kind == "buy":
                held.add(e["card"])
            elif kind in ("fish", "draw"):
                loose += 1 if kind == "fish" else e["count"]
            elif kind in ("setup_vault", "setup_discard", "place", "discard"):
                if kind in ("place", "discard") and e["card"] in held:
                    held.discard(e["card"])
                else:
                    loose -= 1
            elif kind == "door_to_vault":
                pick = next(picks)
                if pick is None:
                    loose -= 1
                elif pick in held:
                    held.discard(pick)
                    vaulted.append(pick)
                else:
                    fits = False
            fits = fits and loose >= 0
        if fits and not shown & set(vaulted):
            splits.add(tuple(sorted(vaulted)))
    return splits


def test_aldabas_every_split_of_bought_doors_between_hand_and_vault_comes_up():
    """Another seat bought doors and used Clergy powers since: the bought doors not seen
    since are in its hand or vault, in every combination the log allows, and no other."""
    game = engines.get("aldabas")
    variant = {"num_players": 2, "options": {"mode": "multi"}}

    def interesting(state):
        observation = game.observation(state, 0)
        if not any(e["event"] == "door_to_vault" and e["seat"] == 1 for e in observation["log"]):
            return False
        return len(_clergy_splits(observation, 1)) >= 3

    state = _aldabas_position(variant, interesting)
    observation = game.observation(state, 0)
    expected = _clergy_splits(observation, 1)
    bought = {e["card"] for e in observation["log"] if e["event"] == "buy" and e["seat"] == 1}

    def split(d):
        holder = d["players"][1]
        assert Counter(holder["hand"] + holder["vault_cards"]) & Counter(bought) == \
            Counter(c for c in bought if c in state["players"][1]["hand"]
                    + state["players"][1]["vault_cards"])
        return tuple(sorted(c for c in holder["vault_cards"] if c in bought))

    assert _seen_assignments(game, observation, split, 600) == expected


def test_aldabas_vault_coins_follow_from_the_log():
    """Vault coins are secret, but every coin gained or spent is logged and purses are
    public: the determinized vaults hold exactly the true number of coins."""
    game = engines.get("aldabas")
    variant = {"num_players": 3, "options": {"mode": "multi"}}
    checked = 0
    for seed in range(10):
        for state in list(_states("aldabas", variant, seed))[::7]:
            d = game.determinize(game.observation(state, 0), seed=seed)
            assert [p["vault_coins"] for p in d["players"]] == \
                [p["vault_coins"] for p in state["players"]]
            checked += any(p["vault_coins"] for p in state["players"][1:])
    assert checked


def test_aldabas_cards_are_conserved():
    """Every door of the deck is in exactly one place of a determinized state."""
    game = engines.get("aldabas")
    for state in list(_states("aldabas", {"num_players": 4, "options": {"mode": "multi"}},
                              3))[::25]:
        d = game.determinize(game.observation(state, 2), seed=1)
        places = [*d["deck"], *d["discard"], *(c for c in d["dock"] if c is not None)]
        for p in d["players"]:
            places += p["hand"] + p["vault_cards"] + [c for c in p["block"] if c is not None]
        if d["power"] and "drawn" in d["power"]:
            places += d["power"]["drawn"]
        assert sorted(places) == FULL_DECK

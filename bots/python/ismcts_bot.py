"""An information-set MCTS bot for any game: single-observer ISMCTS (Cowling, Powley and
Whitehouse 2012) on the engines' `determinize`.

An iteration chooses a move at the root, draws a full state consistent with the
observation (`game.determinize`), walks down one tree of the seat's information set among
the moves available in that determinization, and plays the game out with the game's greedy
bot in every seat (bots/python/playout_policies.py; random moves for a game without one);
where the observations show running scores (Aladino), the playout stops HORIZON moves on and
those scores stand for the result.
Every node credits the reward of the seat that moved into it (max^n): its rank among the
seats, blended with its score margin over the best other seat (solo: its score alone; a
playout cut HORIZON moves on: that margin alone), the margins normalised over the search.

- The root's moves are legal in every determinization, so the root move is chosen first
  (UCB1, untried moves first, the greedy bot's move before the others, progressively
  widened), and its n-th visit draws the n-th seed: every root move is judged on the same
  hidden states and the same future chance (common random numbers).
- Below the root a node grows children once it has EXPAND_AFTER visits; they are chosen by
  PUCT over availability counts with the greedy bot's move as the prior, so the other
  seats are first expected to play as the greedy bots do and later as their playouts rate.
- The move is the root's most visited one.

Time per move: most of the decision's deadline or of its clock's share (`sdk.budget_ms`),
never within SAFETY_MS of its deadline, at most `--move-ms`; `--iterations N` searches a
fixed count instead (reproducible: the generator is seeded from `--seed` and the
observation). `info` tells the iterations made.

    python3 -m bots.python.ismcts_bot --port 8001 [--move-ms 1000] [--iterations N] [--stdio]
"""

from __future__ import annotations

import gc
import math
import random
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

import engines

from . import playout_policies
from .sdk import Answer, Choose, bot_arguments, budget_ms, serve, serve_stdio

EXPLORATION = 0.4
"""UCB1's constant at the root, for values in [0, 1]."""
MIN_WIDTH = 6
"""The root weighs its first max(MIN_WIDTH, sqrt(visits + 1)) moves in its order."""
EXPAND_AFTER = 10
"""The visits a node below the root needs before its moves are searched."""
GREEDY_PRIOR, PUCT_C = 0.75, 1.0
"""Below the root: the greedy move's prior (the rest shared evenly), PUCT's constant."""
MARGIN_WEIGHT = 0.3
"""The share of the normalised score margin in the reward of a whole game (the rank has the
rest)."""
HORIZON = 4
"""The moves a playout plays in a game whose observations show the running scores (Aladino)
before those scores stand for the result: lower-variance, and five times more playouts."""
DEFAULT_MOVE_MS = 1000.0
"""The budget of a decision given without its deadline (in-process, e.g. bots.python.arena)."""
SAFETY_MS = 100.0
"""The least time left before a decision's deadline: for the answer's way back and a loaded
machine's pauses (the process descheduled for tens of ms)."""
Action = Mapping[str, Any]


def action_key(action: Action) -> bytes:
    """The same bytes for equal actions, whatever their key order."""
    return orjson.dumps(action, option=orjson.OPT_SORT_KEYS)


@dataclass
class Outcome:
    """What a finished playout is worth to each seat: its rank part in [0, 1] (1: alone
    first) and its score margin over the best other seat (solo: its score)."""

    rank: list[float]
    margin: list[float]

    @classmethod
    def of(cls, result: Mapping[str, Any]) -> Outcome:
        ranks, scores = result["ranks"], result["scores"]
        seats = len(scores)
        if seats == 1:
            return cls([0.0], [float(scores[0])])
        rank = [(seats - r) / (seats - 1) for r in ranks]
        margin = [float(s - max(o for j, o in enumerate(scores) if j != i))
                  for i, s in enumerate(scores)]
        return cls(rank, margin)

    @classmethod
    def of_scores(cls, scores: list[float]) -> Outcome:
        """As if the game ended with these scores (competition ranks: ties share)."""
        return cls.of({"scores": scores,
                       "ranks": [1 + sum(other > score for other in scores) for score in scores]})


class Bounds:
    """The lowest and highest margin seen in a search, to bring margins into [0, 1]."""

    def __init__(self) -> None:
        self.low, self.high = math.inf, -math.inf

    def widen(self, margins: list[float]) -> None:
        self.low, self.high = min(self.low, *margins), max(self.high, *margins)

    def normalise(self, margin: float) -> float:
        return (margin - self.low) / (self.high - self.low) if self.high > self.low else 0.5


class Node:
    """A move in the tree: the seat that made it, how often it was chosen (`visits`) and
    available (`available`), the rewards it earned that seat, and the moves after it."""

    __slots__ = ("action", "available", "children", "greedy", "margin_sum", "order",
                 "rank_sum", "seat", "visits")

    def __init__(self, action: Action, seat: int | None) -> None:
        self.action, self.seat = action, seat
        self.visits, self.available = 0, 0
        self.rank_sum = self.margin_sum = 0.0
        self.children: dict[bytes, Node] = {}
        self.greedy: bytes | None = None  # the greedy bot's move here, once asked
        self.order = 0.0  # its place among its parent's moves (the greedy one: -1)

    def value(self, bounds: Bounds, margin_weight: float) -> float:
        rank, margin = self.rank_sum / self.visits, self.margin_sum / self.visits
        return (1 - margin_weight) * rank + margin_weight * bounds.normalise(margin)

    def credit(self, outcome: Outcome) -> None:
        self.visits += 1
        if self.seat is not None:
            self.rank_sum += outcome.rank[self.seat]
            self.margin_sum += outcome.margin[self.seat]


class Search:
    """One decision's search: iterations until `stop` (monotonic seconds) or a count."""

    def __init__(self, observation: dict, legal_actions: Sequence[Action],
                 rng: random.Random) -> None:
        self.game = engines.get(observation["game"])
        self.observation, self.legal = observation, legal_actions
        self.rng, self.exploration = rng, EXPLORATION
        self.policy = playout_policies.policy(self.game.name)
        self.root = Node({}, None)
        self.bounds = Bounds()
        self.iterations = 0
        self.seeds: list[int] = []
        solo = self.game.seats(self.game.determinize(observation, 0)) == 1
        self.horizon = HORIZON if isinstance(observation.get("scores"), list) else None
        # Solo, the score is all; a few moves on, who leads rarely changes: the margin is all.
        self.margin_weight = 1.0 if solo or self.horizon else MARGIN_WEIGHT

    def run(self, stop: float = math.inf, iterations: int | None = None) -> None:
        while (iterations is None or self.iterations < iterations) and (
                time.monotonic() < stop):
            if not self.iterate(stop):
                return
            self.iterations += 1

    def iterate(self, stop: float) -> bool:
        """One iteration: a root move, a determinization (the move's n-th visit: the n-th
        seed), the descent while nodes have EXPAND_AFTER visits, and a playout; False when
        `stop` came during the playout (its result is dropped)."""
        node = self.select(self.root, self.observation["seat"], self.legal, None)
        state = self.game.determinize(self.observation, self.seed(node.visits))
        state = self.game.apply(state, node.action)
        path = [self.root, node]
        while node.visits >= EXPAND_AFTER and not self.game.is_over(state):
            seat = self.game.current_seat(state)
            node = self.select(node, seat, self.game.legal_actions(state), state)
            path.append(node)
            state = self.game.apply(state, node.action)
        outcome = self.playout(state, stop)
        if outcome is None:
            return False
        self.bounds.widen(outcome.margin)
        for visited in path:
            visited.credit(outcome)
        return True

    def seed(self, index: int) -> int:
        """The `index`-th determinization seed of this search."""
        while len(self.seeds) <= index:
            self.seeds.append(self.rng.randrange(2**63))
        return self.seeds[index]

    def select(self, node: Node, seat: int | None, legal: Sequence[Action],
               state: dict | None) -> Node:
        """The child to follow among the moves legal here (in this determinization), each
        counted available. `state` None: the root, seen as the observation."""
        if node.greedy is None:
            view = self.observation if state is None else self.game.observation(state, seat)
            node.greedy = self.greedy_key(view, legal)
        children = [self.child(node, action, seat) for action in legal]
        for child in children:
            child.available += 1
        if state is None:
            return self.root_choice(children, node.visits)
        return self.tree_choice(children)

    def root_choice(self, children: list[Node], visits: int) -> Node:
        """UCB1 among the first max(MIN_WIDTH, sqrt(visits + 1)) moves in the root's order
        (the greedy move, then the others shuffled); an untried one of those first."""
        width = max(MIN_WIDTH, math.ceil(math.sqrt(visits + 1)))
        if len(children) > width:
            children = sorted(children, key=lambda c: c.order)[:width]
        untried = [c for c in children if not c.visits]
        if untried:
            return min(untried, key=lambda c: c.order)
        return max(children, key=lambda c: c.value(self.bounds, self.margin_weight)
                   + self.exploration * math.sqrt(math.log(c.available) / c.visits))

    def tree_choice(self, children: list[Node]) -> Node:
        """PUCT over availability counts, the greedy move's prior GREEDY_PRIOR; an untried
        move starts at the visit-weighted mean of the tried ones."""
        share = (1 - GREEDY_PRIOR) / len(children) if any(
            c.order < 0 for c in children) else 1 / len(children)
        tried = [c for c in children if c.visits]
        visits = sum(c.visits for c in tried)
        start = sum(c.value(self.bounds, self.margin_weight) * c.visits
                    for c in tried) / visits if visits else 0.5

        def score(child: Node) -> float:
            prior = share + (GREEDY_PRIOR if child.order < 0 else 0.0)
            value = child.value(self.bounds, self.margin_weight) if child.visits else start
            return value + PUCT_C * prior * math.sqrt(child.available) / (1 + child.visits)

        return max(children, key=score)

    def child(self, node: Node, action: Action, seat: int | None) -> Node:
        """The node's child for `action`, made on first sight with its place in the order
        (`order`): the greedy move first (-1, its mark), then at random."""
        key = action_key(action)
        found = node.children.get(key)
        if found is None:
            found = node.children[key] = Node(action, seat)
            found.order = -1.0 if key == node.greedy else self.rng.random()
        return found

    def greedy_key(self, view: dict, legal: Sequence[Action]) -> bytes:
        """The key of the greedy bot's move seen from `view` (a random move without a bot)."""
        if self.policy is None:
            return action_key(self.rng.choice(legal))
        return action_key(self.policy(view, legal))

    def playout(self, state: dict, stop: float) -> Outcome | None:
        """The game played to its end by the greedy bot in every seat (random moves without
        one), or for a game whose observations show running scores, HORIZON moves on and
        judged by those scores; None when `stop` comes first."""
        game, moves = self.game, 0
        while not game.is_over(state):
            if moves == self.horizon:
                return Outcome.of_scores(game.observation(state, None)["scores"])
            if time.monotonic() >= stop:
                return None
            moves += 1
            if self.policy is None:
                action = self.rng.choice(game.legal_actions(state))
            else:
                view = game.observation(state, game.current_seat(state))
                action = self.policy(view, view["legal_actions"])
            state = game.apply(state, action)
        return Outcome.of(game.result(state))

    def best(self) -> Action:
        """The root's most visited move (the better valued on a tie); the greedy move
        before any iteration."""
        keyed = [(action_key(action), action) for action in self.legal]
        tried = [self.root.children[k] for k, _ in keyed
                 if k in self.root.children and self.root.children[k].visits]
        if not tried:  # no time for a single iteration
            return self.policy(self.observation, self.legal) if self.policy else self.legal[0]
        return max(tried, key=lambda n: (n.visits, n.value(self.bounds, self.margin_weight))
                   ).action


def think_ms(decision: dict | None, move_ms: float | None) -> float:
    """The decision's budget: most of its deadline or of its clock's share
    (`sdk.budget_ms`), never within SAFETY_MS of its deadline, at most `move_ms`;
    `move_ms` (else DEFAULT_MOVE_MS) in-process."""
    if decision is None or "deadline_ms" not in decision:
        return DEFAULT_MOVE_MS if move_ms is None else move_ms
    deadline = (decision.get("clock") or decision)["deadline_ms"]
    budget = max(min(budget_ms(decision), deadline - SAFETY_MS), 0.0)
    return budget if move_ms is None else min(budget, move_ms)


class CollectorPause:
    """Python's cyclic garbage collector held off while any search runs (its full passes
    over a grown tree took 15-50 ms, past a search's stop); the tree, without cycles, is
    freed by reference counting before the collector runs again. Counted, for the threads
    of a bot answering several matches at once."""

    def __init__(self) -> None:
        self.lock, self.searches, self.was_enabled = threading.Lock(), 0, False

    def __enter__(self) -> None:
        with self.lock:
            if not self.searches:
                self.was_enabled = gc.isenabled()
                gc.disable()
            self.searches += 1

    def __exit__(self, *exc_info: object) -> None:
        with self.lock:
            self.searches -= 1
            if not self.searches and self.was_enabled:
                gc.enable()


COLLECTOR_PAUSE = CollectorPause()


class IsmctsBot:
    """The searching bot: `iterations` per decision (never past its deadline), else as many
    as its time allows (`think_ms`). Its generator is seeded by `seed` and the observation,
    so a fixed count gives the same move for the same decision."""

    def __init__(self, seed: int | None = None, iterations: int | None = None,
                 move_ms: float | None = None) -> None:
        self.seed, self.iterations, self.move_ms = seed, iterations, move_ms

    def choose(self, observation: dict, legal_actions: list[dict],
               decision: dict | None = None) -> dict:
        """The move alone (what bots.python.arena plays)."""
        return self.answer(observation, legal_actions, decision).action

    def answer(self, observation: dict, legal_actions: list[dict],
               decision: dict | None = None) -> Answer:
        """The move, with the iterations and time it took in `info` (what `serve` sends)."""
        started = time.monotonic()
        if len(legal_actions) == 1:
            return Answer(legal_actions[0], info={"iterations": 0})
        budget = think_ms(decision, self.move_ms)
        unbounded = self.iterations is not None and decision is None
        stop = math.inf if unbounded else started + budget / 1000
        rng = random.Random(action_key({"seed": self.seed, "observation": observation}))
        with COLLECTOR_PAUSE:
            action, iterations = searched_move(observation, legal_actions, rng, stop,
                                               self.iterations)
        spent = (time.monotonic() - started) * 1000
        return Answer(dict(action), debug=f"{iterations} iterations in {spent:.0f} ms",
                      info={"iterations": iterations, "spent_ms": round(spent, 1),
                            "budget_ms": None if unbounded else round(budget, 1)})


def searched_move(observation: dict, legal_actions: Sequence[Action], rng: random.Random,
                  stop: float, iterations: int | None) -> tuple[Action, int]:
    """The search's move and its iteration count; its tree is freed on return."""
    search = Search(observation, legal_actions, rng)
    search.run(stop, iterations)
    return search.best(), search.iterations


def make_choose(seed: int | None = None) -> Choose:
    """The chooser with its default time (bots.python.arena's interface)."""
    return IsmctsBot(seed).choose


def main(argv: list[str] | None = None) -> int:
    parser = bot_arguments("an information-set MCTS bot for any game")
    parser.add_argument("--move-ms", type=float, default=None,
                        help="think at most this long per decision (default: most of its "
                             "deadline or clock share)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="a fixed count of iterations per decision (reproducible)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    bot = IsmctsBot(args.seed, args.iterations, args.move_ms)
    if args.stdio:
        serve_stdio(bot.answer)
    else:
        serve(bot.answer, args.port, args.host, args.verbose)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

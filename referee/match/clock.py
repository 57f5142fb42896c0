"""Time controls (issue 26, a public contract): a chess clock per seat, and what each
decision may take.

    time_control = {"base_ms", "increment_ms", "max_move_ms" (null: none),
                    "first_move_ms" (default 0), "overdraft_ms" (default 0)}

Every seat starts with `base_ms` on its clock and `overdraft_ms` in its bank (Kaggle's
overage). A decision may take `deadline_ms` = remaining + bank, capped by `max_move_ms`,
plus `first_move_ms` on the seat's first decision. The time it took (`elapsed_ms`, as the
bot client measured it: see `referee.match.botclient`) is charged to `first_move_ms` first
(the first decision only), then to the clock, then to the bank; the increment is added
after every move. A decision over its deadline is a `timeout` (the failure policy applies);
its seat's clock and bank are then empty until increments come.

The clocks are a pure function of the time control and the recorded steps (`Clocks.replay`),
so a resumed match continues them exactly and a verifier checks every step's `clock`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any, TypedDict

from referee.errors import RefereeError

MAX_CLOCK_MS = 24 * 3600 * 1000  # a day: base, bank and first-move allowance each


class ClockRecord(TypedDict):
    """A step's `clock`: every seat's clock and bank after the move (increment added)."""

    remaining_ms: list[float]
    overdraft_ms: list[float]


class ClockPayload(TypedDict):
    """A decision's `clock`: the seats' clocks and banks, and what this decision may take."""

    remaining_ms: list[float]
    increment_ms: int
    overdraft_ms: list[float]
    deadline_ms: int


class TimeControlError(RefereeError, ValueError):
    """A time control that does not make sense; the message says which field."""


@dataclass(frozen=True)
class TimeControl:
    base_ms: int
    increment_ms: int = 0
    max_move_ms: int | None = None
    first_move_ms: int = 0
    overdraft_ms: int = 0

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if value is None and item.name == "max_move_ms":
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not (
                    0 <= value <= MAX_CLOCK_MS):
                raise TimeControlError(f"{item.name} must be an integer of 0 to "
                                       f"{MAX_CLOCK_MS} ms")
        if self.base_ms + self.first_move_ms + self.overdraft_ms <= 0:
            raise TimeControlError("base_ms, first_move_ms and overdraft_ms give no time at "
                                   "all for a first decision")
        if self.max_move_ms == 0:
            raise TimeControlError("max_move_ms must be positive (or null: no cap)")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> TimeControl | None:
        """From a stored or submitted time control (None: no clock)."""
        if data is None:
            return None
        try:
            return cls(**data)
        except TypeError as error:
            raise TimeControlError(str(error)) from None

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """A command line's time control: `BASE+INCREMENT` in ms (`2000+100`), or the JSON
        object of the API (`{"base_ms": 2000, "first_move_ms": 5000}`)."""
        text = text.strip()
        try:
            if text.startswith("{"):
                control = cls.from_dict(json.loads(text))
            else:
                base, _, increment = text.partition("+")
                control = cls(int(base), int(increment or 0))
        except (ValueError, TypeError) as error:
            raise TimeControlError(f"{text!r} is not a time control (BASE+INCREMENT ms, or "
                                   f"a JSON object): {error}") from None
        if control is None:
            raise TimeControlError("a time control is needed, not null")
        return control

    def to_dict(self) -> dict[str, int | None]:
        return {item.name: getattr(self, item.name) for item in fields(self)}


@dataclass
class Clocks:
    """Every seat's clock, bank and whether it has decided yet, under one time control."""

    control: TimeControl
    remaining: list[float]
    bank: list[float]
    decided: list[bool]

    @classmethod
    def start(cls, control: TimeControl, seats: int) -> Clocks:
        return cls(control, [float(control.base_ms)] * seats,
                   [float(control.overdraft_ms)] * seats, [False] * seats)

    @classmethod
    def replay(cls, control: TimeControl, seats: int,
               steps: Iterable[Mapping[str, Any]]) -> Clocks:
        """The clocks after `steps`, charged again from their `elapsed_ms`."""
        clocks = cls.start(control, seats)
        for step in steps:
            clocks.charge(step["seat"], step["elapsed_ms"])
        return clocks

    def deadline_ms(self, seat: int) -> int:
        """What the seat's next decision may take, in whole milliseconds."""
        allowance = self.remaining[seat] + self.bank[seat]
        if self.control.max_move_ms is not None:
            allowance = min(allowance, self.control.max_move_ms)
        first = 0 if self.decided[seat] else self.control.first_move_ms
        return max(int(allowance + first), 0)

    def charge(self, seat: int, elapsed_ms: float) -> bool:
        """Charge one decision of `seat` that took `elapsed_ms`, add the increment; True when
        it ran over its deadline (a timeout: the seat's clock and bank are then empty)."""
        over = elapsed_ms > self.deadline_ms(seat)
        spent = elapsed_ms - (0 if self.decided[seat] else self.control.first_move_ms)
        self.decided[seat] = True
        if over:
            self.remaining[seat] = self.bank[seat] = 0.0
        elif spent > 0:
            from_clock = min(spent, self.remaining[seat])
            self.remaining[seat] -= from_clock
            self.bank[seat] = max(self.bank[seat] - (spent - from_clock), 0.0)
        self.remaining[seat] = round(self.remaining[seat] + self.control.increment_ms, 3)
        self.bank[seat] = round(self.bank[seat], 3)
        return over

    def snapshot(self) -> dict[str, list[Any]]:
        """Everything the clocks are, as JSON (`from_snapshot` reads it back)."""
        return {"remaining_ms": list(self.remaining), "overdraft_ms": list(self.bank),
                "decided": list(self.decided)}

    @classmethod
    def from_snapshot(cls, control: TimeControl, seats: int,
                      snapshot: Mapping[str, Any] | None) -> Clocks:
        """The clocks of a snapshot; the starting clocks for None (no move yet)."""
        if snapshot is None:
            return cls.start(control, seats)
        return cls(control, list(snapshot["remaining_ms"]), list(snapshot["overdraft_ms"]),
                   list(snapshot["decided"]))

    def record(self) -> ClockRecord:
        return {"remaining_ms": list(self.remaining), "overdraft_ms": list(self.bank)}

    def payload(self, seat: int) -> ClockPayload:
        return {"remaining_ms": list(self.remaining), "increment_ms": self.control.increment_ms,
                "overdraft_ms": list(self.bank), "deadline_ms": self.deadline_ms(seat)}

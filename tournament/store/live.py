"""What the API's live event streams read: a match and its new steps, and the pub/sub
connection its channels are heard on (`keys.events_channel`, `tournament_events_channel`,
`ratings_events_channel`)."""

from __future__ import annotations

from typing import Any

import redis

from referee.match.replay import StepRecord
from tournament.store.base import StoreBase
from tournament.store.codec import loads
from tournament.store.keys import MatchPart, match_key
from tournament.store.matches import match_fields


class Channels(StoreBase):
    """The reads of a stream and its subscriptions."""

    def subscriber(self) -> redis.client.PubSub:
        """A pub/sub connection of this store's client."""
        return self.redis.pubsub()

    def steps_after(self, match_id: str, known: int
                    ) -> tuple[dict[str, Any], list[StepRecord]]:
        """The match (empty when there is none) and its recorded steps after the first
        `known`, in one transaction: the driver's last write stores the replay and drops
        the steps list at once, so a finished match has no steps list but its replay."""
        with self.redis.pipeline(transaction=True) as pipe:
            pipe.hgetall(match_key(match_id))
            pipe.lrange(match_key(match_id, MatchPart.STEPS), known, -1)
            fields, new_steps = pipe.execute()
        return match_fields(fields) or {}, [loads(raw) for raw in new_steps]

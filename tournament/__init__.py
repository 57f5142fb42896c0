"""Tournaments on rq workers: the Redis store, the match job, pairing and ratings."""

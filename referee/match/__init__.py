"""The match core: one match played, recorded, sealed and verified, with no Flask and no Redis."""

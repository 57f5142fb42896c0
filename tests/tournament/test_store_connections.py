"""The API's Redis client under many requests at once: each may block in a wait for its
move (`Store.wait_applied`, up to `move_wait_s`), and an API process serves up to
`--worker-connections` (1,000) of them. redis-py's default pool fails the 101st
("Too many connections"), which the API would answer 503."""

from __future__ import annotations

import threading

from tournament.store import Store

WAITERS = 150


def test_more_blocked_waits_than_redis_pys_default_pool_all_get_their_answer(redis_url):
    store = Store.from_url(redis_url)
    answers: list[object] = []
    errors: list[Exception] = []
    started = threading.Barrier(WAITERS + 1)

    def wait(n: int) -> None:
        started.wait()
        try:
            answers.append(store.redis.blpop([f"test:wait:{n}"], timeout=2))
        except Exception as error:  # noqa: BLE001 - what the waiter got is the result
            errors.append(error)

    threads = [threading.Thread(target=wait, args=(n,)) for n in range(WAITERS)]
    for thread in threads:
        thread.start()
    started.wait()
    for n in range(WAITERS):
        store.redis.rpush(f"test:wait:{n}", "moved")
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(answers) == sorted((f"test:wait:{n}".encode(), b"moved")
                                     for n in range(WAITERS))

"""The bridge's log folder (referee/bridge/logs.py): past its budget, the logs of the
sessions that ended longest ago are removed; a log in play never is."""

import os

from referee.bridge.logs import LogFolder, log_name


def write(path, size: int, mtime_s: int | None = None):
    path.write_bytes(b"x" * size)
    if mtime_s is not None:
        os.utime(path, (mtime_s, mtime_s))
    return path


def ended(folder: LogFolder, match_id: str, size: int):
    path = folder.take(match_id, 0)
    write(path, size)
    folder.release(path)
    return path


def test_past_the_budget_the_logs_that_ended_first_are_removed(tmp_path):
    folder = LogFolder(tmp_path, budget=2500)
    folder.open()
    logs = [ended(folder, f"m{n}", 1000) for n in range(5)]
    assert [log.exists() for log in logs] == [False, False, False, True, True]
    assert folder.total == 2000


def test_the_logs_already_there_count_oldest_first_by_their_last_write(tmp_path):
    newest = write(tmp_path / "a-seat0.log", 1000, mtime_s=3_000_000)
    oldest = write(tmp_path / "b-seat0.log", 1000, mtime_s=1_000_000)
    middle = write(tmp_path / "c-seat1.log", 1000, mtime_s=2_000_000)
    other = write(tmp_path / "notes.txt", 5000, mtime_s=1)  # not a log: never touched
    mine = write(tmp_path / "syslog.log", 5000, mtime_s=1)  # not named as the bridge names
    folder = LogFolder(tmp_path, budget=2000)
    folder.open()
    assert not oldest.exists() and middle.exists() and newest.exists()
    assert other.exists() and mine.exists()
    ended(folder, "d", 500)
    assert not middle.exists() and newest.exists()


def test_a_log_in_play_is_never_removed_and_counts_again_once_it_ends(tmp_path):
    folder = LogFolder(tmp_path, budget=1500)
    folder.open()
    first = ended(folder, "m1", 1000)
    again = folder.take("m1", 0)  # its match goes on: a later decision after a retirement
    assert again == first
    write(again, 3000)
    ended(folder, "m2", 1000)
    assert again.exists()  # in play, over the budget alone
    second_session = folder.take("m1", 0)  # a second session of the same file
    folder.release(again)
    assert again.exists() and folder.total == 1000
    folder.release(second_session)
    assert again.exists() and folder.total == 3000  # the one that ended last stays...
    assert not (tmp_path / "m2-seat0.log").exists()  # ...the older go, to the budget or it


def test_a_budget_of_zero_keeps_every_log(tmp_path):
    folder = LogFolder(tmp_path, budget=0)
    folder.open()
    logs = [ended(folder, f"m{n}", 10_000) for n in range(4)]
    assert all(log.exists() for log in logs) and folder.total == 40_000


def test_a_session_that_wrote_nothing_is_harmless(tmp_path):
    folder = LogFolder(tmp_path, budget=100)
    folder.open()
    folder.release(folder.take("never-started", 0))
    assert folder.total == 0 and not list(tmp_path.iterdir())


def test_a_symlink_or_a_folder_named_like_a_log_is_left_alone(tmp_path):
    target = write(tmp_path / "precious.txt", 10)
    (tmp_path / "link-seat0.log").symlink_to(target)
    (tmp_path / "dir-seat0.log").mkdir()
    folder = LogFolder(tmp_path, budget=1)
    folder.open()
    ended(folder, "m", 100)
    assert target.exists() and (tmp_path / "link-seat0.log").is_symlink()
    assert (tmp_path / "dir-seat0.log").is_dir()


def test_a_log_name_keeps_only_safe_characters():
    assert log_name("../../etc/passwd", 1) == "_.._etc_passwd-seat1.log"
    assert log_name("...", 0) == "match-seat0.log"


def test_the_log_that_ended_last_stays_even_alone_past_the_budget(tmp_path):
    folder = LogFolder(tmp_path, budget=100)
    folder.open()
    first = ended(folder, "m1", 1000)
    assert first.exists()
    second = ended(folder, "m2", 1000)
    assert not first.exists() and second.exists() and folder.total == 1000

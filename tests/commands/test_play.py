"""`referee play`: a local match between bots at their URLs, each move printed, no Redis."""

import json
import shlex
from pathlib import Path

import pytest

from bots.python import aladino_bot, aldabas_bot
from referee.cli import main
from referee.match.sealing import SigningKey, append_new_key, b64url, hmac_key_id
from tests.support.bot_servers import stdio_program
from tests.support.updates import clocks_before, expected_updates


def test_play_prints_every_move_and_the_result(python_bot, node_bot_url, capsys, tmp_path):
    replay_file = tmp_path / "replay.json"
    with python_bot(aladino_bot.make_choose()) as url:
        status = main(["play", "--game", "aladino", "--bot", url, "--bot", node_bot_url,
                       "--seed", "5", "--replay", str(replay_file)])
    out = capsys.readouterr().out
    record = json.loads(replay_file.read_text())
    assert status == 0, out
    assert out.count("\nstep ") + out.startswith("step ") == len(record["steps"])
    assert f"game over after {len(record['steps'])} decisions" in out
    for seat, score in enumerate(record["result"]["scores"]):
        assert f"seat {seat} " in out and f"score {score}," in out


def test_play_reports_a_bot_that_is_not_there_as_a_forfeit(python_bot, capsys):
    with python_bot(aladino_bot.make_choose()) as url:
        status = main(["play", "--game", "aladino", "--bot", url,
                       "--bot", "http://127.0.0.1:9/", "--quiet"])
    out = capsys.readouterr().out
    assert status == 1
    assert "seat 1 forfeited at step 1 (crash: connection error" in out
    assert not any(line.startswith("step ") for line in out.splitlines())


def test_play_refuses_options_the_game_does_not_take(python_bot, capsys):
    with python_bot(aladino_bot.make_choose()) as url:
        status = main(["play", "--game", "aladino", "--bot", url, "--bot", url,
                       "--options", '{"speed": 2}'])
    assert status == 2
    assert "takes no options" in capsys.readouterr().err


def test_one_bot_of_aldabas_plays_the_solo_mode(python_bot, capsys, tmp_path):
    """Issue 15.6: one --bot of Aldabas needs no --options: its one-player setup is solo."""
    replay_file = tmp_path / "solo.json"
    with python_bot(aldabas_bot.make_choose(1)) as url:
        status = main(["play", "--game", "aldabas", "--bot", url, "--replay", str(replay_file)])
    out = capsys.readouterr().out
    record = json.loads(replay_file.read_text())
    assert status == 0, out
    assert record["num_players"] == 1 and record["options"]["mode"] == "solo"
    assert out.startswith("aldabas ") and '"mode": "solo"' in out.splitlines()[0]


def test_a_setup_the_game_lacks_is_refused_naming_its_setups(python_bot, capsys):
    with python_bot(aldabas_bot.make_choose(1)) as url:
        status = main(["play", "--game", "aldabas", "--bot", url, "--options",
                       '{"mode": "multi"}'])
    err = capsys.readouterr().err
    assert status == 2
    assert "not 1" in err and '1 player with options {"mode": "solo"}' in err


def test_a_seed_beyond_2_to_the_53_is_refused(capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["play", "--game", "aladino", "--bot", "http://127.0.0.1:9/",
              "--seed", str(2**53)])
    assert stopped.value.code == 2
    assert "0 to 2**53 - 1 = 9007199254740991" in capsys.readouterr().err


def test_with_a_key_file_local_replays_are_signed_with_its_key_and_verify_with_its_public_half(
        python_bot, capsys, monkeypatch, tmp_path):
    key_file, replay = tmp_path / "keys.pem", tmp_path / "signed.json"
    key = append_new_key(key_file)
    monkeypatch.setenv("REFEREE_SIGNING_KEY_FILE", str(key_file))
    with python_bot(aladino_bot.make_choose()) as url:
        _play_to(replay, url)
    assert f"(signed with key {key.key_id})" in capsys.readouterr().out
    record = json.loads(replay.read_text())
    assert record["signature"]["algorithm"] == "ed25519"
    keys = tmp_path / "keys.json"
    keys.write_text(json.dumps({"keys": [{"key_id": key.key_id, "algorithm": "ed25519",
                                          "public_key": b64url(key.public_raw),
                                          "not_before": "2026-01-01", "not_after": None}]}))
    monkeypatch.delenv("REFEREE_SECRET", raising=False)
    assert main(["verify", str(replay), "--keys", str(keys)]) == 0
    assert "signature: valid" in capsys.readouterr().out
    other, stranger = tmp_path / "other.json", SigningKey.generate()
    other.write_text(json.dumps({"keys": [{"key_id": stranger.key_id, "algorithm": "ed25519",
                                           "public_key": b64url(stranger.public_raw),
                                           "not_before": "2026-01-01", "not_after": None}]}))
    assert main(["verify", str(replay), "--keys", str(other)]) == 5


def _play_to(path: Path, url: str) -> None:
    status = main(["play", "--game", "aladino", "--bot", url, "--bot", url, "--quiet",
                   "--replay", str(path)])
    assert status == 0


def test_local_replays_are_signed_with_the_secret_and_verify_tells_why_not(
        python_bot, capsys, monkeypatch, tmp_path):
    """Issue 15.7: with REFEREE_SECRET, `play` signs and `verify` says VALID; an unsigned
    replay, a changed one and one signed with another key each get their own verdict and
    exit status."""
    signed, unsigned = tmp_path / "signed.json", tmp_path / "unsigned.json"
    monkeypatch.delenv("REFEREE_SIGNING_KEY_FILE")
    with python_bot(aladino_bot.make_choose()) as url:
        monkeypatch.delenv("REFEREE_SECRET", raising=False)
        _play_to(unsigned, url)
        assert "(unsigned: neither REFEREE_SIGNING_KEY_FILE nor" in capsys.readouterr().out
        monkeypatch.setenv("REFEREE_SECRET", "local-secret")
        _play_to(signed, url)
        assert f"(signed with key {hmac_key_id('local-secret')})" in capsys.readouterr().out

    def verdict(path: Path, *extra: str) -> tuple[int, str]:
        status = main(["verify", str(path), *extra])
        return status, capsys.readouterr().out.rstrip().splitlines()[-1]

    assert verdict(signed) == (0, "VALID")
    status, last = verdict(unsigned)
    assert status == 4 and last.startswith("UNSIGNED: the record is consistent")
    assert verdict(signed, "--key", "another-secret")[0] == 5
    record = json.loads(signed.read_text())
    record["finished_at"] = "2000-01-01T00:00:00.000Z"
    signed.write_text(json.dumps(record))
    status, last = verdict(signed)
    assert status == 3 and last.startswith("BAD SIGNATURE: ")
    record["steps"][0]["state_hash"] = "0" * 64
    signed.write_text(json.dumps(record))
    assert verdict(signed) == (1, "INVALID")
    monkeypatch.delenv("REFEREE_SECRET")
    status, last = verdict(unsigned)
    assert status == 0 and last == "VALID", "no key at hand: consistent is valid, as before"


def test_play_on_a_clock_with_updates_tells_a_stdin_program_and_charges_it(capsys, tmp_path):
    """`--time-control` and `--updates` through `cmd:` (a stdin program behind the local
    bridge): every decision line carries the replay's clock, and the program read its
    updates as lines it did not answer (issue 26)."""
    lines, replay_file = tmp_path / "lines.jsonl", tmp_path / "replay.json"
    program = shlex.join(stdio_program("record", str(lines)))
    status = main(["play", "--game", "aladino", "--bot", f"cmd:{program}",
                   "--bot", f"cmd:{shlex.join(stdio_program('first'))}", "--seed", "4",
                   "--time-control", "30000+100", "--updates", "--quiet",
                   "--replay", str(replay_file)])
    assert status == 0, capsys.readouterr().out
    record = json.loads(replay_file.read_text())
    assert all(step["fault"] is None for step in record["steps"])
    heard = [json.loads(line) for line in lines.read_text().splitlines()
             if line and line != "EOF"]
    decisions = [line for line in heard if line["type"] == "decision"]
    assert decisions and all(line["clock"] == clocks_before(record, line["step"])
                             for line in decisions)
    assert [line for line in heard if line["type"] == "update"] == expected_updates(record, 0)

"""The bridge (issue 18) seen from the referee: a stdin/stdout program behind it answers
decisions over real HTTP on loopback, its faults come out as an HTTP bot's fault codes
when the referee's own client (`BotClient`) judges them, the result notice reaches the
program, signatures are checked, and hostile programs do not bring the bridge down.

The programs are real processes (tests/support/stdio_program.py); the bridge runs in a
thread of the test process. Waits poll with long overall timeouts, never assert timing."""

import asyncio
import json
import os
import secrets
import shlex
import socket
import time

import pytest
import requests

from referee.match.botclient import BotClient, Fault
from referee.match.signing import HEADER, signature_header
from tests.support.procfs import daemons, kill_all, processes

SLOW_MACHINE_S = 60


def decision(match_id="m1", seat=0, step=0, deadline_ms=10000, **extra) -> dict:
    """A decision whose one legal action names its step, so an answer shows which
    decision it answers."""
    return {"protocol": "referee/1", "type": "decision", "match_id": match_id, "seat": seat,
            "step": step, "deadline_ms": deadline_ms, "observation": {"step": step},
            "legal_actions": [{"type": "echo", "step": step}], **extra}


def result_notice(match_id="m1", seat=0) -> dict:
    return {"protocol": "referee/1", "type": "result", "match_id": match_id, "game": "aladino",
            "seat": seat, "result": {"scores": [3, 1], "ranks": [1, 2]},
            "replay_url": f"http://127.0.0.1:8000/matches/{match_id}/replay"}


def ask(url: str, payload: dict):
    """What the referee's push client makes of the bridge's answer to `payload`."""
    async def once():
        client = BotClient(url, payload["deadline_ms"])
        try:
            return await client.decide(payload)
        finally:
            await client.aclose()

    return asyncio.run(once())


def wait_until(condition, what: str, timeout: float = SLOW_MACHINE_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"still waiting after {timeout} s for {what}")


def log_text(tmp_path, match_id="m1", seat=0) -> str:
    path = tmp_path / "logs" / f"{match_id}-seat{seat}.log"
    return path.read_text() if path.exists() else ""


# ----- decisions ------------------------------------------------------------------------------
def test_a_decision_is_one_stdin_line_and_the_answer_line_is_the_action(stdio_bot, program,
                                                                        tmp_path):
    record = tmp_path / "record.txt"
    body = json.dumps(decision(step=4), indent=2)  # line breaks: sent as one line
    with stdio_bot(program("record", str(record))) as url:
        reply = requests.post(url, data=body, timeout=SLOW_MACHINE_S)
        again = ask(url, decision(step=5))
    assert reply.status_code == 200
    assert reply.json() == {"action": {"type": "echo", "step": 4}}
    assert again.fault is None and again.action == {"type": "echo", "step": 5}
    lines = record.read_text().splitlines()
    assert json.loads(lines[0]) == decision(step=4) and len(lines) >= 2
    assert "started pid" in log_text(tmp_path)


def test_one_program_per_match_and_seat_kept_for_the_whole_match(stdio_bot, program,
                                                                tmp_path):
    with stdio_bot(program("first")) as url:
        for step in range(3):
            for match_id, seat in (("a", 0), ("a", 1), ("b", 0)):
                reply = ask(url, decision(match_id, seat, step))
                assert reply.action == {"type": "echo", "step": step}
        status = requests.get(url, timeout=SLOW_MACHINE_S).json()
    assert status["programs"] == 3
    for match_id, seat in (("a", 0), ("a", 1), ("b", 0)):
        assert log_text(tmp_path, match_id, seat).count("started pid") == 1


def update(match_id="m1", seat=0, step=0) -> dict:
    return {"protocol": "referee/1", "type": "update", "match_id": match_id, "seat": seat,
            "step": step, "events": [{"event": "moved", "step": step}], "clock": None}


def test_an_update_is_a_line_the_program_does_not_answer(stdio_bot, program, tmp_path):
    """Issue 26: an update is answered 200 by the bridge at once and written to the program
    (started for it when it comes before the first decision); the answers to the decisions
    around it are still theirs."""
    record = tmp_path / "record.txt"
    with stdio_bot(program("record", str(record))) as url:
        told = requests.post(url, json=update(step=0), timeout=SLOW_MACHINE_S)
        first = ask(url, decision(step=1))
        async def update_then_decide():
            client = BotClient(url)
            try:
                client.update(update(step=2))
                client.update(update(step=3))
                return await client.decide(decision(step=4))
            finally:
                await client.aclose()
        then = asyncio.run(update_then_decide())
        refused = requests.post(url, json={**update(), "type": "gossip"}, timeout=SLOW_MACHINE_S)
    assert told.status_code == 200 and told.json() == {}
    assert first.fault is None and first.action == {"type": "echo", "step": 1}
    assert then.fault is None and then.action == {"type": "echo", "step": 4}
    lines = [json.loads(line) for line in record.read_text().splitlines() if line != "EOF"]
    assert [(line["type"], line["step"]) for line in lines] == [
        ("update", 0), ("decision", 1), ("update", 2), ("update", 3), ("decision", 4)]
    assert lines[0] == update(step=0)
    assert refused.status_code == 400 and "update" in refused.json()["error"]


# ----- faults ---------------------------------------------------------------------------------
def test_a_program_that_dies_is_a_crash_for_the_rest_of_its_match_only(stdio_bot, program,
                                                                      tmp_path):
    with stdio_bot(program("die-at", "2")) as url:
        assert ask(url, decision(step=0)).fault is None
        died = ask(url, decision(step=1))
        later = ask(url, decision(step=2))
        other_match = ask(url, decision("m2", step=0))
    assert died.fault == Fault.CRASH and "exited with code 3" in died.raw
    assert later.fault == Fault.CRASH and "exited with code 3" in later.raw
    assert other_match.fault is None, "a new match gets a new program"
    log = log_text(tmp_path)
    assert "dying on purpose" in log and "crash: the program exited with code 3" in log


def test_a_line_that_is_not_json_is_malformed_with_the_line_as_the_raw_answer(stdio_bot,
                                                                             program):
    with stdio_bot(program("garbage-at", "1")) as url:
        junk = ask(url, decision(step=0))
        after = ask(url, decision(step=1))
    assert junk.fault == Fault.MALFORMED and junk.raw == "this is not json"
    assert after.fault is None and after.action == {"type": "echo", "step": 1}


def test_binary_junk_is_malformed(stdio_bot, program):
    with stdio_bot(program("binary-at", "1")) as url:
        junk = ask(url, decision(step=0))
        after = ask(url, decision(step=1))
    assert junk.fault == Fault.MALFORMED
    assert after.action == {"type": "echo", "step": 1}


def test_an_oversized_line_is_malformed_and_the_next_answer_is_read_whole(stdio_bot, program):
    with stdio_bot(program("huge-at", "1")) as url:
        huge = ask(url, decision(step=0))
        after = ask(url, decision(step=1))
    assert huge.fault == Fault.MALFORMED
    assert "longer than 1048576 bytes" in huge.raw and "xxxx" in huge.raw
    assert after.fault is None and after.action == {"type": "echo", "step": 1}


def test_endless_output_without_a_newline_does_not_bring_the_bridge_down(stdio_bot, program):
    with stdio_bot(program("endless-at", "2")) as url:
        assert ask(url, decision(step=0)).fault is None
        endless = ask(url, decision(step=1))
        other_match = ask(url, decision("m2", step=0))
    assert endless.fault == Fault.MALFORMED and "longer than" in endless.raw
    assert other_match.fault is None


def test_a_program_writing_stderr_without_end_fills_no_disk_and_the_bridge_goes_on(
        stdio_bot, program, tmp_path):
    """A process of the program writes stderr for ever (`yes`); its log keeps the limit,
    the program answers on, and another match plays beside it."""
    limit = 256 << 10
    argv = ["sh", "-c", f"yes stderr >&2 & exec {shlex.join(program('first'))}"]
    with stdio_bot(argv, stderr_limit=limit) as url:
        replies = [ask(url, decision(step=0))]  # the match's first message starts it
        wait_until(lambda: "stderr closed" in log_text(tmp_path), "stderr to be cut")
        replies += [ask(url, decision(step=step)) for step in (1, 2)]
        other_match = ask(url, decision("m2", step=0))
        size = (tmp_path / "logs" / "m1-seat0.log").stat().st_size
    assert all(reply.fault is None for reply in replies) and other_match.fault is None
    assert limit <= size < limit + 4096  # the program's bytes, and the bridge's notes


def test_the_logs_of_ended_matches_are_kept_to_their_budget_newest_first(stdio_bot, program,
                                                                          tmp_path):
    """Ten matches, each writing 3,000 bytes of stderr, through a real bridge with 8,000
    bytes of logs: the newest logs stay, within the budget; a log from before the bridge
    started goes first; a file that is not a log stays."""
    logs = tmp_path / "logs"
    logs.mkdir()
    before = logs / "before-seat0.log"
    before.write_text("an old match\n")
    os.utime(before, (1, 1))
    other = logs / "notes.txt"
    other.write_text("mine\n")
    argv = ["sh", "-c", f"printf '%03000d' 0 >&2; exec {shlex.join(program('first'))}"]
    with stdio_bot(argv, logs_limit=8000) as url:
        for n in range(10):
            assert ask(url, decision(f"m{n}")).fault is None
            requests.post(url, json=result_notice(f"m{n}"), timeout=SLOW_MACHINE_S)
            wait_until(lambda n=n: "stopped" in log_text(tmp_path, f"m{n}"),
                       f"the program of m{n} to stop")
    kept = sorted(path.name for path in logs.glob("*.log"))
    sizes = [(logs / f"m{n}-seat0.log").stat().st_size for n in range(10) if
             f"m{n}-seat0.log" in kept]
    newest = [f"m{n}-seat0.log" for n in range(10 - len(kept), 10)]
    assert kept == sorted(newest) and len(kept) >= 2  # the newest, each over 3,000 bytes
    assert sum(sizes) <= 8000 < sum(sizes) + min(sizes)  # as many as the budget holds
    assert not before.exists() and other.read_text() == "mine\n"


def test_no_answer_within_the_deadline_is_a_timeout_and_the_late_answer_is_dropped(
        stdio_bot, program, tmp_path):
    with stdio_bot(program("hang-at", "1", "3")) as url:
        late = ask(url, decision(step=0, deadline_ms=300))
        next_one = ask(url, decision(step=1, deadline_ms=30000))
    assert late.fault == Fault.TIMEOUT
    assert next_one.fault is None
    assert next_one.action == {"type": "echo", "step": 1}, "the late answer to step 0 was used"
    assert "timeout: no answer within 300 ms (step 0)" in log_text(tmp_path)


def test_a_program_that_closes_its_stdin_is_a_crash(stdio_bot, program):
    with stdio_bot(program("close-stdin")) as url:
        answered = ask(url, decision(step=0))
        reply = ask(url, decision(step=1))
        later = ask(url, decision(step=2))
    assert answered.fault is None
    assert reply.fault == Fault.CRASH and "closed its stdin" in reply.raw
    assert later.fault == Fault.CRASH


def test_a_program_that_cannot_start_is_a_crash_saying_why(stdio_bot, tmp_path):
    script = tmp_path / "not_executable.sh"
    script.write_text("#!/bin/sh\n")
    with stdio_bot([str(script)]) as url:
        reply = ask(url, decision())
    assert reply.fault == Fault.CRASH and "cannot start the program" in reply.raw


# ----- end of a match -------------------------------------------------------------------------
def test_the_result_notice_is_the_programs_last_line_then_eof(stdio_bot, program, tmp_path):
    record = tmp_path / "record.txt"
    with stdio_bot(program("record", str(record))) as url:
        ask(url, decision(step=0))
        answer = requests.post(url, json=result_notice(), timeout=SLOW_MACHINE_S)
        lines = wait_until(lambda: "EOF" in record.read_text() and record.read_text(),
                           "the program to record EOF").splitlines()
        wait_until(lambda: "stopped: exited with code 0" in log_text(tmp_path),
                   "the bridge to note the program's exit")
    assert answer.status_code == 200
    assert [json.loads(line)["type"] for line in lines[:2]] == ["decision", "result"]
    assert json.loads(lines[1]) == result_notice()
    assert lines[2:] == ["EOF"]


def test_a_program_still_running_a_second_after_the_result_is_killed(stdio_bot, program,
                                                                     tmp_path):
    pidfile = tmp_path / "pid"
    with stdio_bot(program("stubborn", str(pidfile))) as url:
        reply = ask(url, decision(step=0, deadline_ms=500))  # it never answers
        pid = int(wait_until(lambda: pidfile.exists() and pidfile.read_text(), "the pid"))
        requests.post(url, json=result_notice(), timeout=SLOW_MACHINE_S)
        wait_until(lambda: not _alive(pid), "the stubborn program to be killed")
    assert reply.fault == Fault.TIMEOUT
    assert "killed: still running 1 s after its last line" in log_text(tmp_path)


def test_a_daemon_the_program_left_running_is_killed_at_the_result(stdio_bot, program,
                                                                   tmp_path):
    """A process the program started in a session of its own outlives the program's
    process group; the bridge kills it too when the match ends (`referee.match.program`)."""
    token = f"1000.{secrets.randbelow(10**9)}"
    argv = ["sh", "-c", f"setsid sleep {token} & exec {shlex.join(program('first'))}"]
    try:
        with stdio_bot(argv) as url:
            reply = ask(url, decision(step=0))
            wait_until(lambda: daemons(token), "the daemon to start")
            requests.post(url, json=result_notice(), timeout=SLOW_MACHINE_S)
            wait_until(lambda: not processes("cmdline", token), "the daemon to be killed")
        assert reply.fault is None
        assert "killed 1 process(es) it left running" in log_text(tmp_path)
    finally:
        kill_all(token)


def test_a_result_for_a_match_the_bridge_never_saw_is_answered_200(stdio_bot, program):
    with stdio_bot(program("first")) as url:
        answer = requests.post(url, json=result_notice("unknown"), timeout=SLOW_MACHINE_S)
    assert answer.status_code == 200 and answer.json() == {}


def test_a_silent_match_is_retired_and_a_later_decision_starts_afresh(stdio_bot, program,
                                                                      tmp_path):
    with stdio_bot(program("first"), idle_timeout_s=0.5) as url:
        assert ask(url, decision(step=0)).fault is None
        wait_until(lambda: "retired: no message for 0.5 s" in log_text(tmp_path),
                   "the idle program to be retired")
        again = ask(url, decision(step=1))
    assert again.action == {"type": "echo", "step": 1}
    assert log_text(tmp_path).count("started pid") == 2


# ----- the cap on programs --------------------------------------------------------------------
def test_at_the_cap_the_least_recently_used_idle_program_is_retired(stdio_bot, program,
                                                                    tmp_path):
    with stdio_bot(program("first"), max_programs=2) as url:
        for match_id in ("a", "b", "a", "c"):
            assert ask(url, decision(match_id)).fault is None
        status = requests.get(url, timeout=SLOW_MACHINE_S).json()
    assert status["programs"] == 2
    assert "retired: the bridge needed its place" in log_text(tmp_path, "b")
    assert "retired" not in log_text(tmp_path, "a").split("stopped")[0]


def test_when_every_program_is_deciding_a_new_match_is_refused(stdio_bot, program):
    import threading

    with stdio_bot(program("hang-at", "1", "5"), max_programs=1) as url:
        busy = threading.Thread(target=ask, args=(url, decision("a", deadline_ms=4000)))
        busy.start()
        wait_until(lambda: requests.get(url, timeout=5).json()["programs"] == 1,
                   "the first program to start")
        refused = ask(url, decision("b"))
        busy.join()
    assert refused.fault == Fault.CRASH and "--max-programs" in refused.raw


# ----- signatures -----------------------------------------------------------------------------
def test_with_a_secret_the_bridge_refuses_unsigned_and_badly_signed_requests(stdio_bot,
                                                                             program):
    body = json.dumps(decision()).encode()
    now = int(time.time())
    headers = {"Content-Type": "application/json"}
    with stdio_bot(program("first"), secret="s3cret") as url:
        def post(signature: str | None) -> requests.Response:
            extra = {HEADER: signature} if signature is not None else {}
            return requests.post(url, data=body, headers={**headers, **extra},
                                 timeout=SLOW_MACHINE_S)

        missing = post(None)
        wrong_secret = post(signature_header("other", body, now))
        stale = post(signature_header("s3cret", body, now - 3600))
        malformed = post("v1=abc")
        good = post(signature_header("s3cret", body, now))
    assert missing.status_code == 401 and "missing" in missing.json()["error"]
    assert wrong_secret.status_code == 401 and "does not match" in wrong_secret.json()["error"]
    assert stale.status_code == 401 and "300 s" in stale.json()["error"]
    assert malformed.status_code == 401 and "malformed" in malformed.json()["error"]
    assert good.status_code == 200 and good.json() == {"action": {"type": "echo", "step": 0}}


# ----- what the bridge itself refuses ---------------------------------------------------------
def test_requests_that_are_not_messages_are_refused_with_400(stdio_bot, program):
    with stdio_bot(program("first")) as url:
        not_json = requests.post(url, data=b"{oops", timeout=SLOW_MACHINE_S)
        unknown = requests.post(url, json={**decision(), "type": "hello"}, timeout=10)
        no_match = requests.post(url, json={**decision(), "match_id": 7}, timeout=10)
        bad_deadline = requests.post(url, json=decision(deadline_ms=True), timeout=10)
        deep = requests.post(url, data=b"[" * 5000 + b"]" * 5000, timeout=10)
        put = requests.put(url, json=decision(), timeout=10)
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]
    assert unknown.status_code == 400 and '"type"' in unknown.json()["error"]
    assert no_match.status_code == 400 and "match_id" in no_match.json()["error"]
    assert bad_deadline.status_code == 400 and "deadline_ms" in bad_deadline.json()["error"]
    assert deep.status_code == 400
    assert put.status_code == 405


@pytest.mark.parametrize(("request_bytes", "status"), [
    (b"POST / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 70000 + b"\r\n\r\n", 431),
    (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n", 413),
    (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 411),
    (b"POST / HTTP/1.1\r\nContent-Length: -4\r\n\r\n", 400),
    (b"NONSENSE\r\n\r\n", 400),
])
def test_malformed_http_is_answered_with_an_error_and_the_bridge_lives_on(
        stdio_bot, program, request_bytes, status):
    with stdio_bot(program("first")) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=SLOW_MACHINE_S) as sock:
            sock.sendall(request_bytes)
            answer = sock.recv(4096)
        healthy = ask(url, decision())
    assert answer.startswith(f"HTTP/1.1 {status} ".encode()), answer[:100]
    assert healthy.fault is None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True

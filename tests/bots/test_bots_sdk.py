"""The Python SDK speaks referee/1 over real HTTP on loopback (design.md section 4) and as a
stdin/stdout program, handles result notices and checks signatures (issue 18)."""

import io
import json
import select
import socket
import struct
import threading
import time
from contextlib import contextmanager

import requests

import engines
from bots.python import random_bot
from bots.python.sdk import (
    PROTOCOL,
    SECRET_ENV,
    LogKeeper,
    budget_ms,
    make_server,
    serve_stdio,
)
from referee.match.rerun import state_before
from referee.match.runner import FailurePolicy, PushSeat, run_match
from referee.match.signing import HEADER, signature_header


def _payload(legal_actions, **extra):
    return {"protocol": PROTOCOL, "match_id": "m1", "game": "aladino", "seat": 0, "step": 3,
            "deadline_ms": 2000, "observation": {"seat": 0}, "legal_actions": legal_actions,
            **extra}


def test_answers_with_the_choosers_action(python_bot):
    seen = []

    def choose(observation, legal_actions):
        seen.append((observation, legal_actions))
        return legal_actions[-1]

    with python_bot(choose) as url:
        reply = requests.post(url, json=_payload([{"type": "a"}, {"type": "b"}]), timeout=5)
    assert reply.status_code == 200
    assert reply.json() == {"action": {"type": "b"}}
    assert seen == [({"seat": 0}, [{"type": "a"}, {"type": "b"}])]


def test_keep_alive_answers_arrive_in_one_piece(python_bot):
    """design.md: answered in two writes on a kept-alive connection, a decision costs about
    44 ms (Nagle + delayed ACK); the SDK answers in one write. Checked without timing: on a
    kept-alive connection, the first read after the answer starts holds the whole answer."""
    body = json.dumps(_payload([{"type": "x", "n": 1}])).encode()
    request = (f"POST / HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    with python_bot(random_bot.make_choose(1)) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            for _ in range(5):
                sock.sendall(request)
                select.select([sock], [], [], 5)
                answer = sock.recv(1 << 16)
                head, _, payload = answer.partition(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                assert len(payload) == length, "the answer came in more than one write"
                assert json.loads(payload) == {"action": {"type": "x", "n": 1}}


def test_refuses_a_request_that_is_not_a_decision(python_bot):
    with python_bot(random_bot.make_choose(1)) as url:
        wrong_protocol = requests.post(url, json=_payload([{"type": "a"}], protocol="x/0"),
                                       timeout=5)
        no_actions = requests.post(url, json=_payload([]), timeout=5)
        not_json = requests.post(url, data=b"{oops", timeout=5)
    assert wrong_protocol.status_code == 400 and "referee/1" in wrong_protocol.json()["error"]
    assert no_actions.status_code == 400 and "legal_actions" in no_actions.json()["error"]
    assert not_json.status_code == 400 and "not JSON" in not_json.json()["error"]


def test_hostile_headers_and_numbers_get_a_400_and_idle_connections_are_closed(
        python_bot, monkeypatch):
    """Before any signature is checked (a helper's audit of the SDKs): `Content-Length: ²`
    (a digit to str.isdigit, not to int) and a 5,000-digit integer (past Python's limit for
    int from text) each dropped the connection with a traceback; connections that never
    spoke stayed open for good, so 1,100 of them used up the bot's files and stopped it."""
    from bots.python import sdk

    monkeypatch.setattr(sdk, "IDLE_TIMEOUT_S", 0.5)
    big = b'{"protocol": "referee/1", "n": ' + b"7" * 5000 + b"}"
    with python_bot(random_bot.make_choose(1)) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        for head, body in ((b"Content-Length: \xb2", b""),  # "²", read as latin-1
                           (b"Content-Length: %d" % len(big), big)):
            with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
                sock.sendall(b"POST / HTTP/1.1\r\nHost: bot\r\n" + head + b"\r\n\r\n" + body)
                assert sock.recv(1 << 16).startswith(b"HTTP/1.1 400 "), head
        with socket.create_connection(("127.0.0.1", port), timeout=30) as idle:
            assert idle.recv(1) == b""  # closed by the bot, not by this timeout


def test_a_choose_that_raises_gets_a_500_naming_the_error(python_bot):
    def choose(observation, legal_actions):
        raise KeyError("board")

    with python_bot(choose) as url:
        reply = requests.post(url, json=_payload([{"type": "a"}]), timeout=5)
    assert reply.status_code == 500
    assert "KeyError" in reply.json()["error"]


# ----- message types, result notices, signatures (issue 18) ----------------------------------
def _result_notice():
    return {"protocol": PROTOCOL, "type": "result", "match_id": "m1", "game": "aladino",
            "seat": 0, "result": {"scores": [5, 2], "ranks": [1, 2]},
            "replay_url": "http://127.0.0.1:8000/matches/m1/replay"}


def _sdk_bot(serve, **options):
    """`with _sdk_bot(serve, secret=..., on_result=...) as url:` an SDK bot choosing first."""
    server = make_server(lambda observation, legal: legal[0], port=0, **options)

    @contextmanager
    def running():
        with serve(server) as port:
            yield f"http://127.0.0.1:{port}/"

    return running()


def test_a_result_notice_is_answered_200_and_handed_to_the_callback(serve):
    received = []
    with _sdk_bot(serve, on_result=received.append) as url:
        reply = requests.post(url, json=_result_notice(), timeout=5)
        decision = requests.post(url, json=_payload([{"type": "a"}], type="decision"),
                                 timeout=5)
    assert reply.status_code == 200 and reply.json() == {}
    assert received == [_result_notice()]
    assert decision.json() == {"action": {"type": "a"}}


def test_a_failing_result_callback_still_answers_200(serve):
    def on_result(message):
        raise RuntimeError("no database")

    with _sdk_bot(serve, on_result=on_result) as url:
        reply = requests.post(url, json=_result_notice(), timeout=5)
    assert reply.status_code == 200


def test_an_unknown_message_type_is_refused(python_bot):
    with python_bot(random_bot.make_choose(1)) as url:
        reply = requests.post(url, json=_payload([{"type": "a"}], type="hello"), timeout=5)
    assert reply.status_code == 400 and '"type"' in reply.json()["error"]


def test_a_ladder_notice_is_answered_200_and_printed(python_bot, capfd):
    """Issue 28: a ladder tells a push bot its entry was rejected or suspended."""
    notice = {"protocol": PROTOCOL, "type": "notice", "ladder_id": "l-1", "bot_id": "b-1",
              "status": "suspended", "reasons": ["its bot faulted in 3 of its last 10"]}
    with python_bot(random_bot.make_choose(1)) as url:
        reply = requests.post(url, json=notice, timeout=5)
    assert reply.status_code == 200 and reply.json() == {}
    assert '"status": "suspended"' in capfd.readouterr().err


def test_with_a_secret_unsigned_or_badly_signed_requests_get_401(serve):
    body = json.dumps(_payload([{"type": "a"}], type="decision")).encode()
    now = int(time.time())
    with _sdk_bot(serve, secret="s3cret") as url:
        def post(headers):
            return requests.post(url, data=body, timeout=5,
                                 headers={"Content-Type": "application/json", **headers})

        missing = post({})
        wrong = post({HEADER: signature_header("guess", body, now)})
        stale = post({HEADER: signature_header("s3cret", body, now - 1000)})
        good = post({HEADER: signature_header("s3cret", body, now)})
    assert missing.status_code == 401 and "missing" in missing.json()["error"]
    assert wrong.status_code == 401 and "does not match" in wrong.json()["error"]
    assert stale.status_code == 401 and "timestamp" in stale.json()["error"]
    assert good.status_code == 200 and good.json() == {"action": {"type": "a"}}


def test_the_secret_comes_from_the_environment_when_not_given(serve, monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "from-env")
    body = json.dumps(_result_notice()).encode()
    with _sdk_bot(serve) as url:
        unsigned = requests.post(url, data=body, timeout=5)
        signed = requests.post(url, data=body, timeout=5, headers={
            HEADER: signature_header("from-env", body, int(time.time()))})
    assert unsigned.status_code == 401 and signed.status_code == 200


def test_serve_stdio_answers_one_line_per_decision_until_the_result():
    received = []
    lines = [json.dumps(_payload([{"type": "a"}, {"type": "b"}])),
             "not json",
             json.dumps(_result_notice()),
             json.dumps(_payload([{"type": "never read"}]))]
    out = io.StringIO()
    serve_stdio(lambda observation, legal: legal[1], on_result=received.append,
                stdin=io.StringIO("\n".join(lines) + "\n"), stdout=out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[0] == {"action": {"type": "b"}}
    assert "not JSON" in answers[1]["error"] and len(answers) == 2
    assert received == [_result_notice()]


def test_the_sdk_budgets_a_twentieth_of_the_clock_and_never_the_last_50_ms():
    """docs/bots.md, Clocks: the rule of thumb the examples show."""
    clock = {"remaining_ms": [60000, 100], "increment_ms": 500, "overdraft_ms": [0, 0],
             "deadline_ms": 60000}
    assert budget_ms({"seat": 0, "deadline_ms": 60000, "clock": clock}) == 3000 + 400
    low = {**clock, "deadline_ms": 100}
    assert budget_ms({"seat": 1, "deadline_ms": 100, "clock": low}) == 50
    assert budget_ms({"seat": 0, "deadline_ms": 2000}) == 1600


def test_a_referee_resetting_its_kept_connection_prints_no_traceback(serve, capsys):
    """A referee drops a kept connection with a reset (Linux resets a socket closed with
    unread data): the SDK bot goes on quietly, where the standard library prints a
    traceback on stderr (CI saw one in a test's captured output)."""
    body = json.dumps(_payload([{"type": "x"}])).encode()
    request = (f"POST / HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    with _sdk_bot(serve) as url:
        port = int(url.rstrip("/").rsplit(":", 1)[1])
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        sock.sendall(request)
        select.select([sock], [], [], 5)
        assert b'"action"' in sock.recv(1 << 16)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # a reset while the bot awaits the next request on this connection
        _wait_for_handlers_to_end()
        assert requests.post(url, json=_payload([{"type": "y"}]), timeout=5).ok
    assert "Traceback" not in capsys.readouterr().err


def _wait_for_handlers_to_end(timeout_s: float = 30.0) -> None:
    """Until no thread of a threading server is handling a connection."""
    give_up = time.monotonic() + timeout_s
    while any("process_request_thread" in thread.name for thread in threading.enumerate()):
        assert time.monotonic() < give_up, "a connection's thread did not end"
        time.sleep(0.01)


def test_the_sdk_keeps_each_matchs_log_so_the_referee_sends_only_new_entries(serve):
    """docs/bots.md, "The log since your last decision": the SDK answers `"log": "new"`;
    the referee's later requests carry `log_from`, and `choose` still sees the engine's
    whole observation at every decision (design.md section 4)."""
    seen: list[tuple[int, int, int | None, dict]] = []

    def choose(observation, legal_actions, decision):
        seen.append((decision["seat"], decision["step"], decision.get("log_from"),
                     observation))
        return legal_actions[0]

    with serve(make_server(choose, port=0)) as port:
        url = f"http://127.0.0.1:{port}/"
        record = run_match("aladino", 3, {}, [PushSeat(url, 5000), PushSeat(url, 5000)],
                           FailurePolicy(), "m-sdk-log")
    engine = engines.get(record["game"], record["game_version"])
    assert len(seen) == len(record["steps"]) > 10
    for seat in (0, 1):
        starts = [log_from for at, _, log_from, _ in seen if at == seat]
        assert starts[0] is None and all(starts[1:])  # the first whole, then new entries
    for seat, step, _, observation in seen:
        assert observation == engine.observation(state_before(engine, record, step), seat)


def test_a_decision_whose_earlier_entries_the_bot_lacks_is_answered_without_asking(
        python_bot):
    """A bot that forgot the match (restarted) cannot rebuild the log: it does not ask for
    new entries only, so the next request carries the whole log again."""
    seen = []
    log = [{"event": "rolled", "value": 4}]
    with python_bot(lambda observation, legal: seen.append(observation) or legal[0]) as url:
        forgot = requests.post(url, json=_payload([{"type": "a"}], log_from=5,
                                                  observation={"log": log}), timeout=5)
        whole = requests.post(url, json=_payload([{"type": "a"}], observation={"log": log}),
                              timeout=5)
        later = requests.post(url, json=_payload([{"type": "a"}], log_from=1,
                                                 observation={"log": log}), timeout=5)
    assert forgot.json() == {"action": {"type": "a"}}
    assert whole.json() == later.json() == {"action": {"type": "a"}, "log": "new"}
    assert seen == [{"log": log}, {"log": log}, {"log": log * 2}]


def test_the_log_keeper_forgets_the_matches_least_recently_played():
    keeper = LogKeeper(matches=2)
    for match_id in ("m1", "m2", "m3"):
        assert keeper.complete(_payload([{"type": "a"}], match_id=match_id,
                                        observation={"log": [1, 2]}))
    assert not keeper.complete(_payload([{"type": "a"}], match_id="m1", log_from=2,
                                        observation={"log": [3]}))
    message = _payload([{"type": "a"}], match_id="m3", log_from=1, observation={"log": [9]})
    assert keeper.complete(message) and message["observation"]["log"] == [1, 9]
    keeper.forget(_payload([], match_id="m3"))
    assert set(keeper.logs) == {("m2", 0)}


def test_a_bot_may_keep_no_log_and_always_get_the_whole_one(serve):
    with serve(make_server(lambda observation, legal: legal[0], port=0,
                           keep_log=False)) as port:
        reply = requests.post(f"http://127.0.0.1:{port}/", timeout=5,
                              json=_payload([{"type": "a"}], observation={"log": [1]}))
    assert reply.json() == {"action": {"type": "a"}}


def test_junk_where_the_match_and_seat_belong_neither_breaks_the_bot_nor_its_logs(python_bot):
    """A sender's lists and objects as `match_id` or `seat` (unhashable: no key of the kept
    logs) get a plain answer, and a result notice naming them is answered 200."""
    with python_bot(lambda observation, legal: legal[0]) as url:
        for junk in ({"match_id": ["m1"]}, {"seat": {"a": 1}}, {"match_id": None}):
            decision = requests.post(url, timeout=5, json=_payload(
                [{"type": "a"}], observation={"log": [1]}, **junk))
            assert decision.status_code == 200
            assert decision.json() == {"action": {"type": "a"}}
            notice = requests.post(url, timeout=5, json={**_result_notice(), **junk})
            assert notice.status_code == 200
        fine = requests.post(url, timeout=5, json=_payload([{"type": "a"}],
                                                          observation={"log": [1]}))
    assert fine.json() == {"action": {"type": "a"}, "log": "new"}

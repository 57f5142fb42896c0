"""`referee dashboard`: rq-dashboard as a real process (gunicorn) on a real Redis that holds
a queued match job, behind basic auth with the admin token."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
import requests

from referee.commands.dashboard import without_wait_options
from referee.processes import stop_all
from referee.redis_server import free_port, wait_for_port
from tests.support.apitest import ADMIN, ROOT


@pytest.fixture
def config_overrides() -> dict:
    """The common settings without a replay signing key."""
    return {"secret": ""}


@pytest.fixture
def dashboard(redis_url) -> Iterator[tuple[str, str]]:
    """A running `referee dashboard`: its base URL and the line it printed first."""
    port = free_port()
    env = {**os.environ, "REDIS_URL": redis_url, "REFEREE_ADMIN_TOKEN": ADMIN,
           "PYTHONPATH": str(ROOT)}
    env.pop("REFEREE_LOG_FORMAT", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "referee.cli", "dashboard", "--port", str(port)], env=env,
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        start_new_session=True)
    try:
        first_line = process.stdout.readline()
        wait_for_port(port, timeout=60)
        yield f"http://127.0.0.1:{port}", first_line
    finally:
        stop_all([process])
        process.stdout.close()


def test_the_dashboard_shows_the_queued_match_job_to_the_admin(api, dashboard, refused_url):
    base, first_line = dashboard
    assert f"rq dashboard at {base}/" in first_line and ADMIN not in first_line
    bot = api.register_bot(refused_url, games=["aladino"])
    match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2)
    admin = ("admin", ADMIN)

    page = requests.get(f"{base}/", auth=admin, timeout=30)
    assert page.status_code == 200 and "RQ dashboard" in page.text
    queues = requests.get(f"{base}/0/data/queues.json", auth=admin, timeout=30).json()
    assert [(queue["name"], queue["count"]) for queue in queues["queues"]] == [
        ("referee-matches", 1)]
    jobs = requests.get(f"{base}/0/data/jobs/referee-matches/queued/8/asc/1.json",
                        auth=admin, timeout=30).json()["jobs"]
    assert [(job["id"], job["description"]) for job in jobs] == [
        (f"match-{match['id']}", f"match {match['id']}")]
    job = requests.get(f"{base}/0/data/job/match-{match['id']}.json", auth=admin,
                       timeout=30).json()
    assert job["status"] == "queued" and job["origin"] == "referee-matches"


def test_the_dashboard_refuses_anyone_without_the_admin_token(dashboard):
    base, _ = dashboard
    for auth in (None, ("admin", "wrong"), ("someone", ADMIN)):
        refused = requests.get(f"{base}/0/data/queues.json", auth=auth, timeout=30)
        assert refused.status_code == 401
        assert refused.headers["WWW-Authenticate"].startswith("Basic")


def test_deleting_jobs_is_disabled(api, dashboard, refused_url):
    base, _ = dashboard
    bot = api.register_bot(refused_url, games=["aladino"])
    match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2)
    admin = ("admin", ADMIN)
    answer = requests.post(f"{base}/job/match-{match['id']}/delete", auth=admin, timeout=30)
    assert answer.json()["status"] == "DISABLED"
    emptied = requests.post(f"{base}/queue/referee-matches/queued/empty", auth=admin,
                            timeout=30)
    assert emptied.json()["status"] == "DISABLED"
    queues = requests.get(f"{base}/0/data/queues.json", auth=admin, timeout=30).json()
    assert queues["queues"][0]["count"] == 1


def test_a_change_another_sites_page_asks_for_is_refused(api, dashboard, refused_url):
    """The browser resends the cached basic-auth password with a request another site's
    page makes (CSRF): a POST, or the one GET that requeues, from elsewhere is a 403."""
    base, _ = dashboard
    bot = api.register_bot(refused_url, games=["aladino"])
    match = api.create_match("aladino", [{"kind": "bot", "bot_id": bot}] * 2)
    admin, requeue = ("admin", ADMIN), f"{base}/job/match-{match['id']}/requeue"
    for forged in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"},
                   {"Sec-Fetch-Site": "same-site", "Origin": base},
                   {"Origin": "null"}):  # a sandboxed frame's, or a redirect's, page
        refused = requests.post(requeue, auth=admin, headers=forged, timeout=30)
        assert refused.status_code == 403, (forged, refused.text)
    assert requests.get(f"{base}/requeue/failed", auth=admin, timeout=30,
                        headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403
    own = requests.post(f"{base}/job/match-{match['id']}/delete", auth=admin, timeout=30,
                        headers={"Origin": base, "Sec-Fetch-Site": "same-origin"})
    assert own.status_code == 200 and own.json()["status"] == "DISABLED"
    page = requests.get(f"{base}/", auth=admin, timeout=30, headers={
        "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate"})  # a link followed
    assert page.status_code == 200 and page.headers["X-Frame-Options"] == "DENY"
    assert page.headers["X-Content-Type-Options"] == "nosniff"


@pytest.mark.parametrize(("url", "read"), [
    ("redis://127.0.0.1:6379/0?wait_replicas=1&wait_timeout_ms=50", "redis://127.0.0.1:6379/0"),
    ("redis://127.0.0.1:6379/0?socket_timeout=5", "redis://127.0.0.1:6379/0?socket_timeout=5"),
    ("redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster/0?wait_replicas=2",
     "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster/0"),
])
def test_the_dashboard_reads_the_redis_url_without_the_wait_options(url, read):
    """rq-dashboard connects with redis-py's and its own Sentinel URL reader, which refuse the
    options only the referee's durable writes use (REDIS_WAIT_*)."""
    assert without_wait_options(url) == read

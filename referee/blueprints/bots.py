"""POST /bots (admin), GET /bots, GET /bots/{id}: registered push bots."""

import secrets

from flask import Blueprint, Response

from ..auth import require_admin
from ..problems import Problem, not_found
from ..replay import utc_now
from ..schemas import BotCreateSchema, BotListSchema, BotSchema
from ..web import load_body, reply, services

bp = Blueprint("bots", __name__)


@bp.post("/bots")
def register_bot() -> Response:
    require_admin()
    data = load_body(BotCreateSchema)
    check_bot_host(data["url"])
    bot = {"id": f"bot-{secrets.token_hex(6)}", "name": data["name"], "url": data["url"],
           "games": sorted(set(data["games"])), "created_at": utc_now()}
    services().store.save_bot(bot)
    return reply(BotSchema, bot, 201, headers={"Location": f"/bots/{bot['id']}"})


def check_bot_host(url: str) -> None:
    """403 for a (well-formed) bot URL whose host is off the allowlist: the request is
    valid, the server's policy refuses to call that host."""
    problem = services().config.bot_host_problem(url)
    if problem:
        raise Problem(403, "bot/host-not-allowed", "Forbidden", problem,
                      errors={"url": [problem]})


@bp.get("/bots")
def list_bots() -> Response:
    return reply(BotListSchema, {"bots": services().store.list_bots()})


@bp.get("/bots/<bot_id>")
def get_bot(bot_id: str) -> Response:
    bot = services().store.get_bot(bot_id)
    if bot is None:
        raise not_found(f"bot {bot_id!r}")
    return reply(BotSchema, bot)

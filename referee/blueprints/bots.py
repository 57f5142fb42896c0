"""POST /bots (admin), GET /bots, GET /bots/{id}: registered push bots."""

import secrets

from flask import Blueprint, Response

from ..auth import require_admin
from ..problems import invalid, not_found
from ..replay import utc_now
from ..schemas import BotCreateSchema, BotListSchema, BotSchema
from ..web import load_body, reply, services

bp = Blueprint("bots", __name__)


@bp.post("/bots")
def register_bot() -> Response:
    require_admin()
    data = load_body(BotCreateSchema)
    problem = services().config.bot_url_problem(data["url"])
    if problem:
        raise invalid({"url": [problem]})
    bot = {"id": f"bot-{secrets.token_hex(6)}", "name": data["name"], "url": data["url"],
           "games": sorted(set(data["games"])), "created_at": utc_now()}
    services().store.save_bot(bot)
    return reply(BotSchema, bot, 201, headers={"Location": f"/bots/{bot['id']}"})


@bp.get("/bots")
def list_bots() -> Response:
    return reply(BotListSchema, {"bots": services().store.list_bots()})


@bp.get("/bots/<bot_id>")
def get_bot(bot_id: str) -> Response:
    bot = services().store.get_bot(bot_id)
    if bot is None:
        raise not_found(f"bot {bot_id!r}")
    return reply(BotSchema, bot)

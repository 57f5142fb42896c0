"""POST /bots, PATCH and DELETE /bots/{id}, POST /bots/{id}/secret (admin); GET /bots,
GET /bots/{id}: registered push bots (`tournament.bots`)."""

import secrets

from flask import Blueprint, Response

from referee.api.auth import require_admin
from referee.api.problems import Problem, not_found
from referee.api.schemas import (
    BotCreatedSchema,
    BotCreateSchema,
    BotListSchema,
    BotSchema,
    BotUpdateSchema,
    ListQuerySchema,
)
from referee.api.web import load_body, load_query, reply, services
from referee.match.replay import utc_now
from tournament.bots import bot_named, is_retired, new_secret, public_bot, update_bot

bp = Blueprint("bots", __name__)


@bp.post("/bots")
def register_bot() -> Response:
    """201 with the bot and its secret, shown in this answer only; 409 for a taken name."""
    require_admin()
    data = load_body(BotCreateSchema)
    check_bot_host(data["url"])
    _check_name_free(data["name"])
    bot = {"id": f"bot-{secrets.token_hex(6)}", "name": data["name"], "url": data["url"],
           "games": sorted(set(data["games"])), "created_at": utc_now(),
           "secret": new_secret()}
    services().store.save_bot(bot)
    return reply(BotCreatedSchema, {**public_bot(bot), "secret": bot["secret"]}, 201,
                 headers={"Location": f"/bots/{bot['id']}"})


def check_bot_host(url: str) -> None:
    """403 for a (well-formed) bot URL whose host is off the allowlist: the request is
    valid, the server's policy refuses to call that host."""
    problem = services().config.bot_host_problem(url)
    if problem:
        raise Problem(403, "bot/host-not-allowed", "Forbidden", problem,
                      errors={"url": [problem]})


@bp.get("/bots")
def list_bots() -> Response:
    """A page of the bots, oldest first (retired ones included)."""
    query = load_query(ListQuerySchema)
    bots, total = services().store.bot_page(query["offset"], query["limit"])
    return reply(BotListSchema, {"bots": [public_bot(bot) for bot in bots], "total": total,
                                 **query})


@bp.get("/bots/<bot_id>")
def get_bot(bot_id: str) -> Response:
    return reply(BotSchema, public_bot(_find_bot(bot_id)))


@bp.patch("/bots/<bot_id>")
def change_bot(bot_id: str) -> Response:
    """A new name or URL (checked as at registration); its matches keep the old ones."""
    require_admin()
    bot = _find_bot(bot_id)
    data = load_body(BotUpdateSchema)
    if "url" in data:
        check_bot_host(data["url"])
    if "name" in data:
        _check_name_free(data["name"], other_than=bot_id)
    bot.update(data)
    update_bot(services().store, bot)
    return reply(BotSchema, public_bot(bot))


@bp.delete("/bots/<bot_id>")
def retire_bot(bot_id: str) -> Response:
    """Retire the bot: no new match or tournament accepts it; its history stays."""
    require_admin()
    bot = _find_bot(bot_id, retired_too=True)
    if not is_retired(bot):
        bot["retired_at"] = utc_now()
        update_bot(services().store, bot)
    return reply(BotSchema, public_bot(bot))


@bp.post("/bots/<bot_id>/secret")
def rotate_secret(bot_id: str) -> Response:
    """A new secret for the bot, shown in this answer only; the old one stops at once."""
    require_admin()
    bot = _find_bot(bot_id)
    bot["secret"] = new_secret()
    update_bot(services().store, bot)
    return reply(BotCreatedSchema, {**public_bot(bot), "secret": bot["secret"]})


def _find_bot(bot_id: str, retired_too: bool = False) -> dict:
    """The bot; 404 when there is none, or when it is retired (unless `retired_too`): a
    retired bot is gone from `/bots/{id}`, while `GET /bots` still lists it."""
    bot = services().store.get_bot(bot_id)
    if bot is None:
        raise not_found(f"bot {bot_id!r}")
    if is_retired(bot) and not retired_too:
        raise Problem(404, "bot/retired", "Not Found",
                      f"bot {bot_id} ({bot['name']}) was retired at {bot['retired_at']}: its "
                      "matches, replays and ratings stay; GET /bots lists it")
    return bot


def _check_name_free(name: str, other_than: str | None = None) -> None:
    """409 naming the bot that already has this name (retired or not)."""
    holder = bot_named(services().store, name, other_than)
    if holder is not None:
        retired = " (retired)" if is_retired(holder) else ""
        detail = f"a bot named {holder['name']!r} is already registered: {holder['id']}{retired}"
        raise Problem(409, "bot/name-taken", "Conflict", detail, errors={"name": [detail]})

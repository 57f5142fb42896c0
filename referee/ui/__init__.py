"""The web pages under /ui: leaderboards, tournaments, ladders (followed live), bots, a
match viewer (live while the match is played) and a page to play a seat.

The pages are plain HTML shells; their scripts read the JSON API with fetch() and draw
everything in the browser (vanilla JS and SVG, no build step, nothing from the network).
"""

from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for
from werkzeug.wrappers import Response

import engines

bp = Blueprint("ui", __name__, url_prefix="/ui", template_folder="templates",
               static_folder="static")
root = Blueprint("root", __name__)

PAGE_POLICY = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The pages' Content-Security-Policy: their own scripts, styles and API only, never in a
frame (a second line of defence: every page writes data as text)."""


@bp.after_request
def _page_policy(response: Response) -> Response:
    response.headers.setdefault("Content-Security-Policy", PAGE_POLICY)
    return response


@bp.context_processor
def _api_root() -> dict[str, str]:
    """Where the API is (SCRIPT_NAME): a path of this site's, never another origin
    (`//host`, which the pages would send a seat token to)."""
    mounted = request.script_root
    return {"api_root": mounted if mounted.startswith("/") and not mounted.startswith("//")
            else ""}


@root.get("/")
def home() -> Response:
    """The site's root: a person who opens the server's address lands on the pages."""
    return redirect(url_for("ui.index"))


@bp.get("/")
def index() -> str:
    return render_template("ui/index.html")


@bp.get("/games/<game>")
def leaderboard(game: str) -> str:
    if game not in engines.names():
        abort(404)
    return render_template("ui/leaderboard.html", game=game)


@bp.get("/tournaments/<tournament_id>")
def tournament(tournament_id: str) -> str:
    return render_template("ui/tournament.html", tournament_id=tournament_id)


@bp.get("/ladders")
def ladders() -> str:
    return render_template("ui/ladders.html")


@bp.get("/ladders/<ladder_id>")
def ladder(ladder_id: str) -> str:
    return render_template("ui/ladder.html", ladder_id=ladder_id)


@bp.get("/bots/<bot_id>")
def bot(bot_id: str) -> str:
    return render_template("ui/bot.html", bot_id=bot_id)


@bp.get("/matches/<match_id>")
def match(match_id: str) -> str:
    return render_template("ui/match.html", match_id=match_id)


@bp.get("/play/<match_id>")
def play(match_id: str) -> str:
    """The seat's token stays in the address's fragment (never sent) or a form."""
    return render_template("ui/play.html", match_id=match_id)

/* The index page: games with their leaderboards, tournaments and recent matches. */
"use strict";

async function showGames() {
  const box = document.getElementById("games");
  try {
    const {games} = await api("/games");
    setChildren(box, games.map(game => h("div", {class: "card game"},
      h("h3", null, uiLink(`games/${game.name}`, game.name)),
      h("div", {class: "muted"}, `${game.min_players}–${game.max_players} players · v${game.version}`),
      h("div", null, uiLink(`games/${game.name}`, "leaderboard")))));
  } catch (error) {
    setChildren(box, errorBox(error));
  }
}

async function showTournaments() {
  const box = document.getElementById("tournaments");
  try {
    const body = await api("/tournaments?limit=20");
    const tournaments = body.tournaments || [];
    if (!tournaments.length) { setChildren(box, h("p", {class: "muted"}, "no tournaments yet")); return; }
    setChildren(box, table([
      {title: "tournament", cell: t => uiLink(`tournaments/${t.id}`, t.name || t.id)},
      {title: "game", cell: t => t.game},
      {title: "status", cell: t => h("span", {class: `status ${t.status}`}, t.status)},
      {title: "progress", cell: t => progressText(t.progress)},
      {title: "created", cell: t => when(t.created_at)},
    ], tournaments, {class: "tournaments"}));
  } catch (error) {
    setChildren(box, errorBox(error));
  }
}

function progressText(p) {
  return `${p.done}/${p.total}` + (p.failed ? ` (${p.failed} failed)` : "");
}

async function showMatches() {
  const box = document.getElementById("matches");
  try {
    const {matches} = await api("/matches?limit=20");
    setChildren(box, matchesTable(matches));
  } catch (error) {
    setChildren(box, errorBox(error));
  }
}

function openById(formId, page) {
  document.getElementById(formId).addEventListener("submit", event => {
    event.preventDefault();
    const id = new FormData(event.target).get("id").trim();
    if (id) window.location = window.REFEREE.ui + `${page}/${encodeURIComponent(id)}`;
  });
}

document.addEventListener("DOMContentLoaded", () => {
  openById("open-tournament", "tournaments");
  openById("open-match", "matches");
  showGames();
  showTournaments();
  showMatches();
});

/* The index page: games with their leaderboards, tournaments, ladders and recent matches. */
"use strict";

async function gameCards() {
  const games = await gameList();
  return games.map(game => h("div", {class: "card game"},
    h("h3", null, uiLink(`games/${game.name}`, game.name)),
    h("div", {class: "muted"}, `${game.min_players}–${game.max_players} players · v${game.version}`),
    h("div", null, uiLink(`games/${game.name}`, "leaderboard"))));
}

async function tournamentsTable() {
  const tournaments = (await api("/tournaments?limit=20")).tournaments || [];
  if (!tournaments.length) return h("p", {class: "muted"}, "no tournaments yet");
  return table([
    {title: "tournament", cell: t => uiLink(`tournaments/${t.id}`, t.name || t.id)},
    {title: "game", cell: t => t.game},
    {title: "status", cell: t => statusBadge(t.status)},
    {title: "progress", cell: t => progressText(t.progress)},
    {title: "created", cell: t => when(t.created_at)},
  ], tournaments, {class: "tournaments"});
}

function progressText(p) {
  return `${p.done}/${p.total}` + (p.failed ? ` (${p.failed} failed)` : "");
}

async function laddersList() {
  return laddersTable((await api("/ladders?limit=20")).ladders || []);
}

async function recentMatches() {
  const {matches} = await api("/matches?limit=20");
  return matchesTable(matches);
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
  fill("games", gameCards);
  fill("tournaments", tournamentsTable);
  fill("ladders", laddersList);
  fill("matches", recentMatches);
});

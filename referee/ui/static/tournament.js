/* A tournament: progress (refreshed while it runs), standings, ratings and the cross-table. */
"use strict";

const REFRESH_MS = 2000;

function progressView(t) {
  const {done, total, failed, running = 0} = t.progress;
  const part = n => total ? `${(100 * n / total).toFixed(2)}%` : "0%";
  return h("div", null,
    h("p", {class: "facts"},
      statusBadge(t.status, "tournament-status"),
      h("span", null, "game ", uiLink(`games/${t.game}`, t.game)),
      h("span", null, `${t.players} players per match, ${t.rounds} round${t.rounds > 1 ? "s" : ""}`),
      t.seed !== null ? h("span", null, "seed ", h("b", null, t.seed)) : ""),
    h("div", {class: "progress", id: "progress-bar", title: `${done}/${total}`},
      h("div", {class: "done", style: `width:${part(done - failed)}`}),
      h("div", {class: "failed", style: `width:${part(failed)}`}),
      h("div", {class: "running", style: `width:${part(running)}`})),
    h("p", {id: "progress-text"}, `${done} of ${total} matches done`,
      failed ? `, ${failed} failed` : "", running ? `, ${running} running` : ""));
}

function standingsView(standings) {
  if (!standings.length) return h("p", {class: "muted"}, "no results yet");
  return table([
    {title: "#", cell: row => row.rank, cls: "num"},
    {title: "bot", cell: row => row.name},
    {title: "points", cell: row => fmt(row.points, 2), cls: "num"},
    {title: "matches", cell: row => row.matches, cls: "num"},
    {title: "wins", cell: row => row.wins, cls: "num"},
    {title: "draws", cell: row => row.draws, cls: "num"},
    {title: "average score", cell: row => fmt(row.average_score, 1), cls: "num"},
    {title: "average rank", cell: row => fmt(row.average_rank, 2), cls: "num"},
    {title: "faults", cell: row => row.faults, cls: "num"},
    {title: "forfeits", cell: row => row.forfeits, cls: "num"},
  ], standings, {id: "standings-table"});
}

/** Bradley-Terry ratings (or the solo ranking), once every match is over. */
function ratingsView(t) {
  if (t.ratings) {
    return table([
      {title: "bot", cell: row => row.name},
      {title: "rating", cell: row => fmt(row.rating), cls: "num"},
      {title: "95% interval", cell: row => `${fmt(row.low)} – ${fmt(row.high)}`, cls: "num"},
      {title: "games", cell: row => row.games, cls: "num"},
    ], t.ratings, {id: "ratings-table"});
  }
  if (t.solo_ranking) {
    return table([
      {title: "bot", cell: row => row.name},
      {title: "mean score", cell: row => fmt(row.mean, 1), cls: "num"},
      {title: "95% interval", cell: row => row.low === null ? "–" : `${fmt(row.low, 1)} – ${fmt(row.high, 1)}`,
        cls: "num"},
      {title: "games", cell: row => row.games, cls: "num"},
    ], t.solo_ranking, {id: "ratings-table"});
  }
  return h("p", {class: "muted"}, "computed once every match is over");
}

/** A row per bot, a column per opponent: the row bot's pair scores against it. */
function crossTableView(cross) {
  const {bots, names, cells} = cross;
  if (bots.length < 2) return h("p", {class: "muted"}, "no pairings");
  const cell = (a, b) => {
    const value = (cells[a] || {})[b];
    return value === undefined ? "" : fmt(value, Number.isInteger(value) ? 0 : 1);
  };
  return h("table", {class: "crosstable", id: "crosstable-table"},
    h("thead", null, h("tr", null, h("th", null, ""), bots.map(b => h("th", null, names[b] || b)))),
    h("tbody", null, bots.map(a => h("tr", null, h("th", null, names[a] || a),
      bots.map(b => h("td", {class: a === b ? "self" : ""}, a === b ? "" : cell(a, b)))))));
}

function matchLinks(ids) {
  if (!ids.length) return h("p", {class: "muted"}, "none");
  return h("p", {class: "match-links"}, ids.map(id => [uiLink(`matches/${id}`, id), " "]));
}

async function refresh(id) {
  let t;
  try {
    t = await api(`/tournaments/${encodeURIComponent(id)}`);
  } catch (error) {
    setChildren(document.getElementById("progress"), errorBox(error));
    return;
  }
  document.getElementById("title").textContent = `Tournament ${t.name || t.id}`;
  setChildren(document.getElementById("progress"), progressView(t));
  setChildren(document.getElementById("standings"), standingsView(t.standings));
  setChildren(document.getElementById("ratings"), ratingsView(t));
  setChildren(document.getElementById("crosstable"), crossTableView(t.cross_table));
  setChildren(document.getElementById("matches"), matchLinks(t.matches));
  if (t.status !== "finished") setTimeout(() => refresh(id), REFRESH_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  refresh(document.getElementById("title").dataset.tournament);
});

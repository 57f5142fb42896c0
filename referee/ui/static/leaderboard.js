/* A game's leaderboard: ratings with their intervals and a rating-history plot (the latest
   points of the best bots, each read from GET /ratings/{game}/history), redrawn whenever it
   changes (GET /ratings/{game}/events), with the game's recent matches. */
"use strict";

const MAX_DOTS = 60;  // a dot per rated match while there are few, else only the last
const PLOTTED_BOTS = 10;  // the best bots get a line each
const PLOTTED_POINTS = 200;  // their latest rated matches

function intervalBar(entry, lo, hi) {
  const width = 140, height = 14;
  const x = value => (hi === lo ? width / 2 : (value - lo) / (hi - lo) * width);
  const low = entry.low ?? entry.rating, high = entry.high ?? entry.rating;
  const interval = entry.low === null ? "" : s("rect", {x: x(low), y: 3,
    width: Math.max(2, x(high) - x(low)), height: height - 6, rx: 3, fill: "#e9c9a8"});
  return svgRoot(width, height, {class: "interval"},
    s("line", {x1: 0, x2: width, y1: height / 2, y2: height / 2, stroke: "#ddd5c8"}),
    interval,
    s("circle", {cx: x(entry.rating), cy: height / 2, r: 4, fill: "#b5562b"}));
}

function leaderboardTable(board, colourOf) {
  if (!board.length) return h("p", {class: "muted"}, "no rated bots yet");
  const lows = board.map(e => e.low ?? e.rating), highs = board.map(e => e.high ?? e.rating);
  const lo = Math.min(...lows), hi = Math.max(...highs);
  return table([
    {title: "#", cell: (e, i) => i + 1, cls: "num"},
    {title: "bot", cell: e => h("span", null,
      swatch(colourOf(e.bot_id)), botLink(e.bot_id, e.name))},
    {title: "rating", cell: e => fmt(e.rating), cls: "num"},
    {title: "95% interval", cell: e => e.low === null ? "–" : `${fmt(e.low)} – ${fmt(e.high)}`,
      cls: "num"},
    {title: "", cell: e => intervalBar(e, lo, hi)},
    {title: "games", cell: e => e.games ?? "–", cls: "num"},
    {title: "μ ± σ", cell: e => muSigma(e), cls: "num"},
  ], board, {class: "leaderboard", id: "leaderboard-table"});
}

/** A line per bot: its rating after each of its latest games (common.js's seriesPlot). */
function historyPlot(history, nameOf, colourOf) {
  const series = Object.entries(history || {}).map(([botId, points]) =>
    ({key: botId, name: nameOf(botId), colour: colourOf(botId), points}));
  return seriesPlot(series, {id: "history-plot", label: "rating history",
    xLabel: "games played", dots: MAX_DOTS, empty: "no rating history yet"});
}

/** The latest points of each of the best bots: bot id -> [[n, rating], ...]. */
async function latestHistories(game, board) {
  const plotted = board.slice(0, PLOTTED_BOTS).filter(e => e.games > 0);
  const pages = await Promise.all(plotted.map(e => api(
    `/ratings/${encodeURIComponent(game)}/history?bot=${encodeURIComponent(e.bot_id)}` +
    `&offset=${Math.max(0, e.games - PLOTTED_POINTS)}&limit=${PLOTTED_POINTS}`)));
  return Object.fromEntries(pages.map(page => [page.bot_id, page.history]));
}

let drawn = 0;  // the latest drawing asked for: an older one finishing late is not shown

async function drawLeaderboard(game, body) {
  const turn = ++drawn;
  const board = body.leaderboard || [];
  const colourOf = colourKeeper(board.map(e => e.bot_id));
  const names = new Map(board.map(e => [e.bot_id, e.name || e.bot_id]));
  setChildren(document.getElementById("leaderboard"), leaderboardTable(board, colourOf));
  const history = await latestHistories(game, board);
  if (turn === drawn) {
    setChildren(document.getElementById("history"),
      historyPlot(history, id => names.get(id) || id, colourOf));
  }
}

async function gameMatches(game) {
  const {matches} = await api(`/matches?game=${encodeURIComponent(game)}&limit=20`);
  return matchesTable(matches);
}

/** The leaderboard as the stream sends it: first as it is, then after every change
    (with the recent matches read again). */
function followLeaderboard(game) {
  let first = true;
  followEvents(`/ratings/${encodeURIComponent(game)}/events`, {
    onEvent(name, body) {
      if (name !== "leaderboard") return true;
      drawLeaderboard(game, body).catch(error => {
        setChildren(document.getElementById("history"), errorBox(error));
      });
      if (!first) fill("matches", () => gameMatches(game));
      first = false;
      return true;
    },
    onProblem(error) {
      setChildren(document.getElementById("leaderboard"), errorBox(error));
      document.getElementById("history").replaceChildren();
    },
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const game = document.getElementById("title").dataset.game;
  followLeaderboard(game);
  fill("matches", () => gameMatches(game));
});

/* A game's leaderboard: ratings with their intervals and a rating-history plot (the latest
   points of the best bots, each read from GET /ratings/{game}/history), redrawn whenever it
   changes (GET /ratings/{game}/events), with the game's recent matches. */
"use strict";

const MAX_DOTS = 60;  // a dot per rated match while there are few, else only the last
const PLOTTED_BOTS = 10;  // the best bots get a line each
const PLOTTED_POINTS = 200;  // their latest rated matches
const PLOT = {width: 820, height: 360, left: 56, right: 170, top: 16, bottom: 40};

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
      swatch(colourOf(e.bot_id)), e.name || e.bot_id)},
    {title: "rating", cell: e => fmt(e.rating), cls: "num"},
    {title: "95% interval", cell: e => e.low === null ? "–" : `${fmt(e.low)} – ${fmt(e.high)}`,
      cls: "num"},
    {title: "", cell: e => intervalBar(e, lo, hi)},
    {title: "games", cell: e => e.games ?? "–", cls: "num"},
  ], board, {class: "leaderboard", id: "leaderboard-table"});
}

function niceTicks(lo, hi, count) {
  const span = hi - lo || 1;
  const step0 = span / count, magnitude = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 5, 10].map(m => m * magnitude).find(m => m >= step0);
  const ticks = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) ticks.push(v);
  return ticks;
}

/** An SVG line plot of every bot's rating after each of its games. */
function historyPlot(history, nameOf, colourOf) {
  const series = Object.entries(history || {}).filter(([, points]) => points.length);
  if (!series.length) return h("p", {class: "muted"}, "no rating history yet");
  const all = series.flatMap(([, points]) => points);
  const xs = all.map(p => p[0]), ys = all.map(p => p[1]);
  const xlo = Math.min(...xs), xhi = Math.max(...xs, xlo + 1);
  const pad = Math.max(10, (Math.max(...ys) - Math.min(...ys)) * 0.08);
  const ylo = Math.min(...ys) - pad, yhi = Math.max(...ys) + pad;
  const {width, height, left, right, top, bottom} = PLOT;
  const px = x => left + (x - xlo) / (xhi - xlo) * (width - left - right);
  const py = y => top + (yhi - y) / (yhi - ylo) * (height - top - bottom);
  const svg = svgRoot(width, height, {id: "history-plot", role: "img",
    "aria-label": "rating history"});
  for (const tick of niceTicks(ylo, yhi, 6)) {
    svg.append(s("line", {x1: left, x2: width - right, y1: py(tick), y2: py(tick),
      stroke: "#eee7dc"}));
    svg.append(s("text", {x: left - 6, y: py(tick) + 4, "text-anchor": "end", "font-size": 11,
      fill: "#7a736a"}, fmt(tick)));
  }
  for (const tick of niceTicks(xlo, xhi, 8).filter(t => Number.isInteger(t))) {
    svg.append(s("text", {x: px(tick), y: height - bottom + 16, "text-anchor": "middle",
      "font-size": 11, fill: "#7a736a"}, tick));
  }
  svg.append(s("text", {x: (left + width - right) / 2, y: height - 6, "text-anchor": "middle",
    "font-size": 12, fill: "#7a736a"}, "games played"));
  svg.append(s("line", {x1: left, x2: left, y1: top, y2: height - bottom, stroke: "#b9b0a3"}));
  svg.append(s("line", {x1: left, x2: width - right, y1: height - bottom, y2: height - bottom,
    stroke: "#b9b0a3"}));
  series.forEach(([botId, points], index) => {
    const colour = colourOf(botId);
    const d = points.map((p, i) => `${i ? "L" : "M"}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`);
    svg.append(s("path", {d: d.join(" "), fill: "none", stroke: colour, "stroke-width": 2.2,
      class: "series", "data-bot": botId}));
    const [lastX, lastY] = points[points.length - 1];
    const dots = points.length <= MAX_DOTS ? points : [points[points.length - 1]];
    for (const [x, y] of dots) svg.append(s("circle", {cx: px(x), cy: py(y), r: 3.2, fill: colour}));
    const ly = top + 14 + index * 18;
    svg.append(s("rect", {x: width - right + 14, y: ly - 9, width: 12, height: 12, rx: 2,
      fill: colour}));
    svg.append(s("text", {x: width - right + 32, y: ly + 1, "font-size": 12, fill: "#23201c"},
      `${nameOf(botId)} (${fmt(lastY)})`));
  });
  return svg;
}

function botColours(ids) {
  const palette = ["#b5562b", "#2a5db0", "#2e7d32", "#7b3fc4", "#d0246e", "#0a8f94",
    "#c49a00", "#5d4037", "#546e7a", "#e8780c"];
  const map = new Map(ids.map((id, i) => [id, palette[i % palette.length]]));
  return id => map.get(id) || "#9aa0a6";
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
  const colourOf = botColours(board.map(e => e.bot_id));
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

/* A ladder: its settings, the standings (μ ± σ, ordinal), a plot of the leaders' ordinal
   after each counted match (GET /ladders/{id}/history), the entries not simply in play
   with their reasons, and the recent matches. Followed live (GET /ladders/{id}/events):
   `standings` redraws the table and the plot, `match` extends the plot's lines with the
   points after the last match seen and reads the matches again, `entry` updates the
   entries. */
"use strict";

const LEADERS = 5;  // the best entries get a line each
const RECENT = 20;  // matches listed

const ladder = {
  id: null,
  view: null,  // the latest standings (the body of GET /ladders/{id})
  entries: new Map(),  // bot id -> entry
  history: new Map(),  // bot id -> [[n, ordinal], ...], oldest first
  seen: 0,  // the last counted match whose points are read
  colourOf: colourKeeper(),  // a leader keeps its colour while the page is open
};

const ladderPath = suffix => `/ladders/${encodeURIComponent(ladder.id)}${suffix}`;

function settingsView(view) {
  return h("p", {class: "facts"},
    statusBadge(view.paused ? "paused" : "running", "ladder-status"),
    h("span", null, "game ", uiLink(`games/${view.game}`, view.game)),
    h("span", null, `${view.players} players per match`),
    h("span", null, `concurrency ${view.concurrency}`),
    h("span", {id: "ladder-counted"}, `${view.counted} matches counted`),
    h("span", {id: "ladder-running"}, `${view.running} running`),
    h("span", null, `${view.scheduled} scheduled`));
}

function leaders() {
  return ladder.view ? ladder.view.standings.slice(0, LEADERS) : [];
}

function standingsTable(standings) {
  if (!standings.length) return h("p", {class: "muted"}, "no entry in play yet");
  const plotted = new Set(leaders().map(row => row.bot));
  return table([
    {title: "#", cell: (row, i) => i + 1, cls: "num"},
    {title: "bot", cell: row => h("span", null,
      plotted.has(row.bot) ? swatch(ladder.colourOf(row.bot)) : "", botLink(row.bot, row.name))},
    {title: "version", cell: row => row.version, cls: "num"},
    {title: "μ ± σ", cell: row => muSigma(row), cls: "num"},
    {title: "ordinal", cell: row => fmt(row.ordinal, 2), cls: "num"},
    {title: "matches", cell: row => row.matches, cls: "num"},
    {title: "status", cell: row => statusBadge(row.status)},
    {title: "last match", cell: row => when(row.last_match_at)},
  ], standings, {id: "standings-table"});
}

/** The entries under check, rejected, suspended or gone, and those whose new version is
    under check or was refused. */
function entriesView(entries) {
  const shown = entries.filter(e => e.status !== "active" || e.checking !== null
    || e.reasons.length);
  if (!shown.length) return h("p", {class: "muted"}, "every entry is in play");
  return table([
    {title: "bot", cell: e => botLink(e.bot, e.name)},
    {title: "status", cell: e => statusBadge(e.status)},
    {title: "version", cell: e => e.version ?? "–", cls: "num"},
    {title: "checking", cell: e => e.checking === null ? "" : `version ${e.checking}`},
    {title: "reasons", cell: e => h("ul", {class: "reasons"}, e.reasons.map(r => h("li", null, r)))},
  ], shown, {id: "entries-table"});
}

function historyPlot() {
  const series = leaders().map(row => ({key: row.bot, name: row.name,
    colour: ladder.colourOf(row.bot), points: ladder.history.get(row.bot) || []}));
  return seriesPlot(series, {id: "ladder-plot", label: "the leaders' ordinal after each counted match",
    xLabel: "matches counted", digits: 2, pad: 0.5, steps: true, xEnd: ladder.seen,
    empty: "no counted match yet"});
}

function drawPlot() {
  setChildren(document.getElementById("ladder-history"), historyPlot());
}

function drawEntries() {
  setChildren(document.getElementById("entries"), entriesView([...ladder.entries.values()]));
}

function showStandings(view) {
  ladder.view = view;
  document.getElementById("title").textContent = `Ladder ${view.name || view.id}`;
  setChildren(document.getElementById("settings"), settingsView(view));
  setChildren(document.getElementById("standings"), standingsTable(view.standings));
  drawPlot();
}

/** Read the points after the last counted match seen, add them to the lines, redraw. */
const extendHistory = coalesced(async () => {
  try {
    const after = ladder.seen;
    const {points} = await api(ladderPath(`/history?since=${after + 1}`));
    for (const [n, bot, ordinal] of points.filter(point => point[0] > after)) {
      if (!ladder.history.has(bot)) ladder.history.set(bot, []);
      ladder.history.get(bot).push([n, ordinal]);
      ladder.seen = Math.max(ladder.seen, n);
    }
    drawPlot();
  } catch (error) {
    setChildren(document.getElementById("ladder-history"), errorBox(error));
  }
});

const refreshMatches = coalesced(() => fill("matches", async () =>
  matchesTable((await api(ladderPath(`/matches?limit=${RECENT}`))).matches)));

/** The entries as listed; one an event told of meanwhile is kept as the event said. */
async function readEntries() {
  const {entries} = await api(ladderPath("/entries?limit=200"));
  for (const entry of entries) {
    if (!ladder.entries.has(entry.bot)) ladder.entries.set(entry.bot, entry);
  }
  drawEntries();
}

function followLadder() {
  followEvents(ladderPath("/events"), {
    onEvent(name, data) {
      if (name === "standings") {
        showStandings(data);
        if (data.counted > ladder.seen) extendHistory();
      } else if (name === "match") {
        extendHistory();
        refreshMatches();
      } else if (name === "entry") {
        ladder.entries.set(data.bot, data);
        drawEntries();
      }
      return true;
    },
    onProblem(error) {
      setChildren(document.getElementById("settings"), errorBox(error));
    },
  });
}

document.addEventListener("DOMContentLoaded", () => {
  ladder.id = document.getElementById("title").dataset.ladder;
  followLadder();
  readEntries().catch(error => setChildren(document.getElementById("entries"), errorBox(error)));
  refreshMatches();
});

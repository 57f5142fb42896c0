/* A tournament: progress, the format's own view (SPRT: the LLR over the pairs, the
   pentanomial and the decision; Swiss: rounds and Buchholz), standings, ratings and the
   cross-table; while it runs, followed live (GET /tournaments/{id}/events): each counted
   match and the new table redraw the page. */
"use strict";

const FORMAT_NAMES = {round_robin: "round-robin", gauntlet: "gauntlet", swiss: "Swiss",
  sprt: "SPRT"};
const PENTANOMIAL = ["LL", "LD", "WL+DD", "WD", "WW"];
const LLR_PLOT = {width: 640, height: 260, left: 48, right: 16, top: 14, bottom: 34};

function progressView(t) {
  const {done, total, failed, running = 0} = t.progress;
  const part = n => total ? `${(100 * n / total).toFixed(2)}%` : "0%";
  return h("div", null,
    h("p", {class: "facts"},
      statusBadge(t.status, "tournament-status"),
      h("span", {id: "tournament-format"}, FORMAT_NAMES[t.format] || t.format),
      h("span", null, "game ", uiLink(`games/${t.game}`, t.game)),
      t.format === "sprt" ? h("span", null, t.players === 1 ? "solo pairs" : "pairs of 2-seat matches")
        : h("span", null, `${t.players} players per match, ${t.rounds} round${t.rounds > 1 ? "s" : ""}`),
      t.challenger ? h("span", null, "challenger ", h("b", null, botName(t, t.challenger))) : "",
      h("span", null, `${t.deals} deals`),
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
    {title: "bot", cell: row => botLink(row.bot_id, row.name)},
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
      {title: "bot", cell: row => botLink(row.bot_id, row.name)},
      {title: "rating", cell: row => fmt(row.rating), cls: "num"},
      {title: "95% interval", cell: row => `${fmt(row.low)} – ${fmt(row.high)}`, cls: "num"},
      {title: "games", cell: row => row.games, cls: "num"},
    ], t.ratings, {id: "ratings-table"});
  }
  if (t.solo_ranking) {
    return table([
      {title: "bot", cell: row => botLink(row.bot_id, row.name)},
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

function botName(t, botId) {
  const bot = t.bots.find(b => b.bot_id === botId);
  return bot ? bot.name : botId;
}

/** The LLR after each counted pair, between the bounds where the test stops. */
function llrPlot(sprt) {
  const points = sprt.history.map(([pairs, llr]) => [pairs, llr]);
  const {width, height, left, right, top, bottom} = LLR_PLOT;
  const ys = [sprt.lower, sprt.upper, 0, ...points.map(p => p[1])];
  const ylo = Math.min(...ys) * 1.1, yhi = Math.max(...ys) * 1.1;
  const xhi = Math.max(1, ...points.map(p => p[0]));
  const px = x => left + x / xhi * (width - left - right);
  const py = y => top + (yhi - y) / (yhi - ylo) * (height - top - bottom);
  const svg = svgRoot(width, height, {id: "llr-plot", role: "img",
    "aria-label": "log-likelihood ratio after each pair"});
  const level = (y, label, colour, dash) => {
    svg.append(s("line", {x1: left, x2: width - right, y1: py(y), y2: py(y), stroke: colour,
      "stroke-dasharray": dash, class: "bound"}));
    svg.append(s("text", {x: left - 6, y: py(y) + 4, "text-anchor": "end", "font-size": 11,
      fill: colour}, label));
  };
  level(sprt.upper, `H1 ${fmt(sprt.upper, 2)}`, "#2f7d32", "6 4");
  level(0, "0", "#b9b0a3", null);
  level(sprt.lower, `H0 ${fmt(sprt.lower, 2)}`, "#b23a2e", "6 4");
  svg.append(s("line", {x1: left, x2: left, y1: top, y2: height - bottom, stroke: "#b9b0a3"}));
  svg.append(s("text", {x: (left + width - right) / 2, y: height - 6, "text-anchor": "middle",
    "font-size": 12, fill: "#7a736a"}, `pairs (${xhi})`));
  if (points.length) {
    const d = [[0, 0], ...points].map((p, i) =>
      `${i ? "L" : "M"}${px(p[0]).toFixed(1)},${py(p[1]).toFixed(1)}`);
    svg.append(s("path", {d: d.join(" "), fill: "none", stroke: "#23201c", "stroke-width": 2,
      class: "llr"}));
  }
  return svg;
}

function sprtView(t) {
  const r = t.sprt;
  const decision = r.decision === null
    ? (t.status === "finished" ? "no decision (max_matches reached)" : "running")
    : `${r.decision} accepted after ${r.decided_after} pairs`;
  return h("div", null,
    h("p", {class: "facts"},
      h("span", null, "decision ", h("b", {id: "sprt-decision"}, decision)),
      h("span", {id: "sprt-llr"}, `LLR ${fmt(r.llr, 2)} (${fmt(r.lower, 2)}, ${fmt(r.upper, 2)}) ` +
        `[${fmt(r.elo0, 2)}, ${fmt(r.elo1, 2)}]`),
      h("span", {id: "sprt-elo"}, `Elo ${fmt(r.elo, 1)} ± ${fmt((r.elo_high - r.elo_low) / 2, 1)}`),
      h("span", null, `${r.games} games in ${r.pairs} pairs`),
      r.void_pairs ? h("span", null, `${r.void_pairs} void pairs`) : ""),
    llrPlot(r),
    table(PENTANOMIAL.map((title, i) => ({title, cell: row => row[i], cls: "num"})),
      [r.pentanomial], {id: "pentanomial-table"}));
}

function swissView(t) {
  const name = id => botName(t, id);
  const rounds = h("div", {id: "swiss-rounds"}, t.swiss.rounds.map(round =>
    h("p", {class: "swiss-round"}, h("b", null, `round ${round.round}: `),
      round.pairings.map(p => [name(p.bots[0]), " – ", name(p.bots[1]), " (",
        p.matches.map((m, i) => [i ? ", " : "", uiLink(`matches/${m}`, i + 1)]), ") "]),
      round.bye ? `bye: ${name(round.bye)}` : "")));
  const standings = table([
    {title: "#", cell: row => row.rank, cls: "num"},
    {title: "bot", cell: row => botLink(row.bot_id, row.name)},
    {title: "points", cell: row => fmt(row.points, 1), cls: "num"},
    {title: "Buchholz", cell: row => fmt(row.buchholz, 1), cls: "num"},
    {title: "byes", cell: row => row.byes, cls: "num"},
    {title: "opponents", cell: row => row.opponents.map(name).join(", ")},
  ], t.swiss.standings, {id: "swiss-table"});
  return h("div", null, standings, rounds);
}

function formatSection(t) {
  const section = document.getElementById("format-section");
  const view = t.sprt ? sprtView(t) : t.swiss ? swissView(t) : null;
  section.hidden = view === null;
  document.getElementById("format-title").textContent = t.sprt ? "SPRT" : "Swiss rounds";
  if (view) setChildren(document.getElementById("format"), view);
}

function matchLinks(ids, total) {
  if (!ids.length) return h("p", {class: "muted"}, "none");
  const more = total > ids.length ? h("span", {class: "muted", id: "more-matches"},
    `(the first ${ids.length} of ${total})`) : "";
  return h("p", {class: "match-links"}, ids.map(id => [uiLink(`matches/${id}`, id), " "]), more);
}

function render(t) {
  document.getElementById("title").textContent = `Tournament ${t.name || t.id}`;
  setChildren(document.getElementById("progress"), progressView(t));
  formatSection(t);
  setChildren(document.getElementById("standings"), standingsView(t.standings));
  setChildren(document.getElementById("ratings"), ratingsView(t));
  setChildren(document.getElementById("crosstable"), crossTableView(t.cross_table));
  setChildren(document.getElementById("matches"), matchLinks(t.matches, t.matches_total));
}

/** Redraw with each table the stream sends (the matches it announces added to the list),
    and read the whole tournament once more at the end. */
function followTournament(t) {
  let shown = t;
  followEvents(`/tournaments/${encodeURIComponent(t.id)}/events`, {
    onEvent(name, data) {
      const whole = shown.matches.length === shown.matches_total;  // not only the first
      if (name === "match" && whole && !shown.matches.includes(data.match_id)) {
        shown = {...shown, matches: [...shown.matches, data.match_id],
          matches_total: shown.matches_total + 1};
      } else if (name === "standings") {
        shown = {...shown, ...data};
        render(shown);
      } else if (name === "finished") {
        showTournament(t.id);
        return false;
      }
      return true;
    },
  });
}

async function showTournament(id) {
  let t;
  try {
    t = await api(`/tournaments/${encodeURIComponent(id)}`);
  } catch (error) {
    setChildren(document.getElementById("progress"), errorBox(error));
    return null;
  }
  render(t);
  return t;
}

document.addEventListener("DOMContentLoaded", async () => {
  const t = await showTournament(document.getElementById("title").dataset.tournament);
  if (t && t.status !== "finished") followTournament(t);
});

/* A tournament: progress (refreshed while it runs), standings and the cross-table. */
"use strict";

const REFRESH_MS = 2000;
const OVER = new Set(["finished", "failed", "cancelled"]);

function progressOf(t) {
  const p = t.progress || t;
  return {done: p.done ?? 0, total: p.total ?? 0, failed: p.failed ?? 0};
}

function progressView(t) {
  const {done, total, failed} = progressOf(t);
  const part = n => total ? `${(100 * n / total).toFixed(1)}%` : "0%";
  return h("div", null,
    h("p", null, h("span", {class: `status ${t.status}`}, t.status || ""), " ",
      t.game ? uiLink(`games/${t.game}`, `${t.game} leaderboard`) : ""),
    h("div", {class: "progress", id: "progress-bar", title: `${done}/${total}`},
      h("div", {class: "done", style: `width:${part(done - failed)}`}),
      h("div", {class: "failed", style: `width:${part(failed)}`})),
    h("p", {id: "progress-text"}, `${done} of ${total} matches done`,
      failed ? `, ${failed} failed` : ""));
}

function standingsView(standings) {
  if (!standings || !standings.length) return h("p", {class: "muted"}, "no results yet");
  const has = key => standings.some(row => row[key] !== undefined);
  const columns = [
    {title: "#", cell: (row, i) => row.rank ?? i + 1, cls: "num"},
    {title: "bot", cell: row => row.name || row.bot_id},
  ];
  const optional = [["rating", "rating", 0], ["points", "points", 1], ["score", "score", 1],
    ["wins", "wins", 0], ["draws", "draws", 0], ["losses", "losses", 0], ["games", "games", 0]];
  for (const [key, title, digits] of optional) {
    if (has(key)) columns.push({title, cell: row => fmt(row[key], digits), cls: "num"});
  }
  if (has("low")) {
    columns.splice(3, 0, {title: "95% interval", cls: "num",
      cell: row => row.low === undefined ? "–" : `${fmt(row.low)} – ${fmt(row.high)}`});
  }
  return table(columns, standings, {id: "standings-table"});
}

/** The cross-table: a row per bot, a column per opponent, a cell per pairing's record. */
function crossTableView(cross, standings) {
  if (!cross) return h("p", {class: "muted"}, "no cross-table yet");
  const bots = cross.bots || (standings || []).map(row => row.bot_id);
  const names = new Map((standings || []).map(row => [row.bot_id, row.name || row.bot_id]));
  (cross.names ? Object.entries(cross.names) : []).forEach(([id, name]) => names.set(id, name));
  const cellOf = (a, b) => {
    if (Array.isArray(cross.cells)) return cross.cells[bots.indexOf(a)][bots.indexOf(b)];
    const rows = cross.cells || cross.table || cross;
    return rows[a] ? rows[a][b] : undefined;
  };
  const text = cell => {
    if (cell === undefined || cell === null) return "";
    if (typeof cell !== "object") return fmt(cell, Number.isInteger(cell) ? 0 : 1);
    if (cell.wins !== undefined) return `${cell.wins}–${cell.draws ?? 0}–${cell.losses ?? 0}`;
    if (cell.score !== undefined) return `${fmt(cell.score, 1)}/${cell.games ?? ""}`;
    return JSON.stringify(cell);
  };
  return h("table", {class: "crosstable", id: "crosstable-table"},
    h("thead", null, h("tr", null, h("th", null, ""), bots.map(b => h("th", null, names.get(b) || b)))),
    h("tbody", null, bots.map(a => h("tr", null, h("th", null, names.get(a) || a),
      bots.map(b => h("td", {class: a === b ? "self" : ""}, a === b ? "" : text(cellOf(a, b))))))));
}

async function refresh(id) {
  const box = document.getElementById("progress");
  let t;
  try {
    t = await api(`/tournaments/${encodeURIComponent(id)}`);
  } catch (error) {
    setChildren(box, errorBox(error));
    return;
  }
  setChildren(box, progressView(t));
  setChildren(document.getElementById("standings"), standingsView(t.standings));
  setChildren(document.getElementById("crosstable"),
    crossTableView(t.cross_table || t.crosstable, t.standings));
  const matches = t.matches || [];
  setChildren(document.getElementById("matches"), matches.length
    ? h("p", null, matches.map(m => typeof m === "string" ? m : m.id || m.match_id)
      .filter(Boolean).map(mid => h("span", null, uiLink(`matches/${mid}`, mid), " ")))
    : h("p", {class: "muted"}, ""));
  if (!OVER.has(t.status)) setTimeout(() => refresh(id), REFRESH_MS);
}

document.addEventListener("DOMContentLoaded", () => {
  refresh(document.getElementById("title").dataset.tournament);
});

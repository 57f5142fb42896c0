/* Shared helpers of the referee pages: API calls, DOM and SVG builders, seat colours. */
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
// Where the API and the pages are (the page's data attributes: no inline script, which the
// pages' Content-Security-Policy forbids)
window.REFEREE = {api: document.documentElement.dataset.api,
                  ui: document.documentElement.dataset.ui};
const SEAT_COLOURS = ["#e8780c", "#7b3fc4", "#0a8f94", "#d0246e"];

/** A JSON document of the API (GET, or `method` with a JSON `body`; with a bearer `token`
    when given); throws an Error carrying the problem's detail (and `status`, `detail`). */
async function api(path, {token = null, method = "GET", body} = {}) {
  const headers = {Accept: "application/json"};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(window.REFEREE.api + path,
    {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
  let answer = null;
  try { answer = await response.json(); } catch (_) { answer = null; }
  if (!response.ok) {
    const detail = answer && (answer.detail || answer.title) || response.statusText;
    const error = new Error(`${path}: ${response.status} ${detail}`);
    error.status = response.status;
    error.detail = detail;
    throw error;
  }
  return answer;
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));

/** One Server-Sent Event block ("event: …\nid: …\ndata: …") as {name, id, data, retry}. */
function parseEventBlock(block) {
  const event = {name: "message", id: undefined, data: undefined, retry: undefined};
  const data = [];
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const key = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (key === "event") event.name = value;
    else if (key === "id") event.id = value;
    else if (key === "data") data.push(value);
    else if (key === "retry" && /^[0-9]+$/.test(value)) event.retry = Number(value);
  }
  if (data.length) event.data = data.join("\n");
  return event;
}

/** Follow an event stream of the API, as EventSource does (reconnecting with the last
    event's id in Last-Event-ID, after the server's `retry`), but with fetch, so that a seat
    token travels in the Authorization header and never in an address. Calls
    onEvent(name, data, id) for each event (returning false stops following) and
    onProblem(error) when the server refuses the stream (4xx: not retried). */
function followEvents(path, {token = null, onEvent, onProblem = () => null}) {
  const controller = new AbortController();
  const follow = {stopped: false, lastId: null, retryMs: 3000,
    close() { follow.stopped = true; controller.abort(); }};
  const headers = () => Object.assign({Accept: "text/event-stream"},
    token ? {Authorization: `Bearer ${token}`} : {},
    follow.lastId !== null ? {"Last-Event-ID": follow.lastId} : {});

  async function readStream(response) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const {value, done} = await reader.read();
      if (done || follow.stopped) return;
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while (!follow.stopped && (end = buffer.indexOf("\n\n")) >= 0) {
        const event = parseEventBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (event.retry !== undefined) follow.retryMs = event.retry;
        if (event.id !== undefined) follow.lastId = event.id;
        if (event.data !== undefined && onEvent(event.name, JSON.parse(event.data), event.id) === false) {
          follow.close();
        }
      }
    }
  }

  (async () => {
    while (!follow.stopped) {
      try {
        const response = await fetch(window.REFEREE.api + path,
          {headers: headers(), signal: controller.signal, cache: "no-store"});
        if (response.status >= 400 && response.status < 500) {
          const body = await response.json().catch(() => null);
          const error = new Error(body && (body.detail || body.title) || response.statusText);
          error.status = response.status;
          follow.stopped = true;
          onProblem(error);
          return;
        }
        if (response.ok) await readStream(response);
      } catch (_) {
        // a dropped connection: reconnect below, as EventSource does
      }
      if (!follow.stopped) await sleep(follow.retryMs);
    }
  })();
  return follow;
}

/** "key=value ..." with each value as JSON. */
function keyValues(fields) {
  return Object.entries(fields).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" ");
}

function actionText(action) {
  if (!action) return "";
  const {type, ...rest} = action;
  const args = keyValues(rest);
  return args ? `${type} ${args}` : type;
}

function eventText(event) {
  const {type, event: name, seat, ...rest} = event;
  return `${type || name || ""} ${keyValues(rest)}`.trim();
}

let gameListRequest = null;

/** The API's list of games, requested once per page (the navigation and the index share it). */
function gameList() {
  gameListRequest ??= api("/games").then(body => body.games);
  return gameListRequest;
}

/** Fill the element `id` with what `build()` returns, or with the error it throws. */
async function fill(id, build) {
  const box = document.getElementById(id);
  try {
    setChildren(box, await build());
  } catch (error) {
    setChildren(box, errorBox(error));
  }
}

function setChildren(node, ...children) {
  node.replaceChildren();
  appendChildren(node, children);
  return node;
}

function appendChildren(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function applyAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "style") node.style.cssText = value;  // CSSOM: allowed by the CSP
    else node.setAttribute(key, value === true ? "" : value);
  }
}

/** An HTML element: h("a", {href: "/"}, "text", child, ...). */
function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  applyAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}

/** An SVG element: s("circle", {cx: 1, cy: 2, r: 3}). */
function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  applyAttrs(node, attrs);
  appendChildren(node, children);
  return node;
}

function svgRoot(width, height, attrs, ...children) {
  return s("svg", {viewBox: `0 0 ${width} ${height}`, width, height, ...attrs}, ...children);
}

function seatColour(seat) {
  return seat === null || seat === undefined ? "#9aa0a6" : SEAT_COLOURS[seat % SEAT_COLOURS.length];
}

/** A small square of colour, e.g. a seat's. */
function swatch(colour) {
  return h("span", {class: "swatch", style: `background:${colour}`});
}

/** A seat's panel on a game board: the seat's colour, name and "to move" badge above
    `children`; `own` marks the seat the replay is viewed as. */
function seatPanelFrame(kind, seat, own, observation, context, ...children) {
  const toMove = observation.to_move === seat;
  const name = (context.seats[seat] || {}).name || `seat ${seat}`;
  return h("div", {class: `panel ${kind} ${toMove ? "to-move" : ""} ${own ? "viewer-seat" : ""}`,
    "data-seat": seat},
    h("h3", null, swatch(seatColour(seat)), `seat ${seat} · ${name}`,
      toMove ? h("span", {class: "badge"}, "to move") : ""),
    children);
}

function uiLink(path, text) {
  return h("a", {href: window.REFEREE.ui + path.replace(/^\//, "")}, text);
}

/** A match's or tournament's status as a coloured label. */
function statusBadge(status, id) {
  return h("span", {class: `status ${status}`, id}, status);
}

function errorBox(error) {
  return h("p", {class: "error"}, String(error.message || error));
}

/** A table from column specs [{title, cell: row => node|text, cls}] and rows. */
function table(columns, rows, attrs) {
  return h("table", attrs,
    h("thead", null, h("tr", null, columns.map(c => h("th", {class: c.cls}, c.title)))),
    h("tbody", null, rows.map((row, i) =>
      h("tr", null, columns.map(c => h("td", {class: c.cls}, c.cell(row, i)))))));
}

function fmt(value, digits = 0) {
  return typeof value === "number" ? value.toFixed(digits) : (value ?? "–");
}

/** The seat names of a match as "a vs b vs c". */
function seatNames(match) {
  return (match.seats || []).map(seat => seat.name).join(" vs ");
}

/** "#1 alice (52) · #2 bob (40)": the seats by rank, with their scores. */
function matchResult(match) {
  if (!match.result) return match.status;
  const name = seat => (match.seats[seat] || {}).name || `seat ${seat}`;
  return match.result.ranks.map((rank, seat) => ({rank, seat}))
    .sort((a, b) => a.rank - b.rank || a.seat - b.seat)
    .map(({rank, seat}) => `#${rank} ${name(seat)} (${fmt(match.result.scores[seat])})`)
    .join(" · ");
}

/** A Weng-Lin skill as "27.31 ± 1.20". */
function muSigma(skill) {
  return typeof skill.mu === "number" ? `${fmt(skill.mu, 2)} ± ${fmt(skill.sigma, 2)}` : "–";
}

function when(timestamp) {
  return timestamp ? timestamp.replace("T", " ").slice(0, 19) : "";
}

/** A table of matches linking to their replay pages. */
function matchesTable(matches) {
  if (!matches.length) return h("p", {class: "muted"}, "no matches yet");
  return table([
    {title: "match", cell: m => uiLink(`matches/${m.id}`, m.id)},
    {title: "game", cell: m => m.game},
    {title: "seats", cell: m => seatNames(m)},
    {title: "status", cell: m => statusBadge(m.status)},
    {title: "steps", cell: m => m.step, cls: "num"},
    {title: "result", cell: m => matchResult(m)},
  ], matches, {class: "matches"});
}

/** A bot's name linking to its page (plain text without an id). */
function botLink(botId, name) {
  return botId ? uiLink(`bots/${encodeURIComponent(botId)}`, name || botId) : (name ?? "");
}

/** `task` run one at a time: a call while it runs asks for one more run once it is done. */
function coalesced(task) {
  let running = null, again = false;
  return () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await task();
      } while (again);
    })().finally(() => { running = null; });
    return running;
  };
}

// ----- line plots ---------------------------------------------------------------------

const PLOT_PALETTE = ["#b5562b", "#2a5db0", "#2e7d32", "#7b3fc4", "#d0246e", "#0a8f94",
  "#c49a00", "#5d4037", "#546e7a", "#e8780c"];
const SERIES_PLOT = {width: 820, height: 360, left: 56, right: 170, top: 16, bottom: 40};

/** Colours that stay with their ids: an id first seen takes the palette's next colour. */
function colourKeeper(ids = []) {
  const colours = new Map();
  const colourOf = id => {
    if (!colours.has(id)) colours.set(id, PLOT_PALETTE[colours.size % PLOT_PALETTE.length]);
    return colours.get(id);
  };
  ids.forEach(colourOf);
  return colourOf;
}

/** Round tick values between lo and hi, about `count` of them. */
function niceTicks(lo, hi, count) {
  const span = hi - lo || 1;
  const step0 = span / count, magnitude = 10 ** Math.floor(Math.log10(step0));
  const step = [1, 2, 5, 10].map(m => m * magnitude).find(m => m >= step0);
  const ticks = [];
  for (let i = Math.ceil(lo / step - 1e-9); i * step <= hi + 1e-9; i++) {
    ticks.push(Number((i * step).toFixed(10)));
  }
  return ticks;
}

/** The digits a tick label needs. */
function tickDigits(ticks) {
  const step = ticks.length > 1 ? ticks[1] - ticks[0] : 1;
  return Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
}

/** The SVG path through `points` ([[x, y], ...]) in plot coordinates; `steps`: each y
    held until the next point, the last one to `xEnd`. */
function seriesPath(points, px, py, steps, xEnd) {
  const at = ([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`;
  if (!steps) return points.map((p, i) => `${i ? "L" : "M"}${at(p)}`).join(" ");
  const d = [`M${at(points[0])}`];
  for (const [x, y] of points.slice(1)) d.push(`H${px(x).toFixed(1)} V${py(y).toFixed(1)}`);
  const lastX = points[points.length - 1][0];
  if (xEnd !== undefined && xEnd > lastX) d.push(`H${px(xEnd).toFixed(1)}`);
  return d.join(" ");
}

/** An SVG line plot of `series` ([{key, name, colour, points: [[x, y], ...]}]), each
    labelled at the right with its latest y. Options: `id`, `label` (aria), `xLabel`,
    `digits` of the labels, `pad` (the least margin above and below, in y), `steps` (each y
    held until the next x, the last to `xEnd`), `dots` (a dot per point while a series has
    that many at most, else the last only), `marks` ([{x, label}]: dashed verticals) and
    `empty` (the text when there is nothing to draw). */
function seriesPlot(series, {id, label, xLabel, digits = 0, pad = 10, steps = false, dots = 60,
  marks = [], xEnd, empty = "nothing to plot yet"} = {}) {
  series = series.filter(one => one.points.length);
  if (!series.length) return h("p", {class: "muted"}, empty);
  const all = series.flatMap(one => one.points);
  const xs = all.map(p => p[0]), ys = all.map(p => p[1]);
  const xlo = Math.min(...xs), xhi = Math.max(...xs, xEnd ?? xlo, xlo + 1);
  const margin = Math.max(pad, (Math.max(...ys) - Math.min(...ys)) * 0.08);
  const ylo = Math.min(...ys) - margin, yhi = Math.max(...ys) + margin;
  const {width, height, left, right, top, bottom} = SERIES_PLOT;
  const px = x => left + (x - xlo) / (xhi - xlo) * (width - left - right);
  const py = y => top + (yhi - y) / (yhi - ylo) * (height - top - bottom);
  const svg = svgRoot(width, height, {id, role: "img", "aria-label": label});
  const grey = {"font-size": 11, fill: "#7a736a"};
  const yTicks = niceTicks(ylo, yhi, 6);
  for (const tick of yTicks) {
    svg.append(s("line", {x1: left, x2: width - right, y1: py(tick), y2: py(tick),
      stroke: "#eee7dc"}));
    svg.append(s("text", {x: left - 6, y: py(tick) + 4, "text-anchor": "end", ...grey},
      fmt(tick, tickDigits(yTicks))));
  }
  for (const tick of niceTicks(xlo, xhi, 8).filter(t => Number.isInteger(t))) {
    svg.append(s("text", {x: px(tick), y: height - bottom + 16, "text-anchor": "middle", ...grey},
      tick));
  }
  svg.append(s("text", {x: (left + width - right) / 2, y: height - 6, "text-anchor": "middle",
    "font-size": 12, fill: "#7a736a"}, xLabel));
  svg.append(s("line", {x1: left, x2: left, y1: top, y2: height - bottom, stroke: "#b9b0a3"}));
  svg.append(s("line", {x1: left, x2: width - right, y1: height - bottom, y2: height - bottom,
    stroke: "#b9b0a3"}));
  for (const mark of marks) {
    svg.append(s("line", {x1: px(mark.x), x2: px(mark.x), y1: top, y2: height - bottom,
      stroke: "#9a8f80", "stroke-dasharray": "4 3", class: "mark"}));
    svg.append(s("text", {x: px(mark.x) + 3, y: top + 10, ...grey, class: "mark-label"},
      mark.label));
  }
  series.forEach((one, index) => {
    svg.append(s("path", {d: seriesPath(one.points, px, py, steps, xEnd), fill: "none",
      stroke: one.colour, "stroke-width": 2.2, class: "series", "data-bot": one.key}));
    const shown = one.points.length <= dots ? one.points : one.points.slice(-1);
    for (const [x, y] of shown) svg.append(s("circle", {cx: px(x), cy: py(y), r: 3.2,
      fill: one.colour}));
    const lastY = one.points[one.points.length - 1][1];
    const ly = top + 14 + index * 18;
    svg.append(s("rect", {x: width - right + 14, y: ly - 9, width: 12, height: 12, rx: 2,
      fill: one.colour}));
    svg.append(s("text", {x: width - right + 32, y: ly + 1, "font-size": 12, fill: "#23201c"},
      `${one.name} (${fmt(lastY, digits)})`));
  });
  return svg;
}

/** A table of ladders linking to their pages. */
function laddersTable(ladders) {
  if (!ladders.length) return h("p", {class: "muted"}, "no ladders yet");
  return table([
    {title: "ladder", cell: l => uiLink(`ladders/${l.id}`, l.name || l.id)},
    {title: "game", cell: l => uiLink(`games/${l.game}`, l.game)},
    {title: "players", cell: l => l.players, cls: "num"},
    {title: "status", cell: l => statusBadge(l.paused ? "paused" : "running")},
    {title: "concurrency", cell: l => l.concurrency, cls: "num"},
    {title: "created", cell: l => when(l.created_at)},
  ], ladders, {class: "ladders"});
}

/** Fill the header navigation with one link per game. */
async function fillGameNav() {
  const nav = document.getElementById("game-nav");
  if (!nav) return;
  try {
    const games = await gameList();
    setChildren(nav, games.map(game => uiLink(`games/${game.name}`, game.name)));
  } catch (_) {
    nav.replaceChildren();
  }
}

document.addEventListener("DOMContentLoaded", fillGameNav);

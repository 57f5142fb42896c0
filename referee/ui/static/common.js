/* Shared helpers of the referee pages: API calls, DOM and SVG builders, seat colours. */
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
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

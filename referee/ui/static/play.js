/* Play a seat of a match in the browser with its seat token (#token=… in the address, taken
   out of it at once and kept for the tab, or the form). The seat's view comes from GET /matches/{id}/events (with the token, so the
   seat's own view); each move, ours and the others', appears as it is played. On our turn
   the legal actions are targets on the board where the game's drawing has a place for them
   (games/<game>.js GAME_TARGETS) and buttons below it; a choice goes to
   POST /matches/{id}/actions. The match waits for us without holding a worker.
*/
"use strict";

const play = {
  matchId: null, token: null, seat: null, match: null, description: null,
  view: null, log: [], toMove: null, step: 0, sent: null, result: null,
};

/** The seat token: from the address (#token=…, then taken out of it, so that history,
    bookmarks and an address copied to someone never hold it), else the one this tab kept
    (sessionStorage: a reload finds it). */
function seatToken() {
  const given = new URLSearchParams(window.location.hash.slice(1)).get("token");
  if (given) {
    keepToken(given);
    history.replaceState(null, "", window.location.pathname + window.location.search);
  }
  return given || sessionStorage.getItem(tokenKey());
}

function keepToken(token) {
  sessionStorage.setItem(tokenKey(), token);
}

function tokenKey() {
  return `referee-seat-token:${play.matchId}`;
}

function askForToken(problem) {
  const form = document.getElementById("token-form");
  form.hidden = false;
  setChildren(document.getElementById("token-problem"), problem || "");
  form.onsubmit = event => {
    event.preventDefault();
    const token = new FormData(form).get("token").trim();
    keepToken(token);
    form.hidden = true;
    begin(token);
  };
}

function seatLabel(seat) {
  const info = play.match.seats[seat];
  const name = info ? info.name : `seat ${seat}`;
  return seat === play.seat ? `you (seat ${seat})` : `seat ${seat} · ${name}`;
}

function statusLine() {
  const match = play.match;
  return h("div", {class: "facts"},
    h("span", null, "game ", h("b", null, match.game)),
    h("span", null, "you play ", swatch(seatColour(play.seat)), h("b", {id: "my-seat"},
      `seat ${play.seat}`)),
    h("span", null, "against ", match.seats.filter(s => s.seat !== play.seat).map((s, i) =>
      h("span", null, i ? ", " : "", swatch(seatColour(s.seat)), s.name))),
    h("span", null, "step ", h("b", {id: "play-step"}, play.step)));
}

/** One line of the moves list: what the seat did, as this seat may know it. */
function moveLine(played) {
  const what = played.action ? actionText(played.action)
    : (played.events || []).filter(e => e.seat === played.seat).map(eventText).join("; ");
  const fault = played.fault ? h("span", {class: "fault"}, ` fault: ${played.fault.code}`) : "";
  return h("li", {"data-step": played.step}, swatch(seatColour(played.seat)),
    h("b", null, played.seat === play.seat ? "you" : seatLabel(played.seat)), ": ", what || "…",
    fault);
}

function myTurn() {
  return play.result === null && play.toMove === play.seat && play.sent !== play.step;
}

function turnLine() {
  if (play.result) {
    const match = {...play.match, result: play.result.result};
    return h("span", {id: "result"}, h("b", null, "The match is over. "),
      play.result.result ? matchResult(match) : play.result.status, " · ",
      uiLink(`matches/${play.matchId}`, "replay"));
  }
  if (play.toMove === null) return h("span", null, "waiting for the match to start…");
  if (play.toMove !== play.seat) {
    return h("span", null, swatch(seatColour(play.toMove)), h("b", null, seatLabel(play.toMove)),
      " to move…");
  }
  if (play.sent === play.step) return h("span", null, "your move is being played…");
  return h("span", {id: "your-move"}, h("b", null, "Your move"),
    ": click a highlighted place on the board, or choose below.");
}

function choices(legal) {
  if (!legal.length) return "";
  return h("div", null, legal.map(action => h("button", {type: "button", class: "choice",
    onclick: () => send(action)}, actionText(action))));
}

function draw() {
  const legal = myTurn() ? (play.view.legal_actions || []) : [];
  const board = document.getElementById("board");
  const render = (window.GAME_RENDERERS || {})[play.match.game];
  const context = {description: play.description, seats: play.match.seats, seat: play.seat,
    step: play.step, match: play.match};
  setChildren(board, render ? render(play.view, context)
    : h("pre", null, JSON.stringify(play.view, null, 1)));
  const targets = (window.GAME_TARGETS || {})[play.match.game];
  for (const {node, action} of targets ? targets(board, play.view, legal, play.seat,
    play.description) : []) {
    node.classList.add("target");
    node.addEventListener("click", () => send(action));
  }
  board.dataset.step = play.step;
  board.dataset.turn = play.result ? "over" : myTurn() ? "mine" : "theirs";
  setChildren(document.getElementById("status"), statusLine());
  setChildren(document.getElementById("turn"), turnLine());
  setChildren(document.getElementById("choices"), choices(legal));
}

async function send(action) {
  if (!myTurn()) return;
  play.sent = play.step;
  draw();
  try {
    await api(`/matches/${encodeURIComponent(play.matchId)}/actions`, {token: play.token,
      method: "POST", body: {step: play.step, action}});
  } catch (error) {
    play.sent = null;
    draw();
    document.getElementById("turn").append(h("p", {class: "error"}, error.detail || error.message));
  }
}

function onEvent(name, data) {
  if (name === "start") {
    play.step = 0;
    play.log = data.view.log || [];
  } else if (name === "step") {
    document.getElementById("moves").append(moveLine(data.played));
    play.step = data.step + 1;
    play.log = play.log.concat(data.played.events);  // a step's view comes without its log
  } else if (name === "result") {
    play.result = data;
  } else {
    return true;
  }
  if (data.view) {
    play.view = {...data.view, log: play.log};
    play.toMove = data.to_move;
  }
  draw();
  return name !== "result";
}

async function begin(token) {
  play.token = token;
  let seen;
  try {
    seen = await api(`/matches/${encodeURIComponent(play.matchId)}/observation`, {token});
    play.match = await api(`/matches/${encodeURIComponent(play.matchId)}`);
    play.description = (await api(`/games/${encodeURIComponent(play.match.game)}`)).description;
  } catch (error) {
    askForToken(error.status === 401 || error.status === 403
      ? "This is not a seat token of this match." : error.detail || error.message);
    return;
  }
  play.seat = seen.seat;
  followEvents(`/matches/${encodeURIComponent(play.matchId)}/events`, {token, onEvent,
    onProblem: error => setChildren(document.getElementById("turn"), errorBox(error))});
}

document.addEventListener("DOMContentLoaded", () => {
  play.matchId = document.getElementById("title").dataset.match;
  const token = seatToken();
  if (token) begin(token);
  else askForToken();
});

/* A match: its status and a replay viewer that steps through the game as any seat sees it.

Step k shows the observation before decision k (step 0: the deal; the last step: the end).
While the match is played the viewer follows it live as the spectator
(GET /matches/{id}/events): each step's event gives the step played and the view after it,
the very frames the replay endpoints give once it is over.
Each game's drawing lives in games/<game>.js and registers itself in GAME_RENDERERS.
*/
"use strict";

const LIVE_REFRESH_MS = 3000;
const PLAY_INTERVAL_MS = 600;

const viewer = {
  matchId: null, match: null, description: null, step: 0, seat: null, timer: null,
  cache: new Map(), shown: null,
  live: null,  // while following a running match: {frames, follow}
};

function statusView(match) {
  return h("div", {class: "facts"},
    h("span", null, "game ", h("b", null, uiLink(`games/${match.game}`, match.game)),
      ` v${match.game_version}`),
    h("span", null, statusBadge(match.status, "match-status")),
    h("span", null, "seats ", match.seats.map((seat, i) => h("span", null, i ? ", " : "",
      swatch(seatColour(seat.seat)), seat.name))),
    h("span", null, "steps ", h("b", null, match.step)),
    match.seed !== null && match.seed !== undefined ?
      h("span", null, "seed ", h("b", {id: "match-seed"}, String(match.seed))) : "",
    match.result ? h("span", {id: "match-result"}, "result: ", matchResult(match)) : "",
    match.forfeit ? h("span", {class: "fault"},
      `seat ${match.forfeit.seat} forfeited at step ${match.forfeit.step} (${match.forfeit.fault})`) : "",
    match.error ? h("span", {class: "fault"}, match.error) : "");
}

function seatName(seat) {
  if (seat === null || seat === undefined) return "spectator";
  const info = (viewer.match.seats || [])[seat];
  return info ? `seat ${seat} · ${info.name}` : `seat ${seat}`;
}

function fillSeatChoices() {
  const select = document.getElementById("seat");
  setChildren(select, h("option", {value: ""}, "spectator"),
    viewer.match.seats.map(seat => h("option", {value: seat.seat}, seatName(seat.seat))));
  select.value = viewer.seat === null ? "" : String(viewer.seat);
}

async function fetchStep(step, seat) {
  if (viewer.live) {
    const frame = viewer.live.frames[step];
    if (!frame) throw new Error(`step ${step} is not played yet`);
    return frame;
  }
  const key = `${step}/${seat ?? ""}`;
  if (!viewer.cache.has(key)) {
    const query = seat === null ? "" : `?seat=${seat}`;
    const promise = api(`/matches/${encodeURIComponent(viewer.matchId)}/replay/${step}${query}`);
    viewer.cache.set(key, promise);
    promise.catch(() => viewer.cache.delete(key));
  }
  return viewer.cache.get(key);
}

const LOG_SHOWN = 12;

/** The latest public events, as the viewed seat knows them. */
function logView(observation) {
  const log = Array.isArray(observation.log) ? observation.log : [];
  const first = Math.max(0, log.length - LOG_SHOWN);
  return h("div", {class: "panel log"}, h("h3", null, `Events (${log.length})`),
    log.length ? h("ol", {start: first + 1}, log.slice(first).map(event => h("li", null,
      event.seat === undefined || event.seat === null ? "" :
        swatch(seatColour(event.seat)),
      eventText(event)))) : h("p", {class: "muted"}, "nothing yet"));
}

function moveView(frame, observation) {
  const toMove = frame.to_move ?? observation.to_move;
  const played = frame.played;
  if (!played && viewer.live && toMove !== null && toMove !== undefined) {
    return h("span", {id: "live-waiting"}, swatch(seatColour(toMove)),
      h("b", null, seatName(toMove)), " to move…");
  }
  if (!played || toMove === null || toMove === undefined) {
    return h("span", null, h("b", null, "End of the match. "),
      viewer.match.result ? matchResult(viewer.match) : viewer.match.status);
  }
  const parts = [swatch(seatColour(played.seat)),
    h("b", null, seatName(played.seat)), " to move"];
  const choices = (observation.legal_actions || []).length;
  if (choices) parts.push(` (${choices} legal action${choices > 1 ? "s" : ""})`);
  if (played.action) {
    parts.push(" → plays ", h("code", {id: "step-action"}, actionText(played.action)));
  } else if ((played.events || []).length) {
    // another seat's move: only what the viewed seat's log says of it
    parts.push(" → ", h("code", {id: "step-action"}, played.events.map(eventText).join("; ")));
  }
  if (played.fault) {
    const detail = played.fault.detail ? ` (${played.fault.detail})` : "";
    parts.push(" ", h("span", {class: "fault"},
      `fault: ${played.fault.code}${detail}, policy ${played.fault.policy}`));
  }
  if (played.clock) parts.push(h("div", {id: "step-clock", class: "clock"}, clockText(played)));
  if (played.info) {
    parts.push(h("div", {id: "step-info", class: "info"}, "info ",
      h("code", null, JSON.stringify(played.info))));
  }
  if (played.debug) {
    const cut = played.debug_truncated ? " (cut)" : "";
    parts.push(h("pre", {id: "step-debug", class: "debug"}, played.debug + cut));
  }
  return h("span", null, parts);
}

/** The clocks after a step (issue 26): what the move took, then each seat's clock and bank. */
function clockText(played) {
  const seconds = ms => `${(ms / 1000).toFixed(2)} s`;
  const seats = played.clock.remaining_ms.map((ms, seat) => {
    const bank = played.clock.overdraft_ms[seat];
    return `${seatName(seat)} ${seconds(ms)}${bank ? ` + ${seconds(bank)} bank` : ""}`;
  });
  return `took ${seconds(played.elapsed_ms)} · clocks: ${seats.join(" · ")}`;
}

async function show(step, seat) {
  const total = viewer.match.step;
  step = Math.max(0, Math.min(total, step));
  viewer.step = step;
  viewer.seat = seat;
  document.getElementById("slider").value = step;
  document.getElementById("step-label").textContent = `step ${step} / ${total}`;
  const board = document.getElementById("board");
  let frame;
  try {
    frame = await fetchStep(step, seat);
  } catch (error) {
    setChildren(board, errorBox(error));
    return;
  }
  if (viewer.step !== step || viewer.seat !== seat) return;  // a later request won
  const observation = frame.view;
  const draw = (window.GAME_RENDERERS || {})[viewer.match.game];
  const context = {description: viewer.description, seats: viewer.match.seats, seat, step,
    match: viewer.match};
  setChildren(document.getElementById("move"), moveView(frame, observation));
  board.dataset.step = step;
  board.dataset.seat = seat === null ? "spectator" : seat;
  try {
    setChildren(board, draw ? draw(observation, context)
      : h("pre", null, JSON.stringify(observation, null, 1)), logView(observation));
  } catch (error) {
    setChildren(board, errorBox(error), h("pre", null, JSON.stringify(observation, null, 1)));
  }
  viewer.shown = `${step}/${seat ?? ""}`;
  history.replaceState(null, "", `#step=${step}` + (seat === null ? "" : `&seat=${seat}`));
  board.dataset.shown = viewer.shown;
  if (!viewer.live) fetchStep(Math.min(total, step + 1), seat).catch(() => null);  // warm it
}

function togglePlay() {
  const button = document.getElementById("play");
  if (viewer.timer) {
    clearInterval(viewer.timer);
    viewer.timer = null;
    button.innerHTML = "&#x25B6;";
    return;
  }
  button.innerHTML = "&#x275A;&#x275A;";
  viewer.timer = setInterval(() => {
    if (viewer.step >= viewer.match.step) togglePlay();
    else show(viewer.step + 1, viewer.seat);
  }, PLAY_INTERVAL_MS);
}

function bindControls() {
  const go = step => show(step, viewer.seat);
  document.getElementById("first").addEventListener("click", () => go(0));
  document.getElementById("prev").addEventListener("click", () => go(viewer.step - 1));
  document.getElementById("next").addEventListener("click", () => go(viewer.step + 1));
  document.getElementById("last").addEventListener("click", () => go(viewer.match.step));
  document.getElementById("play").addEventListener("click", togglePlay);
  document.getElementById("slider").addEventListener("input", e => go(Number(e.target.value)));
  document.getElementById("seat").addEventListener("change", e =>
    show(viewer.step, e.target.value === "" ? null : Number(e.target.value)));
  document.addEventListener("keydown", event => {
    const target = event.target.closest ? event.target : document.body;
    if (target.closest("select, input:not([type=range])")) return;
    if (target.closest("button") && (event.key === " " || event.key === "Enter")) return;
    const moves = {ArrowLeft: -1, ArrowRight: 1, PageUp: -10, PageDown: 10};
    if (event.key in moves) go(viewer.step + moves[event.key]);
    else if (event.key === "Home") go(0);
    else if (event.key === "End") go(viewer.match.step);
    else if (event.key === " ") togglePlay();
    else return;
    event.preventDefault();
  });
}

async function loadMatch() {
  viewer.match = await api(`/matches/${encodeURIComponent(viewer.matchId)}`);
  setChildren(document.getElementById("status"), statusView(viewer.match));
  document.getElementById("slider").max = viewer.match.step;
  document.getElementById("step-label").textContent = `step ${viewer.step} / ${viewer.match.step}`;
}

/** Replays open once the match, and every tournament match on the same deal, is over
    (before that they are the admin's only; the seed is null until then): until then the
    page follows the match's status. */
async function waitForTheEnd() {
  const note = document.getElementById("waiting");
  while (viewer.match.status !== "finished" || viewer.match.seed === null) {
    if (viewer.match.status === "failed") {
      setChildren(note, "This match failed: it has no replay.");
      return false;
    }
    setChildren(note, viewer.match.status === "finished"
      ? "The match is over, but another match on the same deal is still being played: "
        + "its replay opens when that one is over."
      : `The match is ${viewer.match.status}, and so is another match on the same deal: `
        + "it can be watched once they are over.");
    await sleep(LIVE_REFRESH_MS);
    await loadMatch();
  }
  note.replaceChildren();
  return true;
}

/** While the match is played: follow it as the spectator, a frame per step as it comes,
    the board on the latest one unless the person stepped back. At the end, the replay
    (every seat's view) once it is public. */
function followLive() {
  const frames = [];
  let log = [];  // a step's view comes without its log: the start's, then each step's events
  const frame = (step, data) => ({match_id: viewer.matchId, step, seat: null,
    to_move: data.to_move, view: {...data.view, log}, played: null});
  viewer.live = {frames, follow: null};
  showLive(true);
  viewer.live.follow = followEvents(`/matches/${encodeURIComponent(viewer.matchId)}/events`, {
    onEvent(name, data) {
      if (name === "start") {
        log = data.view.log || [];
        frames[0] = frame(0, data);
        liveAdvance(0);
      } else if (name === "step") {
        log = log.concat(data.played.events);
        frames[data.step].played = data.played;
        frames[data.step + 1] = frame(data.step + 1, data);
        liveAdvance(data.step + 1);
      } else if (name === "result") {
        endLive();
        return false;
      }
      return true;
    },
    onProblem() {  // another match on its deal is being played: it opens with the replay
      viewer.live = null;
      showLive(false);
      document.getElementById("viewer").hidden = true;
      replayWhenPublic();
    },
  });
}

/** A new latest frame: follow it when the board showed the latest one. */
function liveAdvance(latest) {
  const following = viewer.step >= viewer.match.step || latest === 0;
  viewer.match = {...viewer.match, step: latest,
    status: latest > 0 ? "running" : viewer.match.status};
  setChildren(document.getElementById("status"), statusView(viewer.match));
  document.getElementById("slider").max = latest;
  if (following) show(latest, null);
  else document.getElementById("step-label").textContent = `step ${viewer.step} / ${latest}`;
}

async function endLive() {
  const frames = viewer.live.frames;
  await loadMatch();
  frames.forEach((frame, step) => viewer.cache.set(`${step}/`, Promise.resolve(frame)));
  viewer.live = null;
  showLive(false);
  if (viewer.match.seed === null) {  // the replay opens with the deal's last match
    await waitForTheEnd();
  }
  show(viewer.step, viewer.seat);
}

function showLive(live) {
  document.getElementById("live").hidden = !live;
  const select = document.getElementById("seat");
  select.disabled = live;
  select.title = live ? "while the match is played it is shown as the spectator sees it" : "";
}

async function replayWhenPublic() {
  if (!await waitForTheEnd()) return;
  document.getElementById("viewer").hidden = false;
  await show(viewer.match.step, viewer.seat);
}

/** The step and seat named in the address (#step=12&seat=1), to share a position. */
function startingPoint() {
  const params = new URLSearchParams(window.location.hash.slice(1));
  const seat = params.get("seat");
  const known = seat !== null && viewer.match.seats.some(info => String(info.seat) === seat);
  return {step: Number(params.get("step")) || 0, seat: known ? Number(seat) : null};
}

async function start() {
  viewer.matchId = document.getElementById("title").dataset.match;
  try {
    await loadMatch();
    const game = await api(`/games/${encodeURIComponent(viewer.match.game)}`);
    viewer.description = game.description;
  } catch (error) {
    setChildren(document.getElementById("status"), errorBox(error));
    return;
  }
  bindControls();
  const running = ["queued", "running"].includes(viewer.match.status);
  const begin = startingPoint();
  viewer.seat = running ? null : begin.seat;
  fillSeatChoices();
  if (running) {
    document.getElementById("viewer").hidden = false;
    followLive();
    return;
  }
  if (!await waitForTheEnd()) return;
  document.getElementById("viewer").hidden = false;
  await show(begin.step, begin.seat);
}

document.addEventListener("DOMContentLoaded", start);

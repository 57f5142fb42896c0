/* Aladino: the 61-space hex cave with its tokens and Aladdin, and each player's board. */
"use strict";

(function () {
  const KIND_COLOURS = {emerald: "#2e9d5b", ruby: "#c7253e", sapphire: "#2a5db0",
    pearl: "#e9e3d3", lamp: "#d9a520"};
  const KIND_INK = {pearl: "#5a5346"};
  const CHARACTER_LABEL = {carpet: "carpet", titi: "Titi", genie: "genie", sorcerer: "sorcerer",
    princess: "princess"};
  const CHARACTER_MARK = {carpet: "≈", titi: "T", genie: "G", sorcerer: "✕", princess: "♛"};
  const HEX = 31;  // hex radius (centre to corner)
  const SMALL_TOKEN = 18;  // below this radius a character shows as a mark, not a word
  const SQRT3 = Math.sqrt(3);

  const centre = ([q, r]) => [HEX * SQRT3 * (q + r / 2), HEX * 1.5 * r];
  const hexPoints = (x, y, radius) => [0, 1, 2, 3, 4, 5].map(i => {
    const angle = Math.PI / 180 * (60 * i - 30);
    return `${(x + radius * Math.cos(angle)).toFixed(1)},${(y + radius * Math.sin(angle)).toFixed(1)}`;
  }).join(" ");
  const same = (a, b) => a && b && a[0] === b[0] && a[1] === b[1];

  function tokenFill(token) {
    if (token.face === "down") return KIND_COLOURS[token.back] || "#888";
    return token.kind ? KIND_COLOURS[token.kind] : "#6c3fb0";
  }

  function faceUpToken(token, x, y, radius) {
    const ink = KIND_INK[token.kind] || "#fff";
    const group = s("g", {class: "token up", "data-token": token.id});
    group.append(s("circle", {cx: x, cy: y, r: radius, fill: tokenFill(token),
      stroke: "#2b2622", "stroke-width": 1.2}));
    if (token.character === "genie" && !token.kind) {
      group.append(s("text", {x, y: y + 5, "text-anchor": "middle", "font-size": radius * 0.95,
        "font-weight": 700, fill: "#f2c14e"}, "G"));
      return group;
    }
    group.append(s("text", {x, y: y + (token.character ? 2 : radius * 0.38),
      "text-anchor": "middle", "font-size": radius * (token.character ? 0.9 : 1.05),
      "font-weight": 700, fill: ink}, token.value));
    if (token.character) {
      const small = radius < SMALL_TOKEN;
      group.append(s("text", {x, y: y + radius * (small ? 0.86 : 0.78), "text-anchor": "middle",
        "font-size": radius * (small ? 0.6 : 0.42), "font-weight": small ? 700 : 400, fill: ink},
        small ? CHARACTER_MARK[token.character] : CHARACTER_LABEL[token.character]));
      group.append(s("title", null, `${token.kind} ${token.value}, ${token.character}`));
    }
    return group;
  }

  function faceDownToken(token, x, y, radius) {
    const fill = tokenFill(token);
    return s("g", {class: "token down"},
      s("circle", {cx: x, cy: y, r: radius, fill, stroke: "#2b2622", "stroke-width": 1.2}),
      s("circle", {cx: x, cy: y, r: radius * 0.72, fill: "none",
        stroke: token.back === "pearl" ? "#b9ae96" : "rgba(255,255,255,.55)",
        "stroke-width": 2, "stroke-dasharray": "3 3"}),
      token.back === "lamp" ? s("text", {x, y: y + 5, "text-anchor": "middle",
        "font-size": radius * 0.8, "font-weight": 700, fill: "#6b4a00"}, "★") : "");
  }

  function aladdinFigure(x, y) {
    return s("g", {class: "aladdin"},
      s("circle", {cx: x, cy: y, r: HEX * 0.86, fill: "none", stroke: "#f2c14e",
        "stroke-width": 4}),
      s("circle", {cx: x, cy: y - 6, r: 6, fill: "#2b2622"}),
      s("path", {d: `M${x - 10},${y + 14} L${x},${y - 1} L${x + 10},${y + 14} Z`,
        fill: "#2b2622"}),
      s("title", null, "Aladdin"));
  }

  function lastMove(log) {
    for (let i = (log || []).length - 1; i >= 0; i--) {
      const event = log[i];
      const kind = event.event || event.type;  // "type": the log of aladino 1.0.0 replays
      if (kind === "move" || kind === "carpet") return event;
    }
    return null;
  }

  function moveArrow(event) {
    if (!event || !event.from || !event.to) return "";
    const [x1, y1] = centre(event.from), [x2, y2] = centre(event.to);
    const colour = seatColour(event.seat);
    return s("g", {class: "last-move"},
      s("line", {x1, y1, x2, y2, stroke: colour, "stroke-width": 5, "stroke-opacity": 0.55,
        "stroke-linecap": "round", "marker-end": "url(#aladino-arrow)"}));
  }

  function cave(observation) {
    const margin = HEX + 14;
    const width = HEX * SQRT3 * 9 + 2 * margin - HEX * SQRT3, height = HEX * 1.5 * 8 + 2 * margin;
    const svg = svgRoot(width, height, {class: "aladino-cave", id: "cave"});
    const root = s("g", {transform: `translate(${width / 2},${height / 2})`});
    svg.append(s("defs", null, s("marker", {id: "aladino-arrow", viewBox: "0 0 10 10", refX: 5,
      refY: 5, markerWidth: 4, markerHeight: 4, orient: "auto-start-reverse"},
      s("path", {d: "M0,0 L10,5 L0,10 z", fill: "#2b2622"}))));
    svg.append(s("rect", {x: 0, y: 0, width, height, rx: 14, fill: "#3a2f28"}));
    svg.append(root);
    for (const {space, token} of observation.cave) {
      const [x, y] = centre(space);
      const cell = s("g", {class: "space", "data-space": space.join(","),
        "data-face": token ? token.face : "empty"});
      cell.append(s("polygon", {points: hexPoints(x, y, HEX - 1.5), fill: "#c9a877",
        stroke: "#7d5f3b", "stroke-width": 1.5}));
      if (token && token.face === "up") cell.append(faceUpToken(token, x, y, HEX * 0.68));
      else if (token) cell.append(faceDownToken(token, x, y, HEX * 0.68));
      root.append(cell);
    }
    root.append(moveArrow(lastMove(observation.log)));
    if (observation.aladdin) root.append(aladdinFigure(...centre(observation.aladdin)));
    return svg;
  }

  function boardSquare(stack, x, y, size, kind, value) {
    const group = s("g", {class: "square", "data-count": stack.length, "data-kind": kind,
      "data-value": value});
    group.append(s("rect", {x, y, width: size, height: size, rx: 4, fill: "#f3ecdf",
      stroke: "#cbbfa9"}));
    stack.forEach((token, i) => {
      const offset = (stack.length - 1 - i) * 3;
      group.append(faceUpToken(token, x + size / 2 - offset, y + size / 2 - offset, size * 0.38));
    });
    if (stack.length > 1) {
      group.append(s("text", {x: x + size - 3, y: y + size - 3, "text-anchor": "end",
        "font-size": 10, "font-weight": 700, fill: "#2b2622"}, `×${stack.length}`));
    }
    return group;
  }

  function playerBoard(board, seat, observation, context) {
    const kinds = context.description.components.kinds;
    const size = 40, left = 92, top = 20;
    const svg = svgRoot(left + 5 * (size + 4), top + 4 * (size + 4), {class: "aladino-board",
      "data-seat": seat});
    [1, 2, 3, 4, 5].forEach((value, col) => svg.append(s("text", {x: left + col * (size + 4) + size / 2,
      y: 13, "text-anchor": "middle", "font-size": 11, fill: "#7a736a"}, value)));
    kinds.forEach((kind, row) => {
      const y = top + row * (size + 4);
      const favourite = observation.favourites && observation.favourites[seat] === kind;
      svg.append(s("rect", {x: 0, y: y + 8, width: 12, height: 12, rx: 6,
        fill: KIND_COLOURS[kind], stroke: "#2b2622", "stroke-width": 0.8}));
      svg.append(s("text", {x: 16, y: y + 18, "font-size": 11,
        "font-weight": favourite ? 700 : 400, fill: "#23201c"}, kind + (favourite ? " ★" : "")));
      board[row].forEach((stack, col) =>
        svg.append(boardSquare(stack, left + col * (size + 4), y, size, kind, col + 1)));
    });
    return svg;
  }

  function seatPanel(board, seat, observation, context) {
    return seatPanelFrame("aladino-seat", seat, context.seat === seat, observation, context,
      h("div", {class: "facts"},
        h("span", null, "score ", h("b", {class: "score"}, observation.scores[seat])),
        observation.favourites ? h("span", null, "favourite ", h("b", null, observation.favourites[seat])) : ""),
      playerBoard(board, seat, observation, context));
  }

  function summary(observation) {
    const phase = observation.phase;
    return h("div", {class: "panel"},
      h("h3", null, "Cave"),
      h("div", {class: "facts"},
        h("span", null, "phase ", h("b", {id: "phase"}, phase)),
        observation.roll ? h("span", null, "die ", h("b", {id: "roll"}, observation.roll)) : "",
        observation.pending_genie ? h("span", null, "to place: ", h("b", null, "the Genie")) : "",
        observation.end ? h("span", null, "end ", h("b", {id: "end"}, observation.end.text)) : ""),
      cave(observation),
      h("div", {class: "muted legend", style: "max-width:520px"},
        Object.entries(KIND_COLOURS).map(([kind, colour]) => h("span", null,
          swatch(colour), kind, " ")),
        " · a dashed token lies face down · on the boards: ",
        Object.entries(CHARACTER_MARK).filter(([name]) => name !== "genie")
          .map(([name, mark]) => `${mark} ${CHARACTER_LABEL[name]}`).join(", ")));
  }

  /** Where a move in `direction` stops (engines/aladino: `roll` token spaces in a straight
      line, empty spaces uncounted, at the wall on the last token reached), or null. */
  function destination(observation, direction, description) {
    const {dq, dr} = description.components.board.directions[direction];
    const tokens = new Set(observation.cave.filter(c => c.token).map(c => c.space.join(",")));
    let [q, r] = observation.aladdin;
    let counted = 0, last = null;
    while (counted < observation.roll) {
      q += dq;
      r += dr;
      if (Math.max(Math.abs(q), Math.abs(r), Math.abs(q + r)) > 4) break;
      if (tokens.has(`${q},${r}`)) {
        counted += 1;
        last = [q, r];
      }
    }
    return last;
  }

  /** The drawing's node each legal action is played by clicking: the space a move stops
      on or the carpet flies to, the square of the seat's board the Genie goes to. */
  function targets(root, observation, legalActions, seat, description) {
    const space = at => at && root.querySelector(`#cave .space[data-space="${at.join(",")}"]`);
    const square = (kind, value) => root.querySelector(
      `.aladino-board[data-seat="${seat}"] .square[data-kind="${kind}"][data-value="${value}"]`);
    return legalActions.map(action => ({action, node:
      action.type === "move" ? space(destination(observation, action.direction, description))
        : action.type === "carpet" ? space(action.space)
          : action.type === "place_genie" ? square(action.kind, action.value) : null}))
      .filter(target => target.node);
  }

  window.GAME_TARGETS = window.GAME_TARGETS || {};
  window.GAME_TARGETS.aladino = targets;
  window.GAME_RENDERERS = window.GAME_RENDERERS || {};
  window.GAME_RENDERERS.aladino = (observation, context) => h("div", {class: "board aladino"},
    summary(observation),
    h("div", {class: "grid-panels"},
      observation.boards.map((board, seat) => seatPanel(board, seat, observation, context))));
})();

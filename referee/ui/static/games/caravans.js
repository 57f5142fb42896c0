/* Caravans of Ahldarahd: the maps with routes coloured by owner and controlled cities,
   each player's gold, camel, items and cards, and the auction and trade in progress. */
"use strict";

(function () {
  const MAP_TINTS = {red: "#f6dcd6", blue: "#d9e4f5", green: "#dcefd9", yellow: "#f7efc9"};
  const MAP_INKS = {red: "#a2342a", blue: "#2f5d9e", green: "#2e7d32", yellow: "#9a7b00"};
  const CARD_COLOURS = {red: "#c7453a", blue: "#3a6fc0", green: "#3f8f45", yellow: "#d8b21e"};
  const MAP_W = 300, MAP_H = 262, RADIUS = 92, CITY_R = 24;

  function permutations(items) {
    if (items.length <= 1) return [items];
    return items.flatMap((item, i) =>
      permutations([...items.slice(0, i), ...items.slice(i + 1)]).map(rest => [item, ...rest]));
  }

  /** How many pairs of routes cross when the cities sit on a hexagon in `order`. */
  function crossings(order, routes) {
    const at = new Map(order.map((type, i) => [type, i]));
    const chords = routes.map(r => r.types.map(type => at.get(type)).sort((a, b) => a - b));
    let count = 0;
    chords.forEach(([a, b], i) => chords.slice(i + 1).forEach(([c, d]) => {
      if ((a < c && c < b && b < d) || (c < a && a < d && d < b)) count += 1;
    }));
    return count;
  }

  /** The order of the cities around the hexagon with the fewest crossing routes. */
  function bestOrder(types, routes) {
    const [first, ...rest] = types;
    let best = types, fewest = Infinity;
    for (const tail of permutations(rest)) {
      const order = [first, ...tail], count = crossings(order, routes);
      if (count < fewest) { best = order; fewest = count; }
    }
    return best;
  }

  /** Cities on a hexagon, placed so that as few routes as possible cross. */
  function cityPositions(types, routes) {
    const positions = {};
    bestOrder(types, routes).forEach((type, i) => {
      const angle = Math.PI / 180 * (-90 + 60 * i);
      positions[type] = [MAP_W / 2 + RADIUS * 1.18 * Math.cos(angle),
        MAP_H / 2 + 12 + RADIUS * Math.sin(angle)];
    });
    return positions;
  }

  function routeLine(id, route, positions, owner) {
    const [a, b] = route.types.map(type => positions[type]);
    const owned = owner !== null && owner !== undefined;
    const group = s("g", {class: "route", "data-route": id, "data-owner": owned ? owner : "none"});
    if (route.kind === "sea") {
      group.append(s("line", {x1: a[0], y1: a[1], x2: b[0], y2: b[1], stroke: "#8fc3e6",
        "stroke-width": owned ? 14 : 10, "stroke-linecap": "round", "stroke-opacity": 0.8}));
    }
    group.append(s("line", {x1: a[0], y1: a[1], x2: b[0], y2: b[1],
      stroke: owned ? seatColour(owner) : "#a99f90", "stroke-width": owned ? 7 : 3,
      "stroke-dasharray": route.kind === "sea" && !owned ? "7 5" : null, "stroke-linecap": "round"}));
    const along = Math.hypot(b[0] - a[0], b[1] - a[1]) > 1.5 * RADIUS ? 0.3 : 0.5;
    const mx = a[0] + (b[0] - a[0]) * along, my = a[1] + (b[1] - a[1]) * along;
    group.append(s("circle", {cx: mx, cy: my, r: 8, fill: "#fffdf9", stroke: "#a99f90"}));
    group.append(s("text", {x: mx, y: my + 4, "text-anchor": "middle", "font-size": 10,
      fill: "#23201c"}, route.buy_cost));
    group.append(s("title", null, `${id} (${route.kind}): ` +
      (owned ? `owned by seat ${owner}` : `unowned, costs ${route.buy_cost}`)));
    return group;
  }

  function cityNode(city, type, [x, y], controller) {
    const held = controller !== null && controller !== undefined;
    return s("g", {class: "city", "data-city": city, "data-control": held ? controller : "none"},
      s("circle", {cx: x, cy: y, r: CITY_R, fill: held ? seatColour(controller) : "#fffdf9",
        stroke: "#2b2622", "stroke-width": held ? 2.5 : 1.2}),
      held ? s("circle", {cx: x, cy: y, r: CITY_R - 4, fill: "none", stroke: "#fffdf9",
        "stroke-width": 1.5}) : "",
      s("text", {x, y: y + 4, "text-anchor": "middle", "font-size": 10, "font-weight": 700,
        fill: held ? "#fff" : "#23201c"}, type),
      s("title", null, `${city}` + (held ? `: controlled by seat ${controller}` : "")));
  }

  function mapView(colour, observation, context) {
    const components = context.description.components;
    const map = components.maps[colour];
    const positions = cityPositions(components.city_types, Object.values(map.routes));
    const passage = (observation.rop || {})[colour];
    const svg = svgRoot(MAP_W, MAP_H, {class: "caravans-map", "data-map": colour});
    svg.append(s("rect", {x: 0, y: 0, width: MAP_W, height: MAP_H, rx: 12, fill: MAP_TINTS[colour],
      stroke: MAP_INKS[colour], "stroke-width": 2}));
    svg.append(s("text", {x: 12, y: 22, "font-size": 15, "font-weight": 700, fill: MAP_INKS[colour]},
      `${colour} map`));
    svg.append(s("text", {x: MAP_W - 12, y: 22, "text-anchor": "end", "font-size": 11,
      fill: "#23201c"}, passage === null || passage === undefined ? "passage: bank"
      : `passage: seat ${passage}`));
    for (const [id, route] of Object.entries(map.routes)) {
      svg.append(routeLine(id, route, positions, (observation.owner || {})[id]));
    }
    for (const city of Object.keys(map.cities)) {
      const type = city.split(".")[1];
      svg.append(cityNode(city, type, positions[type], (observation.control || {})[city]));
    }
    return svg;
  }

  function cardChip(card) {
    return h("span", {class: "cv-card", "data-card": card.id,
      style: `background:${CARD_COLOURS[card.colour]}`, title: `${card.colour} ${card.type}`},
      card.type);
  }

  function hiddenChip() {
    return h("span", {class: "cv-card hidden", title: "a card you can not see"}, "?");
  }

  function cardsOf(ids, context) {
    return ids.map(id => cardChip(context.description.components.cards[id]));
  }

  function itemsOf(seat, observation) {
    const items = [];
    if (observation.shah === seat) items.push("Shah");
    if (observation.eyes === seat) items.push("Eyes of the Shah");
    if (observation.pirate_queen === seat) items.push("Pirate Queen");
    for (const [colour, holder] of Object.entries(observation.rop || {})) {
      if (holder === seat) items.push(`${colour} passage`);
    }
    return items;
  }

  function playerPanel(seat, observation, context) {
    const own = context.seat === seat && Array.isArray(observation.hand);
    const cities = Object.entries(observation.control || {}).filter(([, c]) => c === seat)
      .map(([city]) => city);
    const routes = Object.values(observation.owner || {}).filter(o => o === seat).length;
    const known = (observation.known_cards || [])[seat] || [];
    const count = (observation.hand_counts || [])[seat] ?? known.length;
    const items = itemsOf(seat, observation);
    const camelUp = (observation.camel_up || [])[seat];
    return seatPanelFrame("caravans-seat", seat, own, observation, context,
      h("div", {class: "facts"},
        h("span", null, "gold ", h("b", {class: "gold"}, observation.gold[seat])),
        h("span", null, "camel ", h("b", null, camelUp ? "standing" : "lying")),
        h("span", null, "routes ", h("b", null, routes)),
        h("span", null, "cities ", h("b", {class: "cities"}, cities.length))),
      items.length ? h("div", {class: "facts"}, "holds ", items.map(item => h("b", {class: "item"}, item))) : "",
      h("div", {class: "cv-hand"}, own
        ? ["hand ", observation.hand.length ? cardsOf(observation.hand, context) : "empty"]
        : [`hand (${count}) `, cardsOf(known, context),
          Array.from({length: Math.max(0, count - known.length)}, hiddenChip)]));
  }

  function auctionText(bidding) {
    if (!bidding) return "";
    if (bidding.auction) {
      const a = bidding.auction;
      return h("span", null, "auction of ", h("b", null, a.item), ": ",
        JSON.stringify(Object.fromEntries(Object.entries(a).filter(([k]) => k !== "item"))));
    }
    if (bidding.naming) return h("span", null, "naming: ", JSON.stringify(bidding.naming));
    return bidding.auctioned && bidding.auctioned.length
      ? h("span", null, "auctioned this turn: ", bidding.auctioned.join(", ")) : "";
  }

  function tablePanel(observation, context) {
    const bank = observation.bank || {};
    const offer = observation.actions && observation.actions.offer;
    return h("div", {class: "panel caravans-table"},
      h("h3", null, "Ahldarahd"),
      h("div", {class: "facts"},
        h("span", null, "phase ", h("b", {id: "phase"}, observation.phase)),
        h("span", null, "turn ", h("b", null, observation.turn)),
        observation.final_turn ? h("b", null, "final turn") : "",
        observation.end ? h("span", null, "ended: ", h("b", {id: "end"}, observation.end.text))
          : "",
        h("span", null, "deck ", h("b", null, observation.deck_count)),
        h("span", null, "discard ", h("b", null, (observation.discard || []).length))),
      h("div", {class: "facts"}, "face up ", cardsOf(observation.face_up || [], context)),
      h("div", {class: "facts"}, "bank: ",
        (bank.passages || []).length ? `${bank.passages.join(", ")} passage` : "no passage",
        bank.eyes ? ", Eyes of the Shah" : "", bank.pirate_queen ? ", Pirate Queen" : ""),
      h("div", {class: "facts"}, auctionText(observation.bidding)),
      offer ? h("div", {class: "facts"}, "trade offer: ", h("code", null, JSON.stringify(offer))) : "");
  }

  function legend() {
    return h("div", {class: "muted legend"}, "routes: solid land, blue-edged sea; ",
      "coloured by owner; a filled city is controlled; the number on a route is its price");
  }

  window.GAME_RENDERERS = window.GAME_RENDERERS || {};
  window.GAME_RENDERERS.caravans = (observation, context) => {
    const seats = observation.gold.map((_, seat) => seat);
    return h("div", {class: "board caravans"},
      h("div", {class: "seats-col"}, tablePanel(observation, context),
        seats.map(seat => playerPanel(seat, observation, context))),
      h("div", {class: "panel"}, h("h3", null, "Maps"),
        h("div", {class: "cv-maps"}, observation.colours.map(c => mapView(c, observation, context))),
        legend()));
  };
})();

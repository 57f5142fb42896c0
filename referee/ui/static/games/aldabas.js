/* Aldabas: every player's block of doors with its vault, coins, the Dock and the hands. */
"use strict";

(function () {
  const DOOR_COLOURS = {red: "#b8322a", blue: "#2f67b0", yellow: "#d9a91a"};
  const DOOR_INK = {red: "#fff", blue: "#fff", yellow: "#2b2622"};
  const CARD_W = 64, CARD_H = 84, GAP = 6;
  const COLS = 4, ROWS = 3;

  function cardData(context, id) {
    return context.description.components.cards[id];
  }

  function coinStack(x, y, count, label) {
    if (!count) return "";
    return s("g", {class: "coins", "data-coins": count},
      s("circle", {cx: x, cy: y, r: 10, fill: "#f2c14e", stroke: "#8a6a12", "stroke-width": 1.5}),
      s("text", {x, y: y + 4, "text-anchor": "middle", "font-size": 11, "font-weight": 700,
        fill: "#5a4306"}, count),
      label ? s("title", null, label) : "");
  }

  /** One door card at (x, y), face up; `coins` sit on it when it is in a block. */
  function door(card, x, y, coins) {
    const ink = DOOR_INK[card.colour];
    const group = s("g", {class: "door", "data-card": card.id});
    group.append(s("rect", {x, y, width: CARD_W, height: CARD_H, rx: 6,
      fill: DOOR_COLOURS[card.colour], stroke: "#2b2622", "stroke-width": 1.2}));
    group.append(s("path", {d: `M${x + 12},${y + CARD_H - 6} v-44 a20,20 0 0 1 40,0 v44`,
      fill: "rgba(0,0,0,.14)", stroke: "rgba(0,0,0,.25)"}));
    group.append(s("text", {x: x + 6, y: y + 15, "font-size": 13, "font-weight": 700, fill: ink},
      card.type));
    group.append(s("circle", {cx: x + CARD_W - 12, cy: y + 12, r: 9, fill: "#fffdf9",
      stroke: "#2b2622", "stroke-width": 0.8}));
    group.append(s("text", {x: x + CARD_W - 12, y: y + 16, "text-anchor": "middle",
      "font-size": 11, "font-weight": 700, fill: "#2b2622"}, card.influence));
    group.append(s("text", {x: x + CARD_W / 2, y: y + 50, "text-anchor": "middle", "font-size": 10,
      fill: ink}, card.profession));
    group.append(s("text", {x: x + CARD_W / 2, y: y + CARD_H - 8, "text-anchor": "middle",
      "font-size": 9, "font-style": "italic", fill: ink}, card.aldaba));
    group.append(s("title", null, `${card.colour} ${card.type}: ${card.profession}, influence ${card.influence}`));
    group.append(coinStack(x + CARD_W - 12, y + CARD_H - 14, coins, `${coins} coins on this door`));
    return group;
  }

  function cardBack(x, y, label) {
    return s("g", {class: "door back"},
      s("rect", {x, y, width: CARD_W, height: CARD_H, rx: 6, fill: "#5b4636", stroke: "#2b2622"}),
      s("rect", {x: x + 6, y: y + 6, width: CARD_W - 12, height: CARD_H - 12, rx: 4, fill: "none",
        stroke: "#c9a877", "stroke-dasharray": "4 3"}),
      label ? s("text", {x: x + CARD_W / 2, y: y + CARD_H / 2 + 5, "text-anchor": "middle",
        "font-size": 13, "font-weight": 700, fill: "#f3ecdf"}, label) : "");
  }

  function vault(x, y, cards, coins, context) {
    const group = s("g", {class: "vault"});
    group.append(s("rect", {x, y, width: CARD_W, height: CARD_H, rx: 6, fill: "#3b3f46",
      stroke: "#1d1f23", "stroke-width": 1.5}));
    group.append(s("circle", {cx: x + CARD_W / 2, cy: y + 34, r: 14, fill: "none",
      stroke: "#9aa3ad", "stroke-width": 3}));
    group.append(s("text", {x: x + CARD_W / 2, y: y + 14, "text-anchor": "middle", "font-size": 10,
      fill: "#d7dbe0"}, "vault"));
    const known = Array.isArray(cards);
    const count = known ? cards.length : cards;
    group.append(s("text", {x: x + CARD_W / 2, y: y + 38, "text-anchor": "middle", "font-size": 12,
      "font-weight": 700, fill: "#fff"}, count));
    if (known && cards.length) {
      const types = cards.map(id => cardData(context, id).type).join(" ");
      group.append(s("text", {x: x + CARD_W / 2, y: y + 64, "text-anchor": "middle",
        "font-size": 9, fill: "#d7dbe0"}, types));
    }
    group.append(s("title", null, `${count} doors in the vault` +
      (coins === null || coins === undefined ? "" : `, ${coins} coins`)));
    if (coins !== null && coins !== undefined) {
      group.append(coinStack(x + CARD_W - 12, y + CARD_H - 12, coins, `${coins} coins in the vault`));
    }
    return group;
  }

  /** The 4 x 3 block, row 0 at the bottom, the vault in the bottom-left space. */
  function block(doors, vaultCards, vaultCoins, pending, context) {
    const width = COLS * (CARD_W + GAP) + GAP, height = ROWS * (CARD_H + GAP) + GAP;
    const svg = svgRoot(width, height, {class: "aldabas-block"});
    svg.append(s("rect", {x: 0, y: 0, width, height, rx: 8, fill: "#e9dfcd"}));
    const at = ([col, row]) => [GAP + col * (CARD_W + GAP), GAP + (ROWS - 1 - row) * (CARD_H + GAP)];
    const filled = new Map(doors.map(d => [d.space.join(","), d]));
    for (let row = 0; row < ROWS; row++) {
      for (let col = 0; col < COLS; col++) {
        const [x, y] = at([col, row]);
        if (col === 0 && row === 0) { svg.append(vault(x, y, vaultCards, vaultCoins, context)); continue; }
        const placed = filled.get(`${col},${row}`);
        if (placed) svg.append(door(cardData(context, placed.card), x, y, placed.coins));
        else svg.append(s("rect", {x: x + 1, y: y + 1, width: CARD_W - 2, height: CARD_H - 2, rx: 6,
          fill: "none", stroke: "#bcae95", "stroke-dasharray": "5 4"}));
      }
    }
    for (const space of pending || []) {
      const [x, y] = at(space);
      svg.append(s("rect", {x: x - 2, y: y - 2, width: CARD_W + 4, height: CARD_H + 4, rx: 8,
        fill: "none", stroke: "#f2c14e", "stroke-width": 3, class: "pending-power"}));
    }
    return svg;
  }

  function cardRow(ids, context, attrs) {
    const width = Math.max(1, ids.length) * (CARD_W + GAP) + GAP;
    const svg = svgRoot(width, CARD_H + 2 * GAP, attrs);
    ids.forEach((id, i) => svg.append(door(cardData(context, id), GAP + i * (CARD_W + GAP), GAP, 0)));
    if (!ids.length) svg.append(s("text", {x: GAP, y: CARD_H / 2, "font-size": 12, fill: "#7a736a"}, "none"));
    return svg;
  }

  function backsRow(count, attrs) {
    const shown = Math.min(count, 7);
    const svg = svgRoot(Math.max(1, shown) * 18 + CARD_W, CARD_H + 2 * GAP, attrs);
    for (let i = 0; i < shown; i++) svg.append(cardBack(GAP + i * 18, GAP, i === shown - 1 ? count : ""));
    if (!count) svg.append(s("text", {x: GAP, y: CARD_H / 2, "font-size": 12, fill: "#7a736a"}, "no cards"));
    return svg;
  }

  /** Influence per profession: printed influence of the doors plus the coins on them
      (the vault's doors count too, but only the vault's owner knows them). */
  function influence(doors, vaultCards, context) {
    const totals = {};
    for (const placed of doors) {
      const card = cardData(context, placed.card);
      totals[card.profession] = (totals[card.profession] || 0) + card.influence + placed.coins;
    }
    for (const id of vaultCards) {
      const card = cardData(context, id);
      totals[card.profession] = (totals[card.profession] || 0) + card.influence;
    }
    return totals;
  }

  function influenceView(player, own, observation, context) {
    const totals = influence(player.block, own ? observation.you.vault_cards : [], context);
    const entries = Object.entries(totals).sort((a, b) => b[1] - a[1]);
    return h("div", {class: "facts influence"}, own ? "influence " : "influence in block ",
      entries.length ? entries.map(([profession, value]) =>
        h("span", {class: "item"}, `${profession} ${value}`)) : "none");
  }

  function playerPanel(player, observation, context) {
    const seat = player.seat;
    const own = context.seat === seat && observation.you;
    const pending = observation.active === seat ? observation.pending_powers : [];
    return seatPanelFrame("aldabas-seat", seat, own, observation, context,
      h("div", {class: "facts"},
        h("span", null, "purse ", h("b", {class: "purse"}, player.purse), " coins"),
        h("span", null, "hand ", h("b", {class: "hand-size"}, player.hand_size)),
        h("span", null, "vault ", h("b", null, player.vault_card_count), " doors"),
        own ? h("span", null, "vault coins ", h("b", null, observation.you.vault_coins)) : ""),
      influenceView(player, own, observation, context),
      block(player.block, own ? observation.you.vault_cards : player.vault_card_count,
        own ? observation.you.vault_coins : null, pending, context),
      h("div", {class: "hand"}, own
        ? [h("div", {class: "muted"}, "hand"), cardRow(observation.you.hand, context, {class: "own-hand"})]
        : backsRow(player.hand_size, {class: "hidden-hand"})));
  }

  function rivalPanel(rival, context) {
    return h("div", {class: "panel aldabas-rival"},
      h("h3", null, "Rival (Solidad)"),
      h("div", {class: "facts"},
        h("span", null, "vault ", h("b", null, rival.vault_card_count), " doors, ",
          h("b", null, rival.vault_coins), " coins")),
      block(rival.block, rival.vault_card_count, rival.vault_coins, [], context),
      h("div", {class: "muted"}, "goals"), cardRow(rival.goals || [], context, {class: "rival-goals"}),
      h("div", {class: "muted"}, "hand"),
      Array.isArray(rival.hand) ? cardRow(rival.hand, context, {class: "rival-hand"})
        : backsRow(rival.hand_size || 0, {}));
  }

  function dock(observation, context) {
    const slots = observation.dock;
    const width = slots.length * (CARD_W + GAP) + GAP;
    const svg = svgRoot(width, CARD_H + 30, {class: "aldabas-dock", id: "dock"});
    slots.forEach((slot, i) => {
      const x = GAP + i * (CARD_W + GAP);
      if (slot.card === null || slot.card === undefined) {
        svg.append(s("rect", {x, y: 4, width: CARD_W, height: CARD_H, rx: 6, fill: "none",
          stroke: "#bcae95", "stroke-dasharray": "5 4"}));
      } else {
        const g = door(cardData(context, slot.card), x, 4, 0);
        g.setAttribute("class", "door dock-slot");
        svg.append(g);
      }
      svg.append(s("text", {x: x + CARD_W / 2, y: CARD_H + 24, "text-anchor": "middle",
        "font-size": 12, fill: "#23201c"}, `cost ${slot.cost}`));
    });
    return svg;
  }

  function endTrigger(observation) {
    const trigger = observation.end_trigger;  // aldabas 1.1.0 replays: ending {by, reason}
    const text = trigger ? trigger.text
      : observation.ending && `${observation.ending.reason} (${observation.ending.by})`;
    return text ? h("div", {class: "facts"}, h("span", null, observation.end ? "ended: "
      : "final round: ", h("b", {id: "end"}, text))) : "";
  }

  function tablePanel(observation, context) {
    const discard = observation.discard || [];
    const power = observation.power;
    return h("div", {class: "panel aldabas-table"},
      h("h3", null, "Cartagena"),
      h("div", {class: "facts"},
        h("span", null, "mode ", h("b", null, observation.mode)),
        h("span", null, "phase ", h("b", {id: "phase"}, observation.phase)),
        h("span", null, "turn ", h("b", null, observation.turn)),
        observation.active !== null ? h("span", null, "active ", h("b", null, `seat ${observation.active}`),
          `, ${observation.actions_left} actions left`) : ""),
      h("div", {class: "facts"},
        h("span", null, "supply ", h("b", {id: "supply"}, observation.supply), " coins"),
        observation.box_used ? h("span", null, "from the box ", h("b", null, observation.box_used)) : "",
        h("span", null, "deck ", h("b", null, observation.deck_count)),
        h("span", null, "discard ", h("b", null, discard.length))),
      power ? h("div", {class: "facts"}, h("span", null, "power in progress: ",
        h("code", null, JSON.stringify(power)))) : "",
      endTrigger(observation),
      h("div", {class: "muted"}, "the Dock"),
      dock(observation, context),
      discard.length ? [h("div", {class: "muted"}, "top of the discard pile"),
        cardRow(discard.slice(-1), context, {class: "discard"})] : "");
  }

  window.GAME_RENDERERS = window.GAME_RENDERERS || {};
  window.GAME_RENDERERS.aldabas = (observation, context) => h("div", {class: "board aldabas"},
    h("div", {class: "seats-col"}, tablePanel(observation, context),
      observation.rival ? rivalPanel(observation.rival, context) : ""),
    h("div", {class: "grid-panels"},
      observation.players.map(player => playerPanel(player, observation, context))));
})();

/* A bot: its owner, games and versions, and for each game its leaderboard numbers (Elo,
   μ ± σ) with a plot of its Elo after each of its latest rated matches, where the version
   it played changed marked. */
"use strict";

const HISTORY_POINTS = 1000;  // the latest rated matches plotted: one page of the history
const BOARD_PAGE = 200;

function botFacts(bot) {
  return h("p", {class: "facts"},
    h("span", null, "owner ", h("b", {id: "bot-owner"}, bot.owner ?? "the admin")),
    h("span", {id: "bot-games"}, "games ",
      bot.games.map((game, i) => [i ? ", " : "", uiLink(`games/${game}`, game)])),
    h("span", {id: "bot-public"}, bot.public ? "public" : "not public"),
    h("span", null, "version ", h("b", {id: "bot-version"}, bot.version)),
    h("span", null, `registered ${when(bot.created_at)}`));
}

function versionsTable(bot) {
  return table([
    {title: "version", cell: v => v.version, cls: "num"},
    {title: "created", cell: v => when(v.created_at)},
    {title: "", cell: v => v.version === bot.version ? "current" : ""},
  ], bot.versions, {id: "versions-table"});
}

/** The bot's row of the game's leaderboard (read a page at a time), or null. */
async function leaderboardRow(game, botId) {
  for (let offset = 0; ; offset += BOARD_PAGE) {
    const page = await api(`/ratings/${encodeURIComponent(game)}?offset=${offset}&limit=${BOARD_PAGE}`);
    const row = page.leaderboard.find(entry => entry.bot_id === botId);
    if (row || offset + BOARD_PAGE >= page.total) return row || null;
  }
}

/** The bot's latest rated matches in the game: a page of `[n, Elo, version]` points. */
async function ratingHistory(game, botId) {
  const page = offset => api(`/ratings/${encodeURIComponent(game)}/history?bot=` +
    `${encodeURIComponent(botId)}&offset=${offset}&limit=${HISTORY_POINTS}`);
  const first = await page(0);
  return first.total <= HISTORY_POINTS ? first : page(first.total - HISTORY_POINTS);
}

/** A mark at each rated match where the version played differs from the one before. */
function versionMarks(history) {
  return history.slice(1)
    .filter((point, i) => point[2] !== undefined && history[i][2] !== undefined
      && point[2] !== history[i][2])
    .map(point => ({x: point[0], label: `v${point[2]}`}));
}

function ratingFacts(row) {
  if (!row) return h("p", {class: "muted"}, "not rated yet");
  const byPlayers = Object.entries(row.by_players || {})
    .map(([players, skill]) => `${players} players: ${muSigma(skill)}`).join(" · ");
  return h("p", {class: "facts"},
    h("span", null, "Elo ", h("b", {class: "elo"}, fmt(row.rating))),
    row.low === null ? "" : h("span", null, `95% interval ${fmt(row.low)} – ${fmt(row.high)}`),
    h("span", null, "μ ± σ ", h("b", {class: "mu-sigma"}, muSigma(row))),
    h("span", null, `ordinal ${fmt(row.ordinal, 2)}`),
    h("span", {class: "games"}, `${row.games} rated matches`),
    byPlayers ? h("span", {class: "muted"}, byPlayers) : "");
}

function gameRatings(bot, game, row, page) {
  const series = [{key: bot.id, name: bot.name, colour: PLOT_PALETTE[0],
    points: page.history.map(point => [point[0], point[1]])}];
  return h("div", {class: "game-ratings", "data-game": game},
    h("h3", null, uiLink(`games/${game}`, game)),
    ratingFacts(row),
    h("div", {class: "plot"}, seriesPlot(series, {id: `rating-plot-${game}`,
      label: `${game} rating history`, xLabel: "rated matches",
      marks: versionMarks(page.history), empty: "no rated match yet"})));
}

async function ratingsView(bot) {
  return Promise.all(bot.games.map(async game => {
    const [row, page] = await Promise.all([leaderboardRow(game, bot.id),
      ratingHistory(game, bot.id)]);
    return gameRatings(bot, game, row, page);
  }));
}

document.addEventListener("DOMContentLoaded", async () => {
  const title = document.getElementById("title");
  let bot;
  try {
    bot = await api(`/bots/${encodeURIComponent(title.dataset.bot)}`);
  } catch (error) {
    setChildren(document.getElementById("bot"), errorBox(error));
    return;
  }
  title.textContent = `Bot ${bot.name}`;
  setChildren(document.getElementById("bot"), botFacts(bot));
  setChildren(document.getElementById("versions"), versionsTable(bot));
  fill("ratings", () => ratingsView(bot));
});

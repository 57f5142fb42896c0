/* Every ladder (the newest 200), linking to their pages. */
"use strict";

const LISTED = 200;

async function allLadders() {
  const {ladders, total} = await api(`/ladders?limit=${LISTED}`);
  const more = total > ladders.length
    ? h("p", {class: "muted"}, `the newest ${ladders.length} of ${total}`) : "";
  return [laddersTable(ladders), more];
}

document.addEventListener("DOMContentLoaded", () => fill("ladders", allLadders));

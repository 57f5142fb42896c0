// What a JavaScript client does with a replay: JSON.parse it, JSON.stringify it, and post it
// to POST /replays/verify. Usage: node js_round_trip.js BASE_URL SOURCE...
// A SOURCE "api:/path" is fetched from BASE_URL + /path; any other is a file. One JSON line per
// source: {"source", "seed" (as JavaScript reads it), "rewritten_has", "status", "report"}.
"use strict";

const fs = require("fs");

async function readSource(base, source) {
  if (!source.startsWith("api:")) return fs.readFileSync(source, "utf8");
  const response = await fetch(base + source.slice("api:".length));
  if (!response.ok) throw new Error(`GET ${source}: ${response.status}`);
  return response.text();
}

async function roundTrip(base, source) {
  const record = JSON.parse(await readSource(base, source));
  const rewritten = JSON.stringify(record);
  const response = await fetch(base + "/replays/verify", {
    method: "POST", headers: {"Content-Type": "application/json"}, body: rewritten,
  });
  return {
    source,
    seed: String(record.seed),
    rewritten_has: {'"elapsed_ms":3,': rewritten.includes('"elapsed_ms":3,')},
    status: response.status,
    report: await response.json(),
  };
}

async function main() {
  const [base, ...sources] = process.argv.slice(2);
  for (const source of sources) console.log(JSON.stringify(await roundTrip(base, source)));
}

main().catch(error => { console.error(error); process.exit(1); });

#!/usr/bin/env node
// A random bot for every game, in plain Node.js (no npm packages): proof that the
// referee/1 protocol needs nothing from Python.
//
//   node bots/node/random_bot.js [--port 8002] [--host 127.0.0.1]
//
// The referee POSTs {"protocol": "referee/1", "match_id", "game", "seat", "step",
// "deadline_ms", "observation", "legal_actions"}; the bot answers 200 {"action": {...}}.
'use strict';

const http = require('http');

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && at + 1 < process.argv.length ? process.argv[at + 1] : fallback;
}

function reply(response, status, body) {
  const data = JSON.stringify(body);
  response.writeHead(status, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(data),
  });
  response.end(data);
}

function decide(payload) {
  const legal = payload && payload.legal_actions;
  if (!Array.isArray(legal) || legal.length === 0) {
    throw new Error('"legal_actions" must be a non-empty list');
  }
  return legal[Math.floor(Math.random() * legal.length)];
}

const server = http.createServer((request, response) => {
  if (request.method !== 'POST') {
    reply(response, 405, { error: 'POST a referee/1 decision' });
    return;
  }
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    try {
      const payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      reply(response, 200, { action: decide(payload) });
    } catch (error) {
      reply(response, 400, { error: String(error.message || error) });
    }
  });
});

server.keepAliveTimeout = 60000;
const host = option('host', '127.0.0.1');
const port = Number(option('port', '8002'));
server.listen(port, host, () => {
  console.log(`bot listening on http://${host}:${server.address().port}/`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

#!/usr/bin/env node
// A random bot for every game, in plain Node.js (no npm packages): proof that the
// referee/1 protocol needs nothing from Python.
//
//   REFEREE_BOT_SECRET=... node bots/node/random_bot.js [--port 8002] [--host 127.0.0.1]
//                                                       [--think]
//
// The referee POSTs {"protocol": "referee/1", "type": "decision", "match_id", "game",
// "seat", "step", "deadline_ms", "observation", "legal_actions"}; the bot answers 200
// {"action": {...}, "log": "new"} (it reads no log: "new" asks for the log's new entries
// only, docs/bots.md "The log since your last decision"). After a match it POSTs {"type":
// "result", "match_id", "game", "seat", "result", "replay_url"}: answered 200 {} (a body
// without "type" is a decision, from an older referee). With REFEREE_BOT_SECRET set, a
// request without a valid Referee-Signature header (t=<unix seconds>,v1=<hex
// HMAC-SHA256(secret, "<t>." + raw body)>) gets a 401.
// On a match with a time control each decision carries "clock" ({remaining_ms, increment_ms,
// overdraft_ms, deadline_ms}); with --think the bot spends its budget on each decision (a
// twentieth of its clock plus most of the increment, as docs/bots.md "Clocks" suggests)
// and reports it in "info". Updates ({"type": "update"}, for a bot registered with
// "updates": true) are answered 200 {} at once and counted.
'use strict';

const crypto = require('crypto');
const http = require('http');

const MAX_BODY_BYTES = 16 * 1024 * 1024;
const TOLERANCE_S = 300;

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

// Throws an Error saying what is wrong unless `header` signs `body` (a Buffer) with
// `secret` at a time within TOLERANCE_S of now. Several v1 values may come while the
// secret is rotated; one matching is enough.
function verifySignature(secret, header, body) {
  if (!header) throw new Error('the Referee-Signature header is missing');
  const pairs = header.slice(0, 4096).split(',').map((part) => {
    const at = part.indexOf('=');
    return at < 0 ? ['', ''] : [part.slice(0, at).trim(), part.slice(at + 1).trim()];
  });
  const stamps = pairs.filter(([key]) => key === 't').map(([, value]) => value);
  const candidates = pairs.filter(([key]) => key === 'v1').map(([, value]) => value);
  if (stamps.length !== 1 || !/^\d{1,12}$/.test(stamps[0]) || candidates.length === 0) {
    throw new Error('malformed Referee-Signature header: expected t=...,v1=...');
  }
  if (Math.abs(Date.now() / 1000 - Number(stamps[0])) > TOLERANCE_S) {
    throw new Error(`the signature's timestamp is more than ${TOLERANCE_S} s from now`);
  }
  const expected = Buffer.from(crypto.createHmac('sha256', secret)
    .update(`${stamps[0]}.`).update(body).digest('hex'));
  const matches = candidates.some((candidate) => {
    const given = Buffer.from(candidate.toLowerCase());
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  if (!matches) throw new Error('the signature does not match (wrong secret or altered body)');
}

function decide(payload) {
  const legal = payload && payload.legal_actions;
  if (!Array.isArray(legal) || legal.length === 0) {
    throw new Error('"legal_actions" must be a non-empty list');
  }
  return legal[Math.floor(Math.random() * legal.length)];
}

// How long to think on this decision: a twentieth of the seat's clock plus most of the
// increment, within what the decision may take; most of the deadline without a clock.
function budgetMs(payload) {
  const clock = payload.clock;
  if (!clock) return Math.max(payload.deadline_ms * 0.8 - 50, 0);
  const mine = clock.remaining_ms[payload.seat];
  return Math.max(Math.min(mine / 20 + clock.increment_ms * 0.8, clock.deadline_ms - 50), 0);
}

const think = process.argv.includes('--think');
const heard = new Map(); // updates heard, per match and seat

function answer(message, response) {
  const type = message && message.type !== undefined ? message.type : 'decision';
  if (type === 'result') {
    const ranks = message.result && message.result.ranks;
    console.error(`match ${message.match_id} over: ranks ${JSON.stringify(ranks)}`);
    heard.delete(`${message.match_id}/${message.seat}`);
    reply(response, 200, {});
  } else if (type === 'update') {
    const key = `${message.match_id}/${message.seat}`;
    heard.set(key, (heard.get(key) || 0) + 1);
    reply(response, 200, {});
  } else if (type === 'decision' && think) {
    const action = decide(message);
    const budget = budgetMs(message);
    const started = Date.now();
    setTimeout(() => reply(response, 200, {
      action,
      log: 'new',
      info: { budget_ms: Math.round(budget * 10) / 10, spent_ms: Date.now() - started,
              updates_heard: heard.get(`${message.match_id}/${message.seat}`) || 0 },
    }), Math.ceil(budget));
  } else if (type === 'decision') {
    reply(response, 200, { action: decide(message), log: 'new' });
  } else {
    reply(response, 400, { error: `unknown "type" ${JSON.stringify(type)}` });
  }
}

const secret = process.env.REFEREE_BOT_SECRET || '';

const server = http.createServer((request, response) => {
  if (request.method !== 'POST') {
    reply(response, 405, { error: 'POST a referee/1 message' });
    return;
  }
  const chunks = [];
  let size = 0;
  request.on('data', (chunk) => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      reply(response, 413, { error: 'the body is too large' });
      request.destroy();
      return;
    }
    chunks.push(chunk);
  });
  request.on('end', () => {
    const body = Buffer.concat(chunks);
    if (secret) {
      try {
        verifySignature(secret, request.headers['referee-signature'], body);
      } catch (error) {
        reply(response, 401, { error: error.message });
        return;
      }
    }
    try {
      answer(JSON.parse(body.toString('utf8')), response);
    } catch (error) {
      reply(response, 400, { error: String(error.message || error) });
    }
  });
});

server.keepAliveTimeout = 60000;
const host = option('host', '127.0.0.1');
const port = Number(option('port', '8002'));
server.listen(port, host, () => {
  const checked = secret ? ' (signatures checked)' : '';
  console.log(`bot listening on http://${host}:${server.address().port}/${checked}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

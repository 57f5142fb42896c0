"""The one home of the test helpers (no tests here): the API test kit, the test bots, the
worker and server processes, the SSE client, shared checks, the programs some tests run by
path (`stdio_program.py`, `js_round_trip.js`) and the data files they read (`data/`)."""

"""The Python bot kit: `sdk.serve(choose, port)`, a random bot for any game and one
heuristic bot per game (`bots.python.<game>_bot`)."""

"""Bot kits: the Python SDK and example bots (`bots.python`), a Node.js bot (`bots/node`)."""

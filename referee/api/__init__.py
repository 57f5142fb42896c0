"""The HTTP API: create_app(), auth, problems, live streams, one module per resource."""

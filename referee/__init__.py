"""The referee: REST API, match runner and command line."""

"""One Flask blueprint per resource of the API (design.md section 5)."""

"""A Server-Sent Events client for the live tests: reads a stream over
real HTTP as a browser's EventSource parses it (event, id and data fields, comments, the
`retry` field), one event at a time."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field

import requests

READ_TIMEOUT_S = 60  # between two chunks: longer than the server's ping interval


@dataclass
class Event:
    name: str
    data: dict
    id: str | None = None


@dataclass
class Stream:
    """One open stream: its events as they come, and what else it said."""

    response: requests.Response
    comments: list[str] = field(default_factory=list)
    retry: int | None = None
    last_id: str | None = None

    def events(self) -> Iterator[Event]:
        name, data, event_id = "message", [], None
        for raw in self.response.iter_lines(chunk_size=1, decode_unicode=False):
            line = raw.decode()
            if not line:
                if data:
                    if event_id is not None:
                        self.last_id = event_id
                    yield Event(name, json.loads("\n".join(data)), event_id)
                name, data, event_id = "message", [], None
            elif line.startswith(":"):
                self.comments.append(line[1:].strip())
            else:
                key, _, value = line.partition(":")
                value = value[1:] if value.startswith(" ") else value
                if key == "event":
                    name = value
                elif key == "data":
                    data.append(value)
                elif key == "id":
                    event_id = value
                elif key == "retry":
                    self.retry = int(value)

    def close(self) -> None:
        self.response.close()


def open_stream(url: str, token: str | None = None, resume_after: str | None = None,
                **params: object) -> Stream:
    headers = {"Accept": "text/event-stream"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if resume_after is not None:
        headers["Last-Event-ID"] = resume_after
    response = requests.get(url, headers=headers, params=params, stream=True,
                            timeout=(10, READ_TIMEOUT_S))
    return Stream(response)


def read_all(url: str, token: str | None = None, **kwargs: object) -> list[Event]:
    """Every event of a stream that ends (a match's, up to `result`)."""
    stream = open_stream(url, token, **kwargs)
    assert stream.response.status_code == 200, stream.response.text
    try:
        return list(stream.events())
    finally:
        stream.close()

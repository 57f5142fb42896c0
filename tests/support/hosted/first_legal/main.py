import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("type", "decision") == "decision":
        print(json.dumps({"action": message["legal_actions"][0]}), flush=True)
    elif message.get("type") == "result":
        print(f"result: {message['result']['ranks']}", file=sys.stderr)

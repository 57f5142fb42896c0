const readline = require("readline");
const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const message = JSON.parse(line);
  if ((message.type || "decision") === "decision") {
    process.stdout.write(JSON.stringify({ action: message.legal_actions[0] }) + "\n");
  }
});

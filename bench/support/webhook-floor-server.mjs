// The floor for bench/webhook.mjs: bare node:http that takes each POSTed JSON body, parses it and
// appends it as one line to the file named by its argument (one fs.WriteStream, which writes what
// queued up meanwhile in one go), answering 200 once the line is written. No token, no record,
// no rotation: what the platform allows for "receive, log, answer". Binds 127.0.0.1:0 and prints
// its base URL on stdout.
import { createWriteStream } from "node:fs"
import { createServer } from "node:http"

const log = createWriteStream(process.argv[2], { flags: "a", mode: 0o600 })

const server = createServer((request, response) => {
  const parts = []
  request.on("data", (part) => parts.push(part))
  request.on("end", () => {
    const body = JSON.parse(Buffer.concat(parts).toString("utf8"))
    log.write(`${JSON.stringify({ received_at: new Date().toISOString(), body })}\n`, () => {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(`{"status":"ok"}`)
    })
  })
})
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`))
// Keep-alive connections would hold a graceful close open: this server has nothing to finish.
process.on("SIGTERM", () => process.exit(0))

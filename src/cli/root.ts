/** The `relay` command tree. */
import { Command } from "@effect/cli"
import { VERSION } from "../version.js"
import { authCommand } from "./authCommands.js"
import { sessionCommand } from "./sessionCommands.js"

export const relay = Command.make("relay").pipe(
  Command.withDescription("Connect AI assistants and developers to A2A agents"),
  Command.withSubcommands([sessionCommand, authCommand])
)

export const runCli = Command.run(relay, { name: "relay", version: VERSION })

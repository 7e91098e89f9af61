/** The `relay` command tree. */
import { Command } from "@effect/cli"
import { VERSION } from "../version.js"
import { authCommand } from "./authCommands.js"
import { cardCommand } from "./cardCommands.js"
import { checkCommand } from "./checkCommand.js"
import { completionsCommand } from "./completions.js"
import { doctorCommand } from "./doctorCommand.js"
import { withHelp } from "./help.js"
import { mcpCommand } from "./mcpCommand.js"
import { messageCommand } from "./messageCommands.js"
import { notificationsCommand } from "./notificationCommands.js"
import { serverCommand } from "./serverCommands.js"
import { sessionCommand } from "./sessionCommands.js"
import { taskCommand } from "./taskCommands.js"

export const relay = Command.make("relay").pipe(
  Command.withDescription("Connect AI assistants and developers to A2A agents"),
  Command.withSubcommands([
    mcpCommand,
    messageCommand,
    taskCommand,
    cardCommand,
    checkCommand,
    sessionCommand,
    authCommand,
    serverCommand,
    notificationsCommand,
    doctorCommand,
    completionsCommand((): Command.Command<any, any, any, any> => relay)
  ])
)

/** Help (help.ts) is answered before @effect/cli parses anything. */
export const runCli = withHelp(relay, Command.run(relay, { name: "relay", version: VERSION }))

/** The `relay` command tree. */
import { Command, HelpDoc } from "@effect/cli"
import { VERSION } from "../version.js"
import { authCommand } from "./authCommands.js"
import { cardCommand } from "./cardCommands.js"
import { checkCommand } from "./checkCommand.js"
import { completionsCommand } from "./completions.js"
import { doctorCommand } from "./doctorCommand.js"
import { EXIT_CODES_HELP } from "./exitCodes.js"
import { mcpCommand } from "./mcpCommand.js"
import { messageCommand } from "./messageCommands.js"
import { notificationsCommand } from "./notificationCommands.js"
import { serverCommand } from "./serverCommands.js"
import { sessionCommand } from "./sessionCommands.js"
import { taskCommand } from "./taskCommands.js"

export const relay = Command.make("relay").pipe(
  Command.withDescription(HelpDoc.blocks([
    HelpDoc.p("Connect AI assistants and developers to A2A agents"),
    HelpDoc.p(EXIT_CODES_HELP)
  ])),
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

export const runCli = Command.run(relay, { name: "relay", version: VERSION })

/**
 * The `relay` command tree, loaded a group at a time.
 *
 * Each top-level group (`message`, `mcp`, `server`, …) lives in a module of its own that brings its
 * own services (`Command.provide`), and the bundle splits along these imports: `relay session list`
 * loads the session group and never the MCP SDK, the model layer or the A2A client. Loading the
 * whole bundle was most of every command's start-up (bench/README.md); test/cli/lazyLoading.test.ts
 * is the guard.
 */
import { Command } from "@effect/cli"
import type { FileSystem, Path, Terminal } from "@effect/platform"
import { Effect } from "effect"
import type { StateDir } from "../services/StateDir.js"
import { VERSION } from "../version.js"
import type { CommandNeeding } from "./commandTree.js"
import { withHelp } from "./help.js"

/** What main.ts provides to every command; a group provides anything else it uses itself. */
export type BaseServices = FileSystem.FileSystem | Path.Path | Terminal.Terminal | StateDir

/** A group, or the tree: its services are checked (commandTree.ts says why the rest is open). */
type AnyCommand = CommandNeeding<BaseServices>

/** Each group's name and how to load it, in the order help lists them. */
const GROUPS: ReadonlyArray<readonly [string, () => Promise<AnyCommand>]> = [
  ["mcp", () => import("./mcpCommand.js").then((m) => m.mcpCommand)],
  ["message", () => import("./messageCommands.js").then((m) => m.messageCommand)],
  ["task", () => import("./taskCommands.js").then((m) => m.taskCommand)],
  ["card", () => import("./cardCommands.js").then((m) => m.cardCommand)],
  ["check", () => import("./checkCommand.js").then((m) => m.checkCommand)],
  ["agent", () => import("./agentCommands.js").then((m) => m.agentCommand)],
  ["session", () => import("./sessionCommands.js").then((m) => m.sessionCommand)],
  ["auth", () => import("./authCommands.js").then((m) => m.authCommand)],
  ["server", () => import("./serverCommands.js").then((m) => m.serverCommand)],
  ["notifications", () => import("./notificationCommands.js").then((m) => m.notificationsCommand)],
  ["doctor", () => import("./doctorCommand.js").then((m) => m.doctorCommand)],
  ["completions", () => import("./completions.js").then((m) => m.completionsCommand(loadWholeTree))]
]

const rootCommand = Command.make("relay").pipe(
  Command.withDescription("Connect AI assistants and developers to A2A agents")
)

const treeOf = (groups: ReadonlyArray<AnyCommand>): AnyCommand =>
  rootCommand.pipe(Command.withSubcommands(groups as [AnyCommand, ...Array<AnyCommand>]))

/** The whole tree: for root help, completions and any command line naming no known group. */
export const loadWholeTree = (): Promise<AnyCommand> => Promise.all(GROUPS.map(([, load]) => load())).then(treeOf)

/**
 * The tree a command line needs: its group alone when the first word names one, else the whole
 * tree (so root help, suggestions and errors read as usual).
 */
export const loadTreeFor = (args: ReadonlyArray<string>): Promise<AnyCommand> => {
  const first = args.find((arg) => !arg.startsWith("-"))
  const group = GROUPS.find(([name]) => name === first)
  return group === undefined ? loadWholeTree() : group[1]().then((command) => treeOf([command]))
}

/** Runs a command line (process.argv-shaped); help (help.ts) is answered before @effect/cli parses anything. */
export const runCli = (argv: ReadonlyArray<string>) =>
  Effect.promise(() => loadTreeFor(argv.slice(2))).pipe(
    Effect.flatMap((tree) => withHelp(tree, Command.run(tree, { name: "relay", version: VERSION }))(argv))
  )

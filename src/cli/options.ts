/** Options shared by many commands, defined once so every command spells them the same. */
import { Options } from "@effect/cli"

export const json = Options.boolean("json").pipe(Options.withDescription("Print the result as JSON on stdout"))
export const verbose = Options.boolean("verbose").pipe(Options.withDescription("Log details to stderr"))

/** Spread into every command's config: `{ ...outputOptions, url }`. */
export const outputOptions = { json, verbose } as const

export const agentUrl = Options.text("url").pipe(
  Options.withDescription("Base URL of the A2A agent, e.g. http://127.0.0.1:8000")
)

/** `relay doctor`: one line per check, ok or what to do; exit 1 when any check failed. */
import { Command } from "@effect/cli"
import { Effect, Layer } from "effect"
import { runDoctor } from "../programs/doctor.js"
import * as ClientConfigFiles from "../services/ClientConfigFiles.js"
import * as HttpClient from "../services/HttpClient.js"
import * as SystemProbes from "../services/SystemProbes.js"
import { outputOptions } from "./options.js"
import { CommandFailed, EXIT_FAILURE, render } from "./output.js"

export const doctorCommand = Command.make(
  "doctor",
  outputOptions,
  (values) =>
    render(values, runDoctor, (report, style) =>
      report.checks.map((check) =>
        check.ok
          ? `${style.green("✓")} ${check.name}: ${check.detail}`
          : `${style.red("✗")} ${check.name}: ${check.detail}\n  ${style.dim(`fix: ${check.fix}`)}`
      ).join("\n")).pipe(
        Effect.flatMap((report) => report.ok ? Effect.void : Effect.fail(new CommandFailed({ exitCode: EXIT_FAILURE })))
      )
).pipe(
  Command.withDescription(
    "Check Node, the state directory, the store, relay mcp, the agent's model, default ports and MCP client configs; exit 1 when one fails"
  ),
  Command.provide(Layer.mergeAll(SystemProbes.layer, ClientConfigFiles.layer, HttpClient.layer))
)

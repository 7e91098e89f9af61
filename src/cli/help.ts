/**
 * `relay … --help`, `relay … -h` and `relay help …`, rendered here in one place from the command
 * tree (commandTree.ts) and the examples table (examples.ts): the full command path in the usage
 * line, one row per option with its meaning, choices and default, subcommands once each, examples,
 * and at the root the global options and exit codes; wrapped to the terminal's width.
 *
 * @effect/cli's own help is not used: it loses the command path, repeats parents in its command
 * list, pads lines past the terminal and adds boilerplate to every option.
 */
import type { Effect } from "effect"
import { readCommandLine, unknownCommand } from "./commandLine.js"
import {
  type AnyCommand,
  type ArgSpec,
  type CommandSpec,
  commandSpec,
  GLOBAL_OPTIONS,
  type Level,
  levels,
  type OptionSpec,
  UNLISTED_OPTIONS
} from "./commandTree.js"
import { jsonRequested, UsageError } from "./ending.js"
import { EXAMPLES } from "./examples.js"
import { EXIT_CODE_ROWS } from "./exitCodes.js"
import { type CommandFailed, makeStyle, reportError, writeOut } from "./output.js"

const INDENT = 2
const GAP = 3
/** Below this, a description goes under its label instead of beside it. */
const MIN_TEXT_WIDTH = 24
const MIN_WIDTH = 20

/** The terminal's width; off a terminal, $COLUMNS, else 80. */
export const helpWidth = (): number => {
  const columns = Number(process.env["COLUMNS"])
  const width = process.stdout.isTTY && process.stdout.columns > 0
    ? process.stdout.columns
    : Number.isInteger(columns) && columns > 0
    ? columns
    : 80
  return Math.max(MIN_WIDTH, width)
}

const spaces = (count: number) => " ".repeat(count)

/** Words into lines of at most `width` characters; a longer word is cut. */
export const wrap = (text: string, width: number): Array<string> =>
  text.split("\n").flatMap((paragraph) => {
    const lines: Array<string> = []
    let line = ""
    for (let word of paragraph.split(/\s+/).filter((part) => part !== "")) {
      if (line !== "" && line.length + 1 + word.length <= width) {
        line += ` ${word}`
        continue
      }
      if (line !== "") lines.push(line)
      while (word.length > width) {
        lines.push(word.slice(0, width))
        word = word.slice(width)
      }
      line = word
    }
    return [...lines, line]
  })

/** Text indented by `indent`, wrapped to fit `width` with it. */
const indented = (text: string, width: number, indent = INDENT) => wrap(text, width - indent).map((line) => spaces(indent) + line)

/** A label on its own line, keeping its leading alignment when it fits. */
const labelLine = (label: string, width: number) => INDENT + label.length <= width ? [spaces(INDENT) + label] : indented(label, width)

/** Label and text side by side, the texts aligned; a label too long for its column stands on its own line. */
const table = (rows: ReadonlyArray<readonly [label: string, text: string]>, width: number): Array<string> => {
  const widest = Math.floor((width - INDENT) * 0.4)
  const labelWidth = Math.max(0, ...rows.map(([label]) => label.length).filter((length) => length <= widest))
  const textIndent = INDENT + labelWidth + GAP
  if (width - textIndent < MIN_TEXT_WIDTH) {
    return rows.flatMap(([label, text]) => [...labelLine(label, width), ...indented(text, width, INDENT * 4)])
  }
  return rows.flatMap(([label, text]) => {
    const lines = wrap(text, width - textIndent).map((line) => spaces(textIndent) + line)
    if (label.length > labelWidth) return [...labelLine(label, width), ...lines]
    const [first = "", ...rest] = lines
    return [(spaces(INDENT) + label.padEnd(labelWidth) + first.slice(INDENT + labelWidth)).trimEnd(), ...rest]
  })
}

/** Cut into pieces of at most `width` characters. */
const cut = (text: string, width: number): Array<string> =>
  text.length <= width ? [text] : [text.slice(0, width), ...cut(text.slice(width), width)]

/**
 * A command line wrapped at its words (quoted words stay whole), the lines after the first
 * indented; `shell`: each line that goes on ends in ` \`, so that a paste still runs.
 */
const commandLines = (line: string, width: number, prefix: string, shell: boolean): Array<string> => {
  const words = line.match(/(?:"[^"]*"|'[^']*'|\S)+/g) ?? []
  const mark = shell ? " \\" : ""
  const lines: Array<string> = []
  let current = prefix + (words[0] ?? "")
  words.slice(1).forEach((word, index) => {
    const last = index === words.length - 2
    if (current.length + 1 + word.length + (last ? 0 : mark.length) <= width) {
      current += ` ${word}`
      return
    }
    lines.push(current + mark)
    current = spaces(prefix.length + 2) + word
  })
  // A single word wider than the terminal is cut rather than overflow.
  return [...lines, current].flatMap((text) => cut(text, width))
}

const shortFlags = (option: OptionSpec) => option.flags.filter((flag) => /^-[^-]/.test(flag))
const longFlags = (option: OptionSpec) => option.flags.filter((flag) => flag.startsWith("--"))

const optionLabel = (option: OptionSpec, alignLong: boolean) => {
  const shorts = shortFlags(option)
  const names = [...shorts, ...longFlags(option)].join(", ")
  const label = option.takesValue ? `${names} ${option.valueType}` : names
  return alignLong && shorts.length === 0 ? `    ${label}` : label
}

const mentions = (text: string, word: string) =>
  new RegExp(`(^|[^\\w-])${word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}($|[^\\w-])`).test(text)

/** What an option's description leaves unsaid: choices, default, variable, required, repeatable. */
const optionText = (option: OptionSpec) => {
  const notes = [
    option.choices.length > 0 && !option.choices.every((choice) => mentions(option.description, choice))
      ? `one of: ${option.choices.join(", ")}`
      : undefined,
    option.defaultValue !== undefined && !mentions(option.description, option.defaultValue) ? `default ${option.defaultValue}` : undefined,
    option.env !== undefined && !option.description.includes(option.env) ? `env ${option.env}` : undefined,
    option.required ? "required" : undefined,
    option.repeatable && !/\brepeatable\b/i.test(option.description) ? "repeatable" : undefined
  ].filter((note) => note !== undefined)
  return notes.length === 0 ? option.description : `${option.description} (${notes.join("; ")})`.trim()
}

const optionRows = (options: ReadonlyArray<OptionSpec>) => {
  const alignLong = options.some((option) => shortFlags(option).length > 0)
  // Required options first: they are the ones a reader must give.
  const ordered = [...options.filter((option) => option.required), ...options.filter((option) => !option.required)]
  return ordered.map((option) => [optionLabel(option, alignLong), optionText(option)] as const)
}

const argLabel = (arg: ArgSpec) => `${arg.name}${arg.repeatable ? "..." : ""}`

const argText = (arg: ArgSpec) => {
  const text = arg.description !== "" ? arg.description : arg.choices.length > 0 ? `One of: ${arg.choices.join(", ")}` : ""
  const notes = [arg.optional ? "optional" : undefined, arg.repeatable ? "repeatable" : undefined].filter((note) => note !== undefined)
  return notes.length === 0 ? text : `${text} (${notes.join(", ")})`.trim()
}

/** `--url URL`: a required option as the usage line shows it. */
const usageOf = (option: OptionSpec) => {
  const name = longFlags(option)[0] ?? option.flags[0]!
  return option.takesValue ? `${name} ${name.replace(/^-+/, "").replace(/-/g, "_").toUpperCase()}` : name
}

const usageLines = ({ path, spec }: Level): Array<string> => {
  const runs = spec.options.length > 0 || spec.args.length > 0 || spec.subcommands.length === 0
  const required = spec.options.filter((option) => option.required).map(usageOf)
  const optional = spec.options.some((option) => !option.required) ? ["[options]"] : []
  const args = spec.args.map((arg) => arg.optional ? `[${argLabel(arg)}]` : argLabel(arg))
  return [
    ...(runs ? [[path, ...required, ...optional, ...args].join(" ")] : []),
    ...(spec.subcommands.length > 0 ? [`${path} <command> [options]`] : [])
  ]
}

const firstParagraph = (text: string) => text.split("\n\n")[0]!.replace(/\n/g, " ")

const withoutRoot = (path: string) => path.split(" ").slice(1).join(" ")

/** The help of one command of the tree (the root's adds global options and exit codes). */
export const renderHelp = (level: Level, width: number, style = makeStyle(process.stdout)): string => {
  const { path, spec } = level
  const isRoot = !path.includes(" ")
  const section = (title: string, lines: ReadonlyArray<string>) => lines.length === 0 ? [] : ["", style.bold(title), ...lines]
  const examples = (EXAMPLES[path] ?? []).flatMap(([what, command], index) => [
    ...(index > 0 ? [""] : []),
    ...wrap(what, width - INDENT - 2).map((line) => `${spaces(INDENT)}# ${line}`),
    ...commandLines(command, width, `${spaces(INDENT)}$ `, true)
  ])
  const below = levels(spec, path).slice(1)
  return [
    ...wrap(spec.description, width),
    ...section("USAGE", usageLines(level).flatMap((line) => commandLines(line, width, spaces(INDENT), false))),
    ...section(
      "COMMANDS",
      below.length === 0 ? [] : table(below.map((sub) => [withoutRoot(sub.path), firstParagraph(sub.spec.description)]), width)
    ),
    ...section("ARGUMENTS", spec.args.length === 0 ? [] : table(spec.args.map((arg) => [argLabel(arg), argText(arg)]), width)),
    ...section("OPTIONS", spec.options.length === 0 ? [] : table(optionRows(spec.options), width)),
    ...section("GLOBAL OPTIONS", isRoot ? table(optionRows(GLOBAL_OPTIONS), width) : []),
    ...section("EXAMPLES", examples),
    ...section("EXIT CODES", isRoot ? table(EXIT_CODE_ROWS, width) : []),
    ...section(
      "LEARN MORE",
      below.length === 0 ? [] : indented(`Run '${path} <command> --help' for a command's options and examples.`, width)
    )
  ].join("\n") + "\n"
}

/**
 * The words after `relay` when they ask for help (`--help` or `-h` before any `--`, or `relay
 * help …`), without the help flag; undefined when they do not.
 */
export const helpRequested = (words: ReadonlyArray<string>): ReadonlyArray<string> | undefined => {
  const end = words.indexOf("--")
  const before = end === -1 ? words : words.slice(0, end)
  if (before[0] === "help") return before.slice(1)
  const isHelpFlag = (word: string) => word === "--help" || word === "-h"
  return before.some(isHelpFlag) ? before.filter((word) => !isHelpFlag(word)) : undefined
}

type Resolved =
  | { readonly _tag: "Found"; readonly level: Level }
  | { readonly _tag: "Unknown"; readonly level: Level; readonly word: string }

/**
 * The command the words name: subcommand names lead down the tree, an option's value is skipped,
 * and the first other word is an argument (after which nothing leads further down). A word where
 * only a subcommand can stand is unknown.
 */
export const resolveCommand = (root: CommandSpec, words: ReadonlyArray<string>): Resolved => {
  let level: Level = { path: root.name, spec: root }
  let skipValue = false
  let inArguments = false
  for (const word of words) {
    if (skipValue) {
      skipValue = false
      continue
    }
    if (word.startsWith("-")) {
      const option = [...level.spec.options, ...GLOBAL_OPTIONS, ...UNLISTED_OPTIONS].find((known) => known.flags.includes(word))
      skipValue = option?.takesValue === true
      continue
    }
    if (inArguments) continue
    const sub = level.spec.subcommands.find((child) => child.name === word)
    if (sub !== undefined) {
      level = { path: `${level.path} ${word}`, spec: sub }
      continue
    }
    if (level.spec.subcommands.length > 0 && level.spec.args.length === 0) return { _tag: "Unknown", level, word }
    inArguments = true
  }
  return { _tag: "Found", level }
}

/** A usage error (exit 2) naming the word, and the subcommand meant or those that can stand there. */
const unknownSubcommand = (resolved: Extract<Resolved, { _tag: "Unknown" }>, json: boolean) =>
  reportError(new UsageError(unknownCommand(resolved.word, resolved.level)), json)

/** Help on stdout (exit 0), or a usage error (exit 2) for a command that does not exist. */
const showHelp = (root: CommandSpec, words: ReadonlyArray<string>): Effect.Effect<void, CommandFailed> => {
  const resolved = resolveCommand(root, words)
  return resolved._tag === "Found" ? writeOut(renderHelp(resolved.level, helpWidth())) : unknownSubcommand(resolved, jsonRequested(words))
}

/** A command that only groups others (`relay`, `relay task notification`): naming it alone asks for its help. */
const isGroupOnly = (spec: CommandSpec) => spec.subcommands.length > 0 && spec.options.length === 0 && spec.args.length === 0

/**
 * `run` with help and unknown subcommands answered first, wherever the help flag stands.
 * `argv` is process.argv-shaped. The tree may hold one group only (root.ts), so @effect/cli's own
 * message for a wrong subcommand would name the wrong level; resolveCommand names the right one.
 */
export const withHelp = <E, R>(
  root: AnyCommand,
  run: (argv: ReadonlyArray<string>) => Effect.Effect<void, E, R>
) =>
(argv: ReadonlyArray<string>): Effect.Effect<void, E | CommandFailed, R> => {
  const words = argv.slice(2)
  const asked = helpRequested(words)
  const spec = commandSpec(root)
  if (asked !== undefined) return showHelp(spec, asked)
  const line = readCommandLine(spec, words)
  if (line._tag === "Problem") return reportError(new UsageError(line.problem), jsonRequested(words))
  const onlyNames = words.every((word) => !word.startsWith("-"))
  return onlyNames && isGroupOnly(line.level.spec) ? showHelp(spec, words) : run([...argv.slice(0, 2), ...line.words])
}

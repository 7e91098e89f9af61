/**
 * The `relay` command tree as plain data, read from the descriptors @effect/cli builds: names,
 * descriptions, options (spellings, value type, choices, default, environment variable), arguments
 * and subcommands. Help (help.ts) and completion scripts (completions.ts) are both rendered from
 * it, so neither needs the command files to say anything twice.
 *
 * The descriptors are plain objects tagged with `_tag` (@effect/cli 0.77 internal/commandDescriptor,
 * options, args, primitive); the walk names each tag it reads and skips whatever else a node carries.
 * It imports nothing heavy (no schemas, no MCP): help runs at start-up.
 *
 * What @effect/cli cannot say, the values a free-text option is usually given (`--model echo`,
 * `--status working`) and what each choice means, is declared beside the option with
 * `withSuggestions` and read here with the rest.
 */
import { type Args, type Command, Options } from "@effect/cli"
import { LogLevel, Option } from "effect"

/** A value completions offer, with its one-line meaning (zsh and fish show it beside the value). */
export interface Suggestion {
  readonly value: string
  readonly description: string
}

export interface OptionSpec {
  /** Every spelling: --name and -alias. */
  readonly flags: ReadonlyArray<string>
  readonly takesValue: boolean
  readonly choices: ReadonlyArray<string>
  /** The values to offer: its choices, or those declared with `withSuggestions` (which also describes choices). */
  readonly suggestions: ReadonlyArray<Suggestion>
  /** The relay command that prints the values to offer when completing, if they are the user's own (withValuesFrom). */
  readonly valuesFrom?: string
  /** What the value is: "string", "int", "file", what a number counts ("seconds")…; empty for a boolean. */
  readonly valueType: string
  /** A whole number (Options.integer), whatever its value type is called. */
  readonly integer: boolean
  readonly description: string
  readonly required: boolean
  readonly repeatable: boolean
  /** The value used when the option is absent, as text (booleans' `false` is left out). */
  readonly defaultValue?: string
  /** The environment variable read when the option is absent. */
  readonly env?: string
}

export interface ArgSpec {
  readonly name: string
  readonly description: string
  readonly choices: ReadonlyArray<string>
  readonly suggestions: ReadonlyArray<Suggestion>
  readonly valuesFrom?: string
  readonly optional: boolean
  readonly repeatable: boolean
}

export interface CommandSpec {
  readonly name: string
  readonly description: string
  readonly options: ReadonlyArray<OptionSpec>
  readonly args: ReadonlyArray<ArgSpec>
  readonly subcommands: ReadonlyArray<CommandSpec>
}

type Node = { readonly _tag?: string; readonly [key: string]: unknown }
const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null
const child = (node: Node, key: string): Node => node[key] as Node

/** HelpDoc (blocks and spans) as plain text: paragraphs separated by a blank line. */
export const plainText = (doc: unknown): string => {
  if (!isNode(doc)) return ""
  switch (doc._tag) {
    case "Text":
    case "URI":
      return doc.value as string
    case "Header":
    case "Paragraph":
    case "Highlight":
    case "Strong":
    case "Weak":
      return plainText(doc.value)
    case "Sequence": {
      const parts = [plainText(doc.left), plainText(doc.right)].filter((part) => part !== "")
      // Spans join inline; blocks (a Sequence of paragraphs) stand apart.
      return parts.join(isNode(doc.left) && isBlock(doc.left) ? "\n\n" : "")
    }
    case "Enumeration":
      return (doc.elements as ReadonlyArray<unknown>).map((element) => `- ${plainText(element)}`).join("\n")
    case "DescriptionList":
      return (doc.definitions as ReadonlyArray<readonly [unknown, unknown]>)
        .map(([term, text]) => `${plainText(term)}: ${plainText(text)}`).join("\n")
    default:
      return ""
  }
}

const BLOCKS = new Set(["Empty", "Header", "Paragraph", "DescriptionList", "Enumeration"])
const isBlock = (node: Node): boolean => BLOCKS.has(node._tag ?? "") || (node._tag === "Sequence" && isBlock(child(node, "left")))

const VALUE_TYPES: Record<string, string> = {
  Text: "string",
  Integer: "int",
  Float: "number",
  DateTime: "date",
  Redacted: "secret",
  Secret: "secret",
  Choice: "string",
  Bool: ""
}

const valueTypeOf = (single: Node): string => {
  const pseudo = single.pseudoName as Option.Option<string> | undefined
  if (pseudo !== undefined && Option.isSome(pseudo)) return pseudo.value
  const type = child(single, "primitiveType")
  if (type._tag === "Path") return type.pathType === "directory" ? "dir" : type.pathType === "file" ? "file" : "path"
  return VALUE_TYPES[type._tag ?? ""] ?? "value"
}

const choicesOf = (single: Node): ReadonlyArray<string> => {
  const type = child(single, "primitiveType")
  return type._tag === "Choice" ? (type.alternatives as ReadonlyArray<readonly [string, unknown]>).map(([choice]) => choice) : []
}

/** The values declared for each option or argument descriptor (its Single node), see withSuggestions. */
const declared = new WeakMap<object, ReadonlyArray<Suggestion>>()

/** The nodes that hold other options or arguments (Map, Both, OrElse, WithDefault, Variadic, …). */
const INNER_KEYS = ["options", "args", "left", "right", "argumentOption"] as const

/** The command each option or argument descriptor (its Single node) takes its values from, see withValuesFrom. */
const sourced = new WeakMap<object, string>()

const declareIn = (node: unknown, declare: (single: object) => void): void => {
  if (!isNode(node)) return
  if (node._tag === "Single") declare(node)
  else for (const key of INNER_KEYS) declareIn(node[key], declare)
}

/**
 * Declares the values completions offer for an option or argument, each with its meaning: the
 * usual values of free text (`--model`: echo, mock, ollama:…), or what each choice means. Put it
 * after withDescription and withAlias in the pipe: they make a new descriptor, which would not
 * carry the declaration.
 */
export const withSuggestions =
  (values: ReadonlyArray<readonly [value: string, description: string]>) =>
  <A extends Options.Options<unknown> | Args.Args<unknown>>(self: A): A => {
    const suggestions = values.map(([value, description]) => ({ value, description }))
    declareIn(self, (single) => declared.set(single, suggestions))
    return self
  }

/**
 * Declares that the values completions offer are the user's own, printed at completion time by a
 * relay command (`agent list --names`: one value a line, a tab, its description): the saved agent
 * names after `--url`. Put it after withDescription and withAlias, as withSuggestions.
 */
export const withValuesFrom = (command: string) => <A extends Options.Options<unknown> | Args.Args<unknown>>(self: A): A => {
  declareIn(self, (single) => sourced.set(single, command))
  return self
}

const valuesFromOf = (single: Node): { readonly valuesFrom?: string } => {
  const command = sourced.get(single)
  return command === undefined ? {} : { valuesFrom: command }
}

/** Each choice with its declared meaning (a value declared that is no choice is a mistake); free text offers what was declared. */
const suggestionsOf = (single: Node): ReadonlyArray<Suggestion> => {
  const values = declared.get(single) ?? []
  const choices = choicesOf(single)
  if (choices.length === 0) return values
  const stray = values.filter((value) => !choices.includes(value.value))
  if (stray.length > 0) {
    throw new Error(`${stray.map((value) => value.value).join(", ")}: suggested but not among the choices ${choices.join(", ")}`)
  }
  return choices.map((choice) => values.find((value) => value.value === choice) ?? { value: choice, description: "" })
}

/** What wraps a single option or argument: whether it may be absent, its default, its variable. */
interface Context {
  readonly optional: boolean
  readonly repeatable: boolean
  readonly fallback?: unknown
  readonly env?: string
}
const PLAIN: Context = { optional: false, repeatable: false }

const defaultText = (fallback: unknown): string | undefined => {
  if (fallback === undefined || fallback === false) return undefined
  if (Option.isOption(fallback)) return Option.isSome(fallback) ? defaultText(fallback.value) : undefined
  if (Array.isArray(fallback)) return fallback.length === 0 ? undefined : fallback.join(",")
  return typeof fallback === "object" && fallback !== null ? undefined : String(fallback)
}

/** The variable a `Config.string("NAME")`-like config reads (the first name it nests under). */
const configName = (config: unknown, seen = new Set<unknown>()): string | undefined => {
  if (!isNode(config) || seen.has(config)) return undefined
  seen.add(config)
  if (config._tag === "Nested" && typeof config.name === "string") return config.name
  for (const value of Object.values(config)) {
    const found = configName(value, seen)
    if (found !== undefined) return found
  }
  return undefined
}

const withDefault = (context: Context, fallback: unknown): Context => ({
  ...context,
  optional: true,
  ...(context.fallback === undefined && defaultText(fallback) !== undefined ? { fallback } : {})
})

const singleOption = (single: Node, context: Context): OptionSpec => {
  const aliases = (single.aliases as ReadonlyArray<string>).map((alias) => alias.length === 1 ? `-${alias}` : `--${alias}`)
  const valueType = valueTypeOf(single)
  const defaultValue = defaultText(context.fallback)
  return {
    flags: [`--${single.name as string}`, ...aliases],
    takesValue: child(single, "primitiveType")._tag !== "Bool",
    integer: child(single, "primitiveType")._tag === "Integer",
    choices: choicesOf(single),
    suggestions: suggestionsOf(single),
    ...valuesFromOf(single),
    valueType,
    description: plainText(single.description),
    required: !context.optional && !context.repeatable,
    repeatable: context.repeatable,
    ...(defaultValue === undefined ? {} : { defaultValue }),
    ...(context.env === undefined ? {} : { env: context.env })
  }
}

/** `--auth` or `--no-auth`: one switch spelled two ways is one option. */
const alternatives = (left: Array<OptionSpec>, right: Array<OptionSpec>): Array<OptionSpec> => {
  const [first] = left
  const [second] = right
  const oneSwitch = left.length === 1 && right.length === 1 && !first!.takesValue && !second!.takesValue
  return oneSwitch ? [{ ...first!, flags: [...first!.flags, ...second!.flags] }] : [...left, ...right]
}

/** Every option in an options tree, in declaration order. */
export const optionsOf = (node: unknown, context: Context = PLAIN): Array<OptionSpec> => {
  if (!isNode(node)) return []
  switch (node._tag) {
    case "Single":
      return [singleOption(node, context)]
    case "Map":
      return optionsOf(node.options, context)
    case "Both":
      return [...optionsOf(node.left, context), ...optionsOf(node.right, context)]
    case "OrElse":
      return alternatives(optionsOf(node.left, context), optionsOf(node.right, context))
    case "WithDefault":
      return optionsOf(node.options, withDefault(context, node.fallback))
    case "WithFallback": {
      const env = configName(node.effect)
      return optionsOf(node.options, { ...context, optional: true, ...(env === undefined ? {} : { env }) })
    }
    case "Variadic":
    case "KeyValueMap":
      return optionsOf(node.argumentOption, { ...context, repeatable: true })
    default:
      return []
  }
}

const argsOf = (node: unknown, context: Context = PLAIN): Array<ArgSpec> => {
  if (!isNode(node)) return []
  switch (node._tag) {
    case "Single":
      return [{
        name: node.name as string,
        description: plainText(node.description),
        choices: choicesOf(node),
        suggestions: suggestionsOf(node),
        ...valuesFromOf(node),
        optional: context.optional,
        repeatable: context.repeatable
      }]
    case "Map":
      return argsOf(node.args, context)
    case "Both":
      return [...argsOf(node.left, context), ...argsOf(node.right, context)]
    case "WithDefault":
    case "WithFallbackConfig":
      return argsOf(node.args, { ...context, optional: true })
    case "Variadic": {
      const min = node.min as Option.Option<number>
      return argsOf(node.args, { optional: context.optional || Option.getOrElse(min, () => 0) === 0, repeatable: true })
    }
    default:
      return []
  }
}

/** The tree below a descriptor: Map wraps a command, Subcommands pairs a parent with its children. */
const specOf = (node: Node): CommandSpec => {
  if (node._tag === "Map") return specOf(child(node, "command"))
  if (node._tag === "Subcommands") {
    const parent = specOf(child(node, "parent"))
    return { ...parent, subcommands: (node.children as ReadonlyArray<Node>).map(specOf) }
  }
  return {
    name: node.name as string,
    description: plainText(node.description),
    options: optionsOf(node.options),
    args: argsOf(node.args),
    subcommands: []
  }
}

/**
 * A command of any name, errors and value that needs the services `R`: the groups of the tree
 * (root.ts: relay's base services, checked). @effect/cli's Command is invariant in its four
 * parameters, so no narrower type takes every command of the tree.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type CommandNeeding<R> = Command.Command<any, R, any, any>

/** A command needing any services: what help and completions read. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyCommand = CommandNeeding<any>

export const commandSpec = (command: AnyCommand): CommandSpec => specOf((command as unknown as { descriptor: Node }).descriptor)

/** A command with the words that lead to it, e.g. "relay task notification". */
export interface Level {
  readonly path: string
  readonly spec: CommandSpec
}

/** Every command of the tree, parents before their children. */
export const levels = (spec: CommandSpec, path = spec.name): Array<Level> => [
  { path, spec },
  ...spec.subcommands.flatMap((sub) => levels(sub, `${path} ${sub.name}`))
]

/** The options @effect/cli gives every command that help lists (once, in the root's help). */
export const GLOBAL_OPTIONS = optionsOf(Options.all(
  [
    Options.boolean("help").pipe(Options.withAlias("h"), Options.withDescription("Show help for a command (also: relay help COMMAND)")),
    Options.boolean("version").pipe(Options.withDescription("Print relay's version")),
    Options.choice("log-level", LogLevel.allLevels.map((level) => level._tag.toLowerCase())).pipe(
      Options.withDescription("Least severe log messages shown on stderr (default warning, relay mcp: info; --verbose means debug)"),
      Options.optional,
      withSuggestions([
        ["all", "Every message"],
        ["trace", "The finest detail"],
        ["debug", "Each HTTP request to the agent too (as --verbose)"],
        ["info", "What servers do (the default of relay mcp)"],
        ["warning", "Problems that did not stop the command (the default)"],
        ["error", "Errors only"],
        ["fatal", "Only what ends relay"],
        ["none", "Nothing"]
      ])
    )
  ] as const
))

/** Built-ins help leaves out: @effect/cli's own wizard and completions (`relay completions` replaces them). */
export const UNLISTED_OPTIONS = optionsOf(Options.all(
  [
    Options.boolean("wizard"),
    Options.choice("completions", ["sh", "bash", "fish", "zsh"])
  ] as const
))

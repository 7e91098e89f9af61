/**
 * The command line is read strictly before @effect/cli parses it, from the same model help and
 * completions are drawn from (commandTree.ts): relay runs what was typed, or answers a usage error.
 *
 * @effect/cli alone would take an unknown option after the message words as more message text
 * (`--contineu yes` was sent to the agent), and let a flag swallow the word after it (`-C yes` made
 * the message empty). Here every word that starts with `-` must be an option of the command it
 * follows (text that starts with `-` goes after `--`), a flag never takes the next word as its value,
 * and a whole-number option gets a whole number.
 */
import { AutoCorrect, CliConfig } from "@effect/cli"
import { type CommandSpec, GLOBAL_OPTIONS, type Level, type OptionSpec } from "./commandTree.js"

export interface UsageProblem {
  readonly message: string
  readonly hint: string
}

export type CommandLine =
  | { readonly _tag: "Ok"; readonly level: Level; readonly words: ReadonlyArray<string> }
  | { readonly _tag: "Problem"; readonly problem: UsageProblem }

/** The words @effect/cli reads as a flag's value when they follow it (its Primitive's true and false values). */
const BOOLEAN_WORDS = new Set(["true", "1", "y", "yes", "on", "false", "0", "n", "no", "off"])

/** The closest of the candidates to a mistyped word, when one is close enough to be what was meant. */
export const closest = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  const bare = (text: string) => text.replace(/^-+/, "")
  let best: { readonly candidate: string; readonly distance: number } | undefined
  for (const candidate of candidates) {
    const distance = AutoCorrect.levensteinDistance(bare(word), bare(candidate), CliConfig.defaultConfig)
    if (best === undefined || distance < best.distance) best = { candidate, distance }
  }
  // One letter is any other letter's neighbour: suggest only for words long enough to tell apart.
  const length = bare(word).length
  const allowed = length < 3 ? 0 : length < 6 ? 2 : 3
  return best !== undefined && best.distance <= allowed ? best.candidate : undefined
}

const helpHint = (level: Level) => `Run '${level.path} --help' for its options and arguments.`

const unknownOption = (word: string, level: Level, known: ReadonlyArray<OptionSpec>): UsageProblem => {
  const flags = known.flatMap((option) => option.flags)
  const meant = closest(word, [...flags, ...level.spec.subcommands.map((sub) => sub.name)])
  const takesText = level.spec.args.length > 0
  return {
    message: `unknown option ${word}${level.spec.subcommands.length > 0 ? ` for ${level.path}` : ""}`,
    hint: meant !== undefined
      ? `Did you mean ${meant}?`
      : `${helpHint(level)}${takesText ? ` Text that starts with '-' goes after '--': ${level.path} [options] -- ${word}` : ""}`
  }
}

export const unknownCommand = (word: string, level: Level): UsageProblem => {
  const names = level.spec.subcommands.map((sub) => sub.name)
  const meant = closest(word, names)
  return {
    message: `unknown command '${word}' for ${level.path}`,
    hint: meant !== undefined ? `Did you mean ${meant}?` : `Use one of ${names.join(", ")}; ${helpHint(level)}`
  }
}

/** What a whole-number option needs, from what it counts (its value type): "a whole number of seconds". */
export const numberNeeded = (unit: string) =>
  unit === "port" ? "a port number" : unit === "int" ? "a whole number" : `a whole number of ${unit}`

const badValue = (option: OptionSpec, flag: string, value: string | undefined): UsageProblem | undefined => {
  if (value === undefined) {
    return {
      message: `${flag} needs a value`,
      hint: `Give it as ${flag} ${option.valueType.toUpperCase()} or ${flag}=${option.valueType.toUpperCase()}.`
    }
  }
  if (option.integer && !/^[+-]?\d+$/.test(value.trim())) {
    return { message: `${flag} needs ${numberNeeded(option.valueType)}, not '${value}'`, hint: option.description }
  }
  if (option.choices.length > 0 && !option.choices.includes(value)) {
    const meant = closest(value, option.choices)
    return {
      message: `${flag} cannot be '${value}'`,
      hint: meant !== undefined ? `Did you mean ${meant}? (${option.choices.join(", ")})` : `Use one of ${option.choices.join(", ")}.`
    }
  }
  return undefined
}

/**
 * Reads the words after `relay`: subcommand names lead down the tree; each option is looked up at
 * the command it follows; an option's value is checked; after `--` everything is text. Returns the
 * words to hand @effect/cli: a flag followed by a word it would take as its value is written
 * `--flag=true`, so that word stays text.
 */
export const readCommandLine = (root: CommandSpec, words: ReadonlyArray<string>): CommandLine => {
  let level: Level = { path: root.name, spec: root }
  let inArguments = false
  const out: Array<string> = []
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!
    if (word === "--") {
      out.push(...words.slice(index))
      break
    }
    if (word.startsWith("-") && word !== "-") {
      const equals = word.indexOf("=")
      const flag = equals > 0 && word.startsWith("--") ? word.slice(0, equals) : word
      const known = [...level.spec.options, ...GLOBAL_OPTIONS]
      const option = known.find((candidate) => candidate.flags.includes(flag))
      if (option === undefined) return { _tag: "Problem", problem: unknownOption(flag, level, known) }
      if (!option.takesValue) {
        const next = words[index + 1]
        const swallows = equals < 0 && next !== undefined && BOOLEAN_WORDS.has(next.toLowerCase())
        out.push(swallows ? `${flag.startsWith("--") ? flag : option.flags[0]}=true` : word)
        continue
      }
      const value = equals > 0 ? word.slice(equals + 1) : words[index + 1]
      const problem = badValue(option, flag, value)
      if (problem !== undefined) return { _tag: "Problem", problem }
      out.push(word)
      if (equals < 0) out.push(words[++index]!)
      continue
    }
    out.push(word)
    if (inArguments) continue
    const sub = level.spec.subcommands.find((child) => child.name === word)
    if (sub !== undefined) {
      level = { path: `${level.path} ${word}`, spec: sub }
      continue
    }
    if (level.spec.args.length === 0) {
      return {
        _tag: "Problem",
        problem: level.spec.subcommands.length > 0
          ? unknownCommand(word, level)
          : { message: `unexpected argument '${word}': ${level.path} takes none`, hint: helpHint(level) }
      }
    }
    inArguments = true
  }
  return { _tag: "Ok", level, words: out }
}

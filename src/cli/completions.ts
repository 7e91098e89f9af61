/**
 * `relay completions bash|zsh|fish`: completion scripts generated from the command tree itself, so
 * every subcommand, option, choice and suggested value at every level is known, each with its
 * one-line description (zsh and fish show it). @effect/cli's own `--completions` loses its way past
 * the first level (it matches `relay__mcp,install` against `relay,mcp,install`) and offers a choice
 * list as one word; these scripts share one table (from commandTree.ts) and one walk instead.
 *
 * The build writes each script into dist/completions/ (scripts/bundle.mjs) and src/main.ts prints
 * that file: `relay completions bash` is sourced by every new shell, and loading the whole tree
 * to write it took several times `relay --version` (bench/README.md).
 */
import { Args, Command } from "@effect/cli"
import { Effect } from "effect"
import {
  type AnyCommand,
  type CommandSpec,
  commandSpec,
  GLOBAL_OPTIONS,
  type Level,
  levels,
  type OptionSpec,
  type Suggestion,
  withSuggestions
} from "./commandTree.js"
import { writeOut } from "./output.js"

/** A word to offer and its description ("" for none). */
type Candidate = readonly [word: string, description: string]
/** The candidates written into the script, or the relay command that prints them when completing (the user's own values). */
type Offer = ReadonlyArray<Candidate> | { readonly command: string }
type Rows = ReadonlyArray<readonly [key: string, offer: Offer]>

/** A table of the script: a function answering, for a key, its candidates; `everywhere` follows every key's. */
interface Table {
  readonly name: string
  readonly rows: Rows
  readonly everywhere: ReadonlyArray<Candidate>
}

/** zsh lists a candidate and its description on one line: with a long option before it, this still fits 100 columns. */
const DESCRIPTION_WIDTH = 60

/**
 * A description on one line, to stand beside its candidate: its first sentence; when that is too
 * long, without its asides in parentheses; when still too long, cut at a word.
 */
export const oneLine = (text: string): string => {
  const line = text.split("\n\n")[0]!.replace(/\s+/g, " ").trim()
  const sentence = line.replace(/(?<=[^.\s]{2}\.) .*$/, "").replace(/\.$/, "")
  if (sentence.length <= DESCRIPTION_WIDTH) return sentence
  const plain = sentence.replace(/ \([^()]*\)/g, "")
  if (plain.length <= DESCRIPTION_WIDTH) return plain
  return `${plain.slice(0, plain.lastIndexOf(" ", DESCRIPTION_WIDTH - 1)).replace(/[,;:]$/, "")}…`
}

const fromSuggestions = (suggestions: ReadonlyArray<Suggestion>): Array<Candidate> =>
  suggestions.map(({ description, value }) => [value, oneLine(description)])

/** Every spelling of an option, each with the option's description. The @effect/cli built-ins (--wizard, --completions) are not options of relay. */
const optionCandidates = (options: ReadonlyArray<OptionSpec>): Array<Candidate> =>
  options.flatMap((option) => option.flags.map((flag) => [flag, oneLine(option.description)] as const))

const valueOptionCandidates = (options: ReadonlyArray<OptionSpec>): Array<Candidate> =>
  options.filter((option) => option.takesValue).flatMap((option) => option.flags.map((flag) => [flag, ""] as const))

/**
 * The values offered after an option ("relay mcp -t") and at each argument's position
 * ("relay completions #0"; a repeatable last argument is offered at its own position only).
 */
const valueRows = ({ path, spec }: Level): Rows => [
  ...[...spec.options, ...GLOBAL_OPTIONS].flatMap((option) => option.flags.map((flag) => [`${path} ${flag}`, offerOf(option)] as const)),
  ...spec.args.map((arg, position) => [`${path} #${position}`, offerOf(arg)] as const)
]

const offerOf = (spec: Pick<OptionSpec, "suggestions" | "valuesFrom">): Offer =>
  spec.valuesFrom === undefined ? fromSuggestions(spec.suggestions) : { command: spec.valuesFrom }

const tables = (all: ReadonlyArray<Level>): ReadonlyArray<Table> => [
  {
    name: "subcommands",
    rows: all.map(({ path, spec }) => [path, spec.subcommands.map((sub) => [sub.name, oneLine(sub.description)] as const)] as const),
    everywhere: []
  },
  {
    name: "options",
    rows: all.map(({ path, spec }) => [path, optionCandidates(spec.options)] as const),
    everywhere: optionCandidates(GLOBAL_OPTIONS)
  },
  {
    name: "value_options",
    rows: all.map(({ path, spec }) => [path, valueOptionCandidates(spec.options)] as const),
    everywhere: valueOptionCandidates(GLOBAL_OPTIONS)
  },
  { name: "values", rows: all.flatMap(valueRows), everywhere: [] }
]

const withCandidates = (rows: Rows) => rows.filter(([, offer]) => "command" in offer || offer.length > 0)

/** A word in single quotes: bash and zsh end the quote around a quote; fish escapes it and backslashes. */
const quoteFor = {
  bash: (text: string) => `'${text.replace(/'/g, `'\\''`)}'`,
  fish: (text: string) => `'${text.replace(/[\\']/g, "\\$&")}'`
}
type Quote = (text: string) => string

/** Prints "word<TAB>description" lines (printf repeats its format for each pair); the same in all three shells. */
const printCandidates = (candidates: ReadonlyArray<Candidate>, quote: Quote) =>
  `printf '%s\\t%s\\n' ${candidates.map(([word, description]) => `${quote(word)} ${quote(description)}`).join(" ")}`

/** The code that prints an offer: its candidates, or what `program <command>` prints (silent when it fails). */
const printOffer = (offer: Offer, quote: Quote, program: string) =>
  "command" in offer ? `${program} ${offer.command} 2>/dev/null` : printCandidates(offer, quote)

const trailer = (table: Table, quote: Quote, indent: string) =>
  table.everywhere.length === 0 ? "" : `\n${indent}${printCandidates(table.everywhere, quote)}`

/** The tables as functions valid in both bash and zsh: for a key, "word<TAB>description" lines. */
const bashLikeTables = (prefix: string, spec: CommandSpec) =>
  tables(levels(spec)).map((table) =>
    `${prefix}_${table.name}() {\n  case "$1" in\n${
      withCandidates(table.rows).map(([key, offer]) => `    ${quoteFor.bash(key)}) ${printOffer(offer, quoteFor.bash, spec.name)} ;;`).join(
        "\n"
      )
    }\n  esac${trailer(table, quoteFor.bash, "  ")}\n}`
  ).join("\n\n")

/**
 * Walks the words typed so far (bash and zsh alike): subcommand names extend the path, an option
 * that takes a value skips that value, anything else is an argument. Sets cmdpath, expecting (the
 * option whose value is being typed, if any) and position (how many arguments came before).
 */
const bashLikeWalk = (prefix: string, root: string) =>
  `${prefix}_has() {
  [[ $'\\n'"$(${prefix}_$1 "$2")"$'\\n' == *$'\\n'"$3"$'\\t'* ]]
}

${prefix}_walk() {
  cmdpath=${quoteFor.bash(root)}
  expecting=""
  position=0
  local w
  for w in "$@"; do
    if [[ -n $expecting ]]; then expecting=""; continue; fi
    if [[ $w == -?* ]]; then
      if [[ $w != *=* ]] && ${prefix}_has value_options "$cmdpath" "$w"; then expecting="$w"; fi
    elif ${prefix}_has subcommands "$cmdpath" "$w"; then
      cmdpath="$cmdpath $w"
      position=0
    else
      position=$((position + 1))
    fi
  done
}`

/** What bash and zsh say differently around the shared tables and walk: how words are read and offered. */
interface BashLikeShell {
  readonly header: (name: string) => string
  /** The word being typed, and the words typed before it after the command's own name. */
  readonly current: string
  readonly typedBefore: string
  /** Offers the candidates in $1 ("word<TAB>description" lines), or file names when there are none. */
  readonly offer: string
  readonly register: (prefix: string, name: string) => string
}

const BASH: BashLikeShell = {
  header: (name) => `# bash completion for ${name}; load with: source <(${name} completions bash)`,
  current: "\${COMP_WORDS[COMP_CWORD]}",
  typedBefore: "\${COMP_WORDS[@]:1:COMP_CWORD-1}",
  // bash shows no descriptions. No candidates leaves COMPREPLY empty: `complete -o default` offers file names.
  // A word that ends in ':' (`ollama:`) is the start of a value, so no space follows it.
  offer: `local words="" line
  while IFS= read -r line; do [[ -n $line ]] && words+="\${line%%$'\\t'*}"$'\\n'; done <<< "$1"
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  if [[ \${#COMPREPLY[@]} -eq 1 && \${COMPREPLY[0]} == *: ]]; then compopt -o nospace 2>/dev/null; fi`,
  register: (prefix, name) => `complete -o default -F ${prefix}_complete ${name}`
}

const ZSH: BashLikeShell = {
  header: (name) => `#compdef ${name}\n# zsh completion for ${name}; load with: source <(${name} completions zsh)  (after compinit)`,
  current: "\${words[CURRENT]}",
  typedBefore: "\${(@)words[2,CURRENT-1]}",
  // One word per line with its description beside it, aligned as _describe does; no space after a word ending in ':'.
  offer: `if [[ -z $1 ]]; then _files; return; fi
  local -a lines=("\${(@f)1}") shown suffix
  local line word width=0
  for line in $lines; do word=\${line%%$'\\t'*}; (( \${#word} > width )) && width=\${#word}; done
  for line in $lines; do
    word=\${line%%$'\\t'*}
    if [[ -n \${line#*$'\\t'} ]]; then shown=("\${(r:width:)word}  -- \${line#*$'\\t'}"); else shown=("$word"); fi
    if [[ $word == *: ]]; then suffix=(-S ''); else suffix=(); fi
    compadd "\${suffix[@]}" -l -d shown -- "$word"
  done`,
  register: (prefix, name) => `compdef ${prefix}_complete ${name}`
}

/** bash and zsh run the same script but for how they read and offer words. */
const bashLikeScript = (shell: BashLikeShell, spec: CommandSpec, prefix: string) =>
  `${shell.header(spec.name)}
${bashLikeTables(prefix, spec)}

${bashLikeWalk(prefix, spec.name)}

${prefix}_offer() {
  ${shell.offer}
}

${prefix}_complete() {
  local cur="${shell.current}" cmdpath expecting position
  ${prefix}_walk "${shell.typedBefore}"
  if [[ -n $expecting ]]; then
    ${prefix}_offer "$(${prefix}_values "$cmdpath $expecting")"
  elif [[ $cur == -* ]]; then
    ${prefix}_offer "$(${prefix}_options "$cmdpath")"
  else
    local candidates="$(${prefix}_subcommands "$cmdpath")"
    if [[ -z $candidates ]]; then candidates="$(${prefix}_values "$cmdpath #$position")"; fi
    ${prefix}_offer "$candidates"
  fi
}
${shell.register(prefix, spec.name)}
`

/** fish reads the same tables, written as fish `switch`es, and shows each description itself. */
const fishScript = (spec: CommandSpec, prefix: string) => {
  const table = (table: Table) =>
    `function ${prefix}_${table.name}\n  switch $argv[1]\n${
      withCandidates(table.rows).map(([key, offer]) =>
        `    case ${quoteFor.fish(key)}\n      ${printOffer(offer, quoteFor.fish, spec.name)}`
      ).join("\n")
    }\n  end${trailer(table, quoteFor.fish, "  ")}\nend`
  const words = (name: string, key: string) => `(${prefix}_${name} ${key} | string replace -r '\\t.*' '')`
  return `# fish completion for ${spec.name}; load with: ${spec.name} completions fish | source
${tables(levels(spec)).map(table).join("\n")}

function ${prefix}_complete
  set -l tokens (commandline -opc)
  set -l cur (commandline -ct)
  set -l cmdpath ${quoteFor.fish(spec.name)}
  set -l expecting ''
  set -l position 0
  for w in $tokens[2..-1]
    if test -n "$expecting"
      set expecting ''
      continue
    end
    if string match -q -- '-?*' $w
      if not string match -q -- '*=*' $w; and contains -- $w ${words("value_options", "$cmdpath")}
        set expecting $w
      end
    else if contains -- $w ${words("subcommands", "$cmdpath")}
      set cmdpath "$cmdpath $w"
      set position 0
    else
      set position (math $position + 1)
    end
  end
  set -l candidates
  if test -n "$expecting"
    set candidates (${prefix}_values "$cmdpath $expecting")
  else if string match -q -- '-*' $cur
    set candidates (${prefix}_options $cmdpath)
  else
    set candidates (${prefix}_subcommands $cmdpath)
    if test (count $candidates) -eq 0
      set candidates (${prefix}_values "$cmdpath #$position")
    end
  end
  if test (count $candidates) -gt 0
    string replace -r '\\t$' '' -- $candidates
  else
    __fish_complete_path $cur
  end
end
complete -c ${spec.name} -f -a '(${prefix}_complete)'
`
}

export const SHELLS = ["bash", "zsh", "fish"] as const
export type Shell = typeof SHELLS[number]

export const completionScript = (spec: CommandSpec, shell: Shell): string => {
  const prefix = `__${spec.name.replace(/[^A-Za-z0-9]/g, "_")}`
  return shell === "fish" ? fishScript(spec, prefix) : bashLikeScript(shell === "bash" ? BASH : ZSH, spec, prefix)
}

const SHELL_SUGGESTIONS: ReadonlyArray<readonly [Shell, string]> = [
  ["bash", "For ~/.bashrc: source <(relay completions bash)"],
  ["zsh", "After compinit in ~/.zshrc: source <(relay completions zsh)"],
  ["fish", "For config.fish: relay completions fish | source"]
]

/** The command, given the tree lazily: it is part of the tree it describes. */
export const completionsCommand = (loadRoot: () => Promise<AnyCommand>) =>
  Command.make(
    "completions",
    { shell: Args.choice(SHELLS.map((shell) => [shell, shell] as const), { name: "SHELL" }).pipe(withSuggestions(SHELL_SUGGESTIONS)) },
    ({ shell }) =>
      Effect.promise(loadRoot).pipe(Effect.flatMap((root) => writeOut(completionScript(commandSpec(root), shell))), Effect.asVoid)
  ).pipe(
    Command.withDescription(
      "Print a completion script: source <(relay completions bash), source <(relay completions zsh), relay completions fish | source"
    )
  )

/**
 * `relay completions bash|zsh|fish`: completion scripts generated from the command tree itself, so
 * every subcommand, option and choice at every level is known. @effect/cli's own `--completions`
 * loses its way past the first level (it matches `relay__mcp,install` against `relay,mcp,install`)
 * and offers a choice list as one word; these scripts share one table (from commandTree.ts) and one walk instead.
 */
import { Args, Command } from "@effect/cli"
import { Effect } from "effect"
import { type CommandSpec, commandSpec, GLOBAL_OPTIONS, type Level, levels, UNLISTED_OPTIONS } from "./commandTree.js"
import { writeOut } from "./output.js"

/** The options @effect/cli adds to every command. */
const builtInOptions = [...GLOBAL_OPTIONS, ...UNLISTED_OPTIONS]

const optionsAt = (spec: CommandSpec) => [...spec.options, ...builtInOptions]
const words = (list: ReadonlyArray<string>) => list.join(" ")

type Rows = ReadonlyArray<readonly [key: string, values: ReadonlyArray<string>]>

/** The three tables kept per level, by the name of the function that answers them. */
const LEVEL_TABLES: ReadonlyArray<readonly [name: string, pick: (spec: CommandSpec) => ReadonlyArray<string>]> = [
  ["subcommands", (spec) => spec.subcommands.map((child) => child.name)],
  ["options", (spec) => optionsAt(spec).flatMap((option) => option.flags)],
  ["value_options", (spec) => optionsAt(spec).filter((option) => option.takesValue).flatMap((option) => option.flags)]
]

const perLevel = (all: ReadonlyArray<Level>, pick: (spec: CommandSpec) => ReadonlyArray<string>): Rows =>
  all.map(({ path, spec }) => [path, pick(spec)] as const)

/** The choices of every option that has some, keyed by "path flag". */
const choiceRows = (all: ReadonlyArray<Level>): Rows =>
  all.flatMap(({ path, spec }) =>
    optionsAt(spec).filter((option) => option.choices.length > 0).flatMap((option) =>
      option.flags.map((flag) => [`${path} ${flag}`, option.choices] as const)
    )
  )

/** Every table with its rows: the per-level ones, then the choices. */
const tables = (all: ReadonlyArray<Level>): ReadonlyArray<readonly [name: string, rows: Rows]> => [
  ...LEVEL_TABLES.map(([name, pick]) => [name, perLevel(all, pick)] as const),
  ["choices", choiceRows(all)]
]

const withValues = (rows: Rows) => rows.filter(([, values]) => values.length > 0)

/**
 * The table every shell reads, as functions valid in both bash and zsh: for a path, its
 * subcommands, its options, the options that take a value, and the choices of one option.
 */
const sharedTable = (prefix: string, all: ReadonlyArray<Level>) =>
  tables(all).map(([name, rows]) =>
    `${prefix}_${name}() {\n  case "$1" in\n${
      withValues(rows).map(([key, values]) => `    "${key}") echo "${words(values)}" ;;`).join("\n")
    }\n  esac\n}`
  ).join("\n\n")

/**
 * Walks the words typed so far (bash and zsh alike): subcommand names extend the path, an option
 * that takes a value skips that value, anything else is an argument. Sets cmdpath and expecting
 * (the option whose value is being typed, if any).
 */
const sharedWalk = (prefix: string, root: string) => `${prefix}_walk() {
  cmdpath="${root}"
  expecting=""
  local w
  for w in "$@"; do
    if [[ -n $expecting ]]; then expecting=""; continue; fi
    if [[ $w == -* ]]; then
      if [[ $w != *=* && " $(${prefix}_value_options "$cmdpath") " == *" $w "* ]]; then expecting="$w"; fi
      continue
    fi
    if [[ " $(${prefix}_subcommands "$cmdpath") " == *" $w "* ]]; then cmdpath="$cmdpath $w"; fi
  done
}`

/** What bash and zsh say differently around the shared table and walk: how words are read and offered. */
interface BashLikeShell {
  readonly header: (name: string) => string
  /** The word being typed, and the words typed before it after the command's own name. */
  readonly current: string
  readonly typedBefore: string
  /** Offers $choices (else files), then the options or the subcommands of $cmdpath. */
  readonly offerChoices: string
  readonly offerOptions: (prefix: string) => string
  readonly offerSubcommands: (prefix: string) => string
  readonly register: (prefix: string, name: string) => string
}

const BASH: BashLikeShell = {
  header: (name) => `# bash completion for ${name}; load with: source <(${name} completions bash)`,
  current: "\${COMP_WORDS[COMP_CWORD]}",
  typedBefore: "\${COMP_WORDS[@]:1:COMP_CWORD-1}",
  offerChoices: `if [[ -n $choices ]]; then COMPREPLY=($(compgen -W "$choices" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi`,
  offerOptions: (prefix) => `COMPREPLY=($(compgen -W "$(${prefix}_options "$cmdpath")" -- "$cur"))`,
  // No subcommands leaves COMPREPLY empty, and `complete -o default` falls back to file names.
  offerSubcommands: (prefix) => `COMPREPLY=($(compgen -W "$(${prefix}_subcommands "$cmdpath")" -- "$cur"))`,
  register: (prefix, name) => `complete -o default -F ${prefix}_complete ${name}`
}

const ZSH: BashLikeShell = {
  header: (name) =>
    `#compdef ${name}\n# zsh completion for ${name}; load with: source <(${name} completions zsh)  (after compinit)`,
  current: "\${words[CURRENT]}",
  typedBefore: "\${(@)words[2,CURRENT-1]}",
  offerChoices: "if [[ -n $choices ]]; then compadd -- \${=choices}; else _files; fi",
  offerOptions: (prefix) => `compadd -- \${=$(${prefix}_options "$cmdpath")}`,
  offerSubcommands: (prefix) =>
    `local subcommands="$(${prefix}_subcommands "$cmdpath")"\n    if [[ -n $subcommands ]]; then compadd -- \${=subcommands}; else _files; fi`,
  register: (prefix, name) => `compdef ${prefix}_complete ${name}`
}

/** bash and zsh run the same script but for how they read and offer words. */
const bashLikeScript = (shell: BashLikeShell, spec: CommandSpec, prefix: string) => `${shell.header(spec.name)}
${sharedTable(prefix, levels(spec))}

${sharedWalk(prefix, spec.name)}

${prefix}_complete() {
  local cur="${shell.current}" cmdpath expecting
  ${prefix}_walk "${shell.typedBefore}"
  if [[ -n $expecting ]]; then
    local choices
    choices="$(${prefix}_choices "$cmdpath $expecting")"
    ${shell.offerChoices}
  elif [[ $cur == -* ]]; then
    ${shell.offerOptions(prefix)}
  else
    ${shell.offerSubcommands(prefix)}
  fi
}
${shell.register(prefix, spec.name)}
`

/** fish reads the same table, written as fish `switch`es. */
const fishScript = (spec: CommandSpec, prefix: string) => {
  const table = (name: string, rows: Rows) =>
    `function ${prefix}_${name}\n  switch $argv[1]\n${
      withValues(rows).map(([key, values]) => `    case '${key}'\n      printf '%s\\n' ${values.join(" ")}`).join("\n")
    }\n  end\nend`
  return `# fish completion for ${spec.name}; load with: ${spec.name} completions fish | source
${tables(levels(spec)).map(([name, rows]) => table(name, rows)).join("\n")}

function ${prefix}_complete
  set -l tokens (commandline -opc)
  set -l cur (commandline -ct)
  set -l cmdpath ${spec.name}
  set -l expecting ''
  for w in $tokens[2..-1]
    if test -n "$expecting"
      set expecting ''
      continue
    end
    if string match -q -- '-*' $w
      if not string match -q -- '*=*' $w; and contains -- $w (${prefix}_value_options $cmdpath)
        set expecting $w
      end
      continue
    end
    if contains -- $w (${prefix}_subcommands $cmdpath)
      set cmdpath "$cmdpath $w"
    end
  end
  if test -n "$expecting"
    set -l choices (${prefix}_choices "$cmdpath $expecting")
    if test (count $choices) -gt 0
      printf '%s\\n' $choices
    else
      __fish_complete_path $cur
    end
  else if string match -q -- '-*' $cur
    ${prefix}_options $cmdpath
  else if test -n "$(${prefix}_subcommands $cmdpath)"
    ${prefix}_subcommands $cmdpath
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

/** The command, given the tree lazily: it is part of the tree it describes. */
export const completionsCommand = (loadRoot: () => Promise<Command.Command<any, any, any, any>>) =>
  Command.make(
    "completions",
    { shell: Args.choice(SHELLS.map((shell) => [shell, shell] as const), { name: "SHELL" }) },
    ({ shell }) =>
      Effect.promise(loadRoot).pipe(Effect.flatMap((root) => writeOut(completionScript(commandSpec(root), shell))), Effect.asVoid)
  ).pipe(
    Command.withDescription(
      "Print a completion script: source <(relay completions bash), source <(relay completions zsh), relay completions fish | source"
    )
  )

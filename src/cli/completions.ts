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

/**
 * The table every shell reads, as functions valid in both bash and zsh: for a path, its
 * subcommands, its options, the options that take a value, and the choices of one option.
 */
const sharedTable = (prefix: string, all: ReadonlyArray<Level>) => {
  const cases = (rows: ReadonlyArray<readonly [string, string]>) =>
    rows.filter(([, value]) => value !== "").map(([key, value]) => `    "${key}") echo "${value}" ;;`).join("\n")
  const perLevel = (pick: (spec: CommandSpec) => string) => cases(all.map(({ path, spec }) => [path, pick(spec)] as const))
  const choices = all.flatMap(({ path, spec }) =>
    optionsAt(spec).filter((option) => option.choices.length > 0).flatMap((option) =>
      option.flags.map((flag) => [`${path} ${flag}`, words(option.choices)] as const)
    )
  )
  return [
    `${prefix}_subcommands() {\n  case "$1" in\n${perLevel((spec) => words(spec.subcommands.map((child) => child.name)))}\n  esac\n}`,
    `${prefix}_options() {\n  case "$1" in\n${perLevel((spec) => words(optionsAt(spec).flatMap((option) => option.flags)))}\n  esac\n}`,
    `${prefix}_value_options() {\n  case "$1" in\n${
      perLevel((spec) => words(optionsAt(spec).filter((option) => option.takesValue).flatMap((option) => option.flags)))
    }\n  esac\n}`,
    `${prefix}_choices() {\n  case "$1" in\n${cases(choices)}\n  esac\n}`
  ].join("\n\n")
}

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

const bashScript = (spec: CommandSpec, prefix: string) => `# bash completion for ${spec.name}; load with: source <(${spec.name} completions bash)
${sharedTable(prefix, levels(spec))}

${sharedWalk(prefix, spec.name)}

${prefix}_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cmdpath expecting
  ${prefix}_walk "\${COMP_WORDS[@]:1:COMP_CWORD-1}"
  if [[ -n $expecting ]]; then
    local choices
    choices="$(${prefix}_choices "$cmdpath $expecting")"
    if [[ -n $choices ]]; then COMPREPLY=($(compgen -W "$choices" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(${prefix}_options "$cmdpath")" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$(${prefix}_subcommands "$cmdpath")" -- "$cur"))
  fi
}
complete -o default -F ${prefix}_complete ${spec.name}
`

const zshScript = (spec: CommandSpec, prefix: string) => `#compdef ${spec.name}
# zsh completion for ${spec.name}; load with: source <(${spec.name} completions zsh)  (after compinit)
${sharedTable(prefix, levels(spec))}

${sharedWalk(prefix, spec.name)}

${prefix}_complete() {
  local cur="\${words[CURRENT]}" cmdpath expecting
  ${prefix}_walk "\${(@)words[2,CURRENT-1]}"
  if [[ -n $expecting ]]; then
    local choices
    choices="$(${prefix}_choices "$cmdpath $expecting")"
    if [[ -n $choices ]]; then compadd -- \${=choices}; else _files; fi
  elif [[ $cur == -* ]]; then
    compadd -- \${=$(${prefix}_options "$cmdpath")}
  else
    local subcommands="$(${prefix}_subcommands "$cmdpath")"
    if [[ -n $subcommands ]]; then compadd -- \${=subcommands}; else _files; fi
  fi
}
compdef ${prefix}_complete ${spec.name}
`

/** fish reads the same table, written as fish `switch`es. */
const fishScript = (spec: CommandSpec, prefix: string) => {
  const all = levels(spec)
  const fishCases = (rows: ReadonlyArray<readonly [string, ReadonlyArray<string>]>) =>
    rows.filter(([, values]) => values.length > 0).map(([key, values]) => `    case '${key}'\n      printf '%s\\n' ${values.join(" ")}`)
      .join("\n")
  const table = (name: string, pick: (spec: CommandSpec) => ReadonlyArray<string>) =>
    `function ${prefix}_${name}\n  switch $argv[1]\n${fishCases(all.map(({ path, spec }) => [path, pick(spec)] as const))}\n  end\nend`
  const choices = all.flatMap(({ path, spec }) =>
    optionsAt(spec).filter((option) => option.choices.length > 0).flatMap((option) =>
      option.flags.map((flag) => [`${path} ${flag}`, option.choices] as const)
    )
  )
  return `# fish completion for ${spec.name}; load with: ${spec.name} completions fish | source
${table("subcommands", (spec) => spec.subcommands.map((child) => child.name))}
${table("options", (spec) => optionsAt(spec).flatMap((option) => option.flags))}
${table("value_options", (spec) => optionsAt(spec).filter((option) => option.takesValue).flatMap((option) => option.flags))}
function ${prefix}_choices\n  switch $argv[1]\n${fishCases(choices)}\n  end\nend

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
  return shell === "bash" ? bashScript(spec, prefix) : shell === "zsh" ? zshScript(spec, prefix) : fishScript(spec, prefix)
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

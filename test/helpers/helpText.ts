/**
 * Reads the help relay prints (src/cli/help.ts): sections under an upper-case title, option rows
 * whose label starts at the indent (2, or 6 when aligned under a short alias), examples after `$ `.
 */

/** Each section's lines, by title ("" for the description before the first title). */
export const helpSections = (text: string): Map<string, Array<string>> => {
  const sections = new Map<string, Array<string>>([["", []]])
  let current = ""
  for (const line of text.split("\n")) {
    if (/^[A-Z][A-Z ]+$/.test(line)) {
      current = line
      sections.set(current, [])
    } else if (line !== "") {
      sections.get(current)!.push(line)
    }
  }
  return sections
}

const section = (text: string, title: string) => helpSections(text).get(title) ?? []

/** The label of a table row (the text before the gap), when the line starts one. */
const rowLabel = (line: string, indents: ReadonlyArray<number>) => {
  const indent = line.length - line.trimStart().length
  return indents.includes(indent) ? line.trim().split(/\s{2,}/)[0]! : undefined
}

/** Every flag that an option row of OPTIONS (and GLOBAL OPTIONS) names, once per row. */
export const optionFlags = (text: string, titles: ReadonlyArray<string> = ["OPTIONS", "GLOBAL OPTIONS"]): Array<string> =>
  titles.flatMap((title) => section(text, title))
    .map((line) => rowLabel(line, [2, 6]))
    .filter((label): label is string => label !== undefined && label.startsWith("-"))
    .flatMap((label) => label.match(/(?<![\w-])--?[a-zA-Z][\w-]*/g) ?? [])

/** The command paths the COMMANDS section lists, e.g. "task notification set". */
export const listedCommands = (text: string): Array<string> =>
  section(text, "COMMANDS").map((line) => rowLabel(line, [2])).filter((label): label is string => label !== undefined)

/** The USAGE lines. */
export const usageLines = (text: string): Array<string> =>
  section(text, "USAGE").filter((line) => /^ {2}\S/.test(line)).map((line) => line.trim())

/** The example command lines, continuations (` \` at a line's end) joined. */
export const exampleCommands = (text: string): Array<string> => {
  const commands: Array<string> = []
  let pending: string | undefined
  for (const line of section(text, "EXAMPLES")) {
    const trimmed = line.trim()
    if (pending === undefined && !trimmed.startsWith("$ ")) continue
    const piece = pending === undefined ? trimmed.slice(2) : trimmed
    const whole = pending === undefined ? piece : `${pending} ${piece}`
    if (whole.endsWith(" \\")) pending = whole.slice(0, -2)
    else {
      commands.push(whole)
      pending = undefined
    }
  }
  return commands
}

/**
 * `relay task list` for people: one row per task, as gh and kubectl list things: its id, state,
 * when its status last changed, and the first line of its text cut to the terminal's width.
 * `--json` keeps the whole task views.
 */
import type { TaskView } from "../domain/results.js"
import { helpWidth } from "./help.js"
import type { Style } from "./output.js"
import { escapeForTerminal } from "./terminalText.js"
import { statePaint } from "./views.js"

const GAP = "  "
/** The text column never gets narrower than this, even on a narrow terminal. */
const MIN_TEXT_WIDTH = 20
const HEADER = ["TASK ID", "STATE", "UPDATED", "TEXT"] as const

const UNITS = [["d", 86_400], ["h", 3_600], ["m", 60], ["s", 1]] as const

/** How long ago, in the largest whole unit ("45s ago", "3h ago"); "-" when the agent gave no time. */
export const ageOf = (timestamp: string | null, now: number): string => {
  const at = timestamp === null ? Number.NaN : Date.parse(timestamp)
  if (Number.isNaN(at)) return "-"
  const seconds = Math.max(0, Math.floor((now - at) / 1000))
  const [unit, size] = UNITS.find(([, size]) => seconds >= size) ?? ["s", 1]
  return `${Math.floor(seconds / size)}${unit} ago`
}

/** At most `width` characters (code points), the cut marked with an ellipsis. */
const cut = (text: string, width: number) => {
  const characters = [...text]
  return characters.length <= width ? text : `${characters.slice(0, width - 1).join("")}…`
}

const firstLine = (text: string) => text.trimStart().split(/\r?\n/, 1)[0] ?? ""

export const taskTable = (tasks: ReadonlyArray<TaskView>, style: Style, now = Date.now(), width = helpWidth()): string => {
  const rows = tasks.map((task) => ({
    cells: [escapeForTerminal(task.task_id), escapeForTerminal(task.state), ageOf(task.updated_at, now)] as const,
    text: escapeForTerminal(firstLine(task.text)),
    paint: statePaint(style, task.state)
  }))
  const widths = [0, 1, 2].map((column) => Math.max(HEADER[column]!.length, ...rows.map((row) => [...row.cells[column]].length)))
  const textWidth = Math.max(MIN_TEXT_WIDTH, width - widths.reduce((sum, each) => sum + each + GAP.length, 0))
  const pad = (text: string, column: number) => text + " ".repeat(widths[column]! - [...text].length)
  const header = style.bold([...HEADER.slice(0, 3).map(pad), HEADER[3]].join(GAP))
  const lines = rows.map(({ cells: [id, state, age], text, paint }) =>
    [pad(id, 0), paint(state) + " ".repeat(widths[1]! - [...state].length), pad(age, 2), cut(text, textWidth)].join(GAP).trimEnd()
  )
  return [header, ...lines].join("\n")
}

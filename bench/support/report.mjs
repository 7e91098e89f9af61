// The report of a run: its goals, each judged, and the one table printed on stdout. A row is
//   { id, group, label, value, unit, detail?, goal?: { op, limit }, ratios?: [{ to, value, goal? }] }
// and a goal is `value op limit` (op "<=", "<" or ">="); a ratio's goal applies to the ratio.

const passes = (value, { op, limit }) => (op === "<=" ? value <= limit : op === "<" ? value < limit : value >= limit)
const SYMBOL = { "<=": "≤", "<": "<", ">=": "≥" }

const formatNumber = (value) =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value >= 1 ? value.toFixed(2) : value.toFixed(3)
const formatValue = (row) => `${formatNumber(row.value)} ${row.unit}`
const goalText = (goal, suffix) => `${SYMBOL[goal.op]} ${goal.limit}${suffix}`

/** The goals of all rows, flat, each with what it measured and whether it passed. */
export const goalsOf = (rows) =>
  rows.flatMap((row) => [
    ...(row.goal === undefined ? [] : [{
      id: row.id,
      text: `${row.label} ${goalText(row.goal, ` ${row.unit}`)}`,
      measured: row.value,
      ...row.goal,
      pass: passes(row.value, row.goal)
    }]),
    ...(row.ratios ?? []).filter((ratio) => ratio.goal !== undefined).map((ratio) => ({
      id: `${row.id}/${ratio.to}`,
      text: `${row.label} ${goalText(ratio.goal, `× ${ratio.to}`)}`,
      measured: ratio.value,
      ...ratio.goal,
      pass: passes(ratio.value, ratio.goal)
    }))
  ])

/** One table: a line per row, and a continuation line per further ratio of that row. */
export const renderTable = (rows) => {
  const header = ["measurement", "median", "detail", "ratio", "goal", "result"]
  const lines = []
  let group
  for (const row of rows) {
    if (row.group !== group) {
      group = row.group
      lines.push([`${group}`, "", "", "", "", ""])
    }
    const ratios = row.ratios?.length ? row.ratios : [undefined]
    ratios.forEach((ratio, index) => {
      const goal = ratio?.goal ?? (index === 0 ? row.goal : undefined)
      const measured = ratio?.goal !== undefined ? ratio.value : row.value
      lines.push([
        index === 0 ? `  ${row.label}` : "",
        index === 0 ? formatValue(row) : "",
        index === 0 ? row.detail ?? "" : "",
        ratio === undefined ? "" : `${ratio.value.toFixed(2)}× ${ratio.to}`,
        goal === undefined ? "" : goalText(goal, ratio?.goal !== undefined ? "×" : ` ${row.unit}`),
        goal === undefined ? "" : passes(measured, goal) ? "pass" : "MISS"
      ])
    })
  }
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column].length)))
  const render = (cells) => cells.map((cell, column) => cell.padEnd(widths[column])).join("  ").trimEnd()
  return [render(header), widths.map((width) => "-".repeat(width)).join("  "), ...lines.map(render)].join("\n")
}

/**
 * The one escaping function of every human view: strings that come from an agent or the network
 * (ids, states, names, paths, texts, URLs) pass through it before they are styled and printed.
 *
 * Control characters are shown, never obeyed: C0 (newline, carriage return, escape, …), DEL, C1
 * (including the single-byte CSI), the Unicode line and paragraph separators, and the bidi
 * embedding, override and isolate controls that reorder what a line appears to say. They are
 * written as JSON writes them (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u001b`-style), so an ANSI
 * sequence shows as `\u001b[31m` and no value can start a line of its own. Applied to JSON text
 * the result is still JSON with the same value. Backslashes are left alone: the escapes are for
 * reading; `--json` gives the exact value.
 *
 * `line` (ids, states, names, URLs, messages): everything above is escaped, a field never spans
 * two lines. `lines` (an answer's text): newlines and tabs stay real (CRLF becomes a newline); the
 * rest is escaped.
 */

const ALL_CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g
const CONTROLS_BUT_LAYOUT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g

const NAMED: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" }

const shown = (character: string) => NAMED[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`

export type TextLayout = "line" | "lines"

export const escapeForTerminal = (text: string, layout: TextLayout = "line"): string =>
  layout === "line" ? text.replace(ALL_CONTROLS, shown) : text.replace(/\r\n/g, "\n").replace(CONTROLS_BUT_LAYOUT, shown)

/** The most of a foreign answer (one that is not A2A) that an error or report quotes. */
export const ANSWER_EXCERPT_CHARS = 200

/**
 * A short, escaped excerpt of an answer that is not A2A (an HTML page, a proxy's error, whatever an
 * interface sent): whitespace collapsed, control characters escaped, at most ANSWER_EXCERPT_CHARS
 * characters, a cut marked with an ellipsis. Reports quote answers through it so that no agent can
 * fill them with its pages, or with what a service it points at returned.
 */
export const answerExcerpt = (text: string): string => {
  // Escaping only lengthens a text: a cut first bounds the work whatever the answer's size.
  const escaped = escapeForTerminal(text.slice(0, ANSWER_EXCERPT_CHARS * 2).replace(/\s+/g, " ").trim())
  return escaped.length > ANSWER_EXCERPT_CHARS || text.length > ANSWER_EXCERPT_CHARS * 2
    ? `${escaped.slice(0, ANSWER_EXCERPT_CHARS - 1)}…`
    : escaped
}

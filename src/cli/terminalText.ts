/** The terminal's escaping function lives with the domain, so programs can escape what their reports quote; see there. */
export { escapeForTerminal, type TextLayout } from "../domain/terminalText.js"

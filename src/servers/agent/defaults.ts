/** Where `relay server agent` listens unless told otherwise, and the largest body it reads (light: the CLI reads these at start-up). */
export { DEFAULT_MAX_BODY_BYTES } from "./io.js"
export const DEFAULT_AGENT_HOST = "0.0.0.0"
export const DEFAULT_AGENT_PORT = 8000

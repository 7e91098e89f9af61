/** The package version, read once from package.json (one level above both src/ and dist/). */
import { createRequire } from "node:module"

const pkg = createRequire(import.meta.url)("../package.json") as { readonly name: string; readonly version: string }

export const PACKAGE_NAME = pkg.name
export const VERSION = pkg.version

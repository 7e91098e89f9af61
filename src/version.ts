/** The package's name and version, from package.json (inlined by the bundler: nothing to find at run time). */
import pkg from "../package.json" with { type: "json" }

export const PACKAGE_NAME = pkg.name
export const VERSION = pkg.version

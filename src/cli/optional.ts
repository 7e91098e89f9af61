/** The one shape of an option a command can do without, so every command declares it the same way. */
import { Options } from "@effect/cli"
import type { Option } from "effect"

/** `option`, described for --help, and `Option.none()` when the command line leaves it out. */
export const optional = <A>(option: Options.Options<A>, description: string): Options.Options<Option.Option<A>> =>
  option.pipe(Options.withDescription(description), Options.optional)

/**
 * Errors of model selection and model calls (the local agent server's `--model`).
 *
 * Like the errors in errors.ts, each carries a stable `code`, a human `message` and a `hint`.
 */
import { Schema } from "effect"

/** Every form `--model` / RELAY_MODEL takes (ModelAccess.parseModelSpec), for hints. */
export const MODEL_FORMS = "echo, mock, ollama:<name>, openai:<name> or gateway:<name>"

/** The `--model` (or RELAY_MODEL) value is not one of the known forms. */
export class InvalidModelSpec extends Schema.TaggedError<InvalidModelSpec>()("InvalidModelSpec", {
  spec: Schema.String,
  reason: Schema.String,
  suggestion: Schema.String
}) {
  readonly code = "invalid_model_spec"
  override get message() {
    return `Invalid model "${this.spec}": ${this.reason}`
  }
  get hint() {
    return `${this.suggestion} Accepted forms: ${MODEL_FORMS}.`
  }
}

/** The model form is valid but a setting it needs (API key, gateway URL) is not set. */
export class ModelSettingMissing extends Schema.TaggedError<ModelSettingMissing>()("ModelSettingMissing", {
  spec: Schema.String,
  setting: Schema.String,
  purpose: Schema.String
}) {
  readonly code = "model_setting_missing"
  override get message() {
    return `Model "${this.spec}" needs ${this.setting}, which is not set`
  }
  get hint() {
    return `Set ${this.setting} (${this.purpose}), or pick another model with --model (echo needs nothing).`
  }
}

/** A model setting from the environment (OLLAMA_HOST, RELAY_MODEL_TIMEOUT_MS, …) has an unusable value. */
export class InvalidModelSetting extends Schema.TaggedError<InvalidModelSetting>()("InvalidModelSetting", {
  setting: Schema.String,
  value: Schema.String,
  reason: Schema.String
}) {
  readonly code = "invalid_model_setting"
  override get message() {
    return `${this.setting}="${this.value}" is not usable: ${this.reason}`
  }
  get hint() {
    return `Fix or unset ${this.setting}.`
  }
}

/** Why a model could not be chosen; reported before the agent server starts. */
export type ModelSpecError = InvalidModelSpec | ModelSettingMissing | InvalidModelSetting

/** A call to the model failed: unreachable server, HTTP error, unreadable answer or timeout. */
export class ModelError extends Schema.TaggedError<ModelError>()("ModelError", {
  model: Schema.String,
  reason: Schema.String
}) {
  readonly code = "model_error"
  override get message() {
    return `Model ${this.model} failed: ${this.reason}`
  }
  get hint() {
    return "Check that the model server is running and reachable and that it serves this model, " +
      "or start the agent with another --model (echo needs nothing)."
  }
}

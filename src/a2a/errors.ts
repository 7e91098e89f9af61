/**
 * The A2A error table as data: JSON-RPC code, gRPC status (also the REST `error.status`),
 * HTTP status and the v1.0 `google.rpc.ErrorInfo` reason of every error, plus the standard
 * JSON-RPC errors. Error classes that carry these live with the programs and servers.
 */

export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo"
export const A2A_ERROR_DOMAIN = "a2a-protocol.org"

export type GrpcStatus = "NOT_FOUND" | "FAILED_PRECONDITION" | "INVALID_ARGUMENT" | "INTERNAL" | "UNIMPLEMENTED"

export interface ErrorSpec {
  readonly name: string
  readonly jsonRpcCode: number
  /** gRPC status name, also `error.status` of a REST error body. */
  readonly grpcStatus: GrpcStatus
  readonly httpStatus: number
  /** `ErrorInfo.reason` in v1.0 error details. */
  readonly reason: string
  readonly defaultMessage: string
}

export const A2A_ERRORS = {
  TaskNotFound: {
    name: "TaskNotFound",
    jsonRpcCode: -32001,
    grpcStatus: "NOT_FOUND",
    httpStatus: 404,
    reason: "TASK_NOT_FOUND",
    defaultMessage: "Task not found"
  },
  TaskNotCancelable: {
    name: "TaskNotCancelable",
    jsonRpcCode: -32002,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    reason: "TASK_NOT_CANCELABLE",
    defaultMessage: "Task cannot be canceled"
  },
  PushNotificationNotSupported: {
    name: "PushNotificationNotSupported",
    jsonRpcCode: -32003,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
    defaultMessage: "Push notifications are not supported"
  },
  UnsupportedOperation: {
    name: "UnsupportedOperation",
    jsonRpcCode: -32004,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    reason: "UNSUPPORTED_OPERATION",
    defaultMessage: "This operation is not supported"
  },
  ContentTypeNotSupported: {
    name: "ContentTypeNotSupported",
    jsonRpcCode: -32005,
    grpcStatus: "INVALID_ARGUMENT",
    httpStatus: 400,
    reason: "CONTENT_TYPE_NOT_SUPPORTED",
    defaultMessage: "Incompatible content types"
  },
  InvalidAgentResponse: {
    name: "InvalidAgentResponse",
    jsonRpcCode: -32006,
    grpcStatus: "INTERNAL",
    httpStatus: 500,
    reason: "INVALID_AGENT_RESPONSE",
    defaultMessage: "Invalid agent response"
  },
  /** v0.3 name: AuthenticatedExtendedCardNotConfigured. */
  ExtendedAgentCardNotConfigured: {
    name: "ExtendedAgentCardNotConfigured",
    jsonRpcCode: -32007,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
    defaultMessage: "Extended agent card is not configured"
  },
  /** New in v1.0. */
  ExtensionSupportRequired: {
    name: "ExtensionSupportRequired",
    jsonRpcCode: -32008,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    reason: "EXTENSION_SUPPORT_REQUIRED",
    defaultMessage: "Extension support is required"
  },
  /** New in v1.0. */
  VersionNotSupported: {
    name: "VersionNotSupported",
    jsonRpcCode: -32009,
    grpcStatus: "FAILED_PRECONDITION",
    httpStatus: 400,
    reason: "VERSION_NOT_SUPPORTED",
    defaultMessage: "Protocol version is not supported"
  }
} as const satisfies Record<string, ErrorSpec>

export type A2aErrorName = keyof typeof A2A_ERRORS

/**
 * Standard JSON-RPC 2.0 errors. The spec gives them no ErrorInfo reason; these upper-snake
 * names (as @a2a-js uses for invalid params) keep REST and JSON-RPC answers uniform.
 */
export const JSON_RPC_ERRORS = {
  ParseError: {
    name: "ParseError",
    jsonRpcCode: -32700,
    grpcStatus: "INVALID_ARGUMENT",
    httpStatus: 400,
    reason: "PARSE_ERROR",
    defaultMessage: "Parse error"
  },
  InvalidRequest: {
    name: "InvalidRequest",
    jsonRpcCode: -32600,
    grpcStatus: "INVALID_ARGUMENT",
    httpStatus: 400,
    reason: "INVALID_REQUEST",
    defaultMessage: "Invalid request"
  },
  MethodNotFound: {
    name: "MethodNotFound",
    jsonRpcCode: -32601,
    grpcStatus: "UNIMPLEMENTED",
    httpStatus: 501,
    reason: "METHOD_NOT_FOUND",
    defaultMessage: "Method not found"
  },
  InvalidParams: {
    name: "InvalidParams",
    jsonRpcCode: -32602,
    grpcStatus: "INVALID_ARGUMENT",
    httpStatus: 400,
    reason: "INVALID_PARAMS",
    defaultMessage: "Invalid params"
  },
  InternalError: {
    name: "InternalError",
    jsonRpcCode: -32603,
    grpcStatus: "INTERNAL",
    httpStatus: 500,
    reason: "INTERNAL_ERROR",
    defaultMessage: "Internal error"
  }
} as const satisfies Record<string, ErrorSpec>

export type JsonRpcErrorName = keyof typeof JSON_RPC_ERRORS

const ALL_ERRORS: ReadonlyArray<ErrorSpec> = [...Object.values(A2A_ERRORS), ...Object.values(JSON_RPC_ERRORS)]

/** The error with this JSON-RPC code (A2A or standard), if any. */
export const a2aErrorByCode = (code: number): ErrorSpec | undefined => ALL_ERRORS.find((e) => e.jsonRpcCode === code)

/** The error with this ErrorInfo reason (A2A or standard), if any. */
export const a2aErrorByReason = (reason: string): ErrorSpec | undefined => ALL_ERRORS.find((e) => e.reason === reason)

/** The A2A-specific range, -32001 … -32099. */
export const isA2aErrorCode = (code: number): boolean => code <= -32001 && code >= -32099

export interface ErrorInfo {
  readonly "@type": typeof ERROR_INFO_TYPE
  readonly reason: string
  readonly domain: typeof A2A_ERROR_DOMAIN
  readonly metadata?: Readonly<Record<string, string>>
}

/** The `google.rpc.ErrorInfo` detail of a v1.0 error (`metadata` omitted when empty). */
export const errorInfoDetail = (reason: string, metadata?: Readonly<Record<string, string>>): ErrorInfo =>
  metadata === undefined || Object.keys(metadata).length === 0
    ? { "@type": ERROR_INFO_TYPE, reason, domain: A2A_ERROR_DOMAIN }
    : { "@type": ERROR_INFO_TYPE, reason, domain: A2A_ERROR_DOMAIN, metadata }

/**
 * The ErrorInfo reason in a JSON-RPC `error.data` or a REST `error.details` value (an array of
 * `@type`d details in v1.0; v0.3 data was free-form, so anything else gives `undefined`).
 */
export const errorInfoReason = (details: unknown): string | undefined => {
  if (!Array.isArray(details)) return undefined
  for (const detail of details) {
    if (typeof detail === "object" && detail !== null && "reason" in detail && typeof detail.reason === "string") {
      const type = "@type" in detail ? detail["@type"] : undefined
      if (type === undefined || type === ERROR_INFO_TYPE) return detail.reason
    }
  }
  return undefined
}

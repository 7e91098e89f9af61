// The fields of each A2A proto message, by JSON name, read off the proto files (v1.0:
// specification/a2a.proto at tag v1.0.0 of a2aproject/A2A; v0.3: specification/grpc/a2a.proto at
// tag v0.3.0). Strict ProtoJSON readers, such as the Python SDK's `ParseDict`, refuse a field the
// message does not have; `unknownProtoFields` finds those in an answer.
//
// A field's value names its message type, `map:<Type>` a map of that message, `struct` free-form
// JSON (google.protobuf.Struct / Value), `map` a map of scalars, and null a scalar.

type FieldType = string | null
export type ProtoTable = Readonly<Record<string, Readonly<Record<string, FieldType>>>>

export const V1_PROTO: ProtoTable = {
  APIKeySecurityScheme: { description: null, location: null, name: null },
  AgentCapabilities: { streaming: null, pushNotifications: null, extensions: "AgentExtension", extendedAgentCard: null },
  AgentCard: {
    name: null,
    description: null,
    supportedInterfaces: "AgentInterface",
    provider: "AgentProvider",
    version: null,
    documentationUrl: null,
    capabilities: "AgentCapabilities",
    securitySchemes: "map:SecurityScheme",
    securityRequirements: "SecurityRequirement",
    defaultInputModes: null,
    defaultOutputModes: null,
    skills: "AgentSkill",
    signatures: "AgentCardSignature",
    iconUrl: null
  },
  AgentCardSignature: { protected: null, signature: null, header: "struct" },
  AgentExtension: { uri: null, description: null, required: null, params: "struct" },
  AgentInterface: { url: null, protocolBinding: null, tenant: null, protocolVersion: null },
  AgentProvider: { url: null, organization: null },
  AgentSkill: {
    id: null,
    name: null,
    description: null,
    tags: null,
    examples: null,
    inputModes: null,
    outputModes: null,
    securityRequirements: "SecurityRequirement"
  },
  Artifact: { artifactId: null, name: null, description: null, parts: "Part", metadata: "struct", extensions: null },
  AuthenticationInfo: { scheme: null, credentials: null },
  AuthorizationCodeOAuthFlow: { authorizationUrl: null, tokenUrl: null, refreshUrl: null, scopes: "map", pkceRequired: null },
  CancelTaskRequest: { tenant: null, id: null, metadata: "struct" },
  ClientCredentialsOAuthFlow: { tokenUrl: null, refreshUrl: null, scopes: "map" },
  DeleteTaskPushNotificationConfigRequest: { tenant: null, taskId: null, id: null },
  DeviceCodeOAuthFlow: { deviceAuthorizationUrl: null, tokenUrl: null, refreshUrl: null, scopes: "map" },
  GetExtendedAgentCardRequest: { tenant: null },
  GetTaskPushNotificationConfigRequest: { tenant: null, taskId: null, id: null },
  GetTaskRequest: { tenant: null, id: null, historyLength: null },
  HTTPAuthSecurityScheme: { description: null, scheme: null, bearerFormat: null },
  ImplicitOAuthFlow: { authorizationUrl: null, refreshUrl: null, scopes: "map" },
  ListTaskPushNotificationConfigsRequest: { tenant: null, taskId: null, pageSize: null, pageToken: null },
  ListTaskPushNotificationConfigsResponse: { configs: "TaskPushNotificationConfig", nextPageToken: null },
  ListTasksRequest: {
    tenant: null,
    contextId: null,
    status: null,
    pageSize: null,
    pageToken: null,
    historyLength: null,
    statusTimestampAfter: null,
    includeArtifacts: null
  },
  ListTasksResponse: { tasks: "Task", nextPageToken: null, pageSize: null, totalSize: null },
  Message: {
    messageId: null,
    contextId: null,
    taskId: null,
    role: null,
    parts: "Part",
    metadata: "struct",
    extensions: null,
    referenceTaskIds: null
  },
  MutualTlsSecurityScheme: { description: null },
  OAuth2SecurityScheme: { description: null, flows: "OAuthFlows", oauth2MetadataUrl: null },
  OAuthFlows: {
    authorizationCode: "AuthorizationCodeOAuthFlow",
    clientCredentials: "ClientCredentialsOAuthFlow",
    implicit: "ImplicitOAuthFlow",
    password: "PasswordOAuthFlow",
    deviceCode: "DeviceCodeOAuthFlow"
  },
  OpenIdConnectSecurityScheme: { description: null, openIdConnectUrl: null },
  Part: { text: null, raw: null, url: null, data: "struct", metadata: "struct", filename: null, mediaType: null },
  PasswordOAuthFlow: { tokenUrl: null, refreshUrl: null, scopes: "map" },
  SecurityRequirement: { schemes: "map:StringList" },
  SecurityScheme: {
    apiKeySecurityScheme: "APIKeySecurityScheme",
    httpAuthSecurityScheme: "HTTPAuthSecurityScheme",
    oauth2SecurityScheme: "OAuth2SecurityScheme",
    openIdConnectSecurityScheme: "OpenIdConnectSecurityScheme",
    mtlsSecurityScheme: "MutualTlsSecurityScheme"
  },
  SendMessageConfiguration: {
    acceptedOutputModes: null,
    taskPushNotificationConfig: "TaskPushNotificationConfig",
    historyLength: null,
    returnImmediately: null
  },
  SendMessageRequest: { tenant: null, message: "Message", configuration: "SendMessageConfiguration", metadata: "struct" },
  SendMessageResponse: { task: "Task", message: "Message" },
  StreamResponse: { task: "Task", message: "Message", statusUpdate: "TaskStatusUpdateEvent", artifactUpdate: "TaskArtifactUpdateEvent" },
  StringList: { list: null },
  SubscribeToTaskRequest: { tenant: null, id: null },
  Task: { id: null, contextId: null, status: "TaskStatus", artifacts: "Artifact", history: "Message", metadata: "struct" },
  TaskArtifactUpdateEvent: { taskId: null, contextId: null, artifact: "Artifact", append: null, lastChunk: null, metadata: "struct" },
  TaskPushNotificationConfig: { tenant: null, id: null, taskId: null, url: null, token: null, authentication: "AuthenticationInfo" },
  TaskStatus: { state: null, message: "Message", timestamp: null },
  TaskStatusUpdateEvent: { taskId: null, contextId: null, status: "TaskStatus", metadata: "struct" }
}

export const V03_PROTO: ProtoTable = {
  APIKeySecurityScheme: { description: null, location: null, name: null },
  AgentCapabilities: { streaming: null, pushNotifications: null, extensions: "AgentExtension" },
  AgentCard: {
    protocolVersion: null,
    name: null,
    description: null,
    url: null,
    preferredTransport: null,
    additionalInterfaces: "AgentInterface",
    provider: "AgentProvider",
    version: null,
    documentationUrl: null,
    capabilities: "AgentCapabilities",
    securitySchemes: "map:SecurityScheme",
    security: "Security",
    defaultInputModes: null,
    defaultOutputModes: null,
    skills: "AgentSkill",
    supportsAuthenticatedExtendedCard: null,
    signatures: "AgentCardSignature"
  },
  AgentCardSignature: { protected: null, signature: null, header: "struct" },
  AgentExtension: { uri: null, description: null, required: null, params: "struct" },
  AgentInterface: { url: null, transport: null },
  AgentProvider: { url: null, organization: null },
  AgentSkill: {
    id: null,
    name: null,
    description: null,
    tags: null,
    examples: null,
    inputModes: null,
    outputModes: null,
    security: "Security"
  },
  Artifact: { artifactId: null, name: null, description: null, parts: "Part", metadata: "struct", extensions: null },
  AuthenticationInfo: { schemes: null, credentials: null },
  AuthorizationCodeOAuthFlow: { authorizationUrl: null, tokenUrl: null, refreshUrl: null, scopes: "map" },
  CancelTaskRequest: { name: null },
  ClientCredentialsOAuthFlow: { tokenUrl: null, refreshUrl: null, scopes: "map" },
  CreateTaskPushNotificationConfigRequest: { parent: null, configId: null, config: "TaskPushNotificationConfig" },
  DataPart: { data: "struct" },
  DeleteTaskPushNotificationConfigRequest: { name: null },
  FilePart: { fileWithUri: null, fileWithBytes: null, mimeType: null },
  GetAgentCardRequest: {},
  GetTaskPushNotificationConfigRequest: { name: null },
  GetTaskRequest: { name: null, historyLength: null },
  HTTPAuthSecurityScheme: { description: null, scheme: null, bearerFormat: null },
  ImplicitOAuthFlow: { authorizationUrl: null, refreshUrl: null, scopes: "map" },
  ListTaskPushNotificationConfigRequest: { parent: null, pageSize: null, pageToken: null },
  ListTaskPushNotificationConfigResponse: { configs: "TaskPushNotificationConfig", nextPageToken: null },
  Message: { messageId: null, contextId: null, taskId: null, role: null, content: "Part", metadata: "struct", extensions: null },
  MutualTlsSecurityScheme: { description: null },
  OAuth2SecurityScheme: { description: null, flows: "OAuthFlows", oauth2MetadataUrl: null },
  OAuthFlows: {
    authorizationCode: "AuthorizationCodeOAuthFlow",
    clientCredentials: "ClientCredentialsOAuthFlow",
    implicit: "ImplicitOAuthFlow",
    password: "PasswordOAuthFlow"
  },
  OpenIdConnectSecurityScheme: { description: null, openIdConnectUrl: null },
  Part: { text: null, file: "FilePart", data: "DataPart" },
  PasswordOAuthFlow: { tokenUrl: null, refreshUrl: null, scopes: "map" },
  PushNotificationConfig: { id: null, url: null, token: null, authentication: "AuthenticationInfo" },
  Security: { schemes: "map:StringList" },
  SecurityScheme: {
    apiKeySecurityScheme: "APIKeySecurityScheme",
    httpAuthSecurityScheme: "HTTPAuthSecurityScheme",
    oauth2SecurityScheme: "OAuth2SecurityScheme",
    openIdConnectSecurityScheme: "OpenIdConnectSecurityScheme",
    mtlsSecurityScheme: "MutualTlsSecurityScheme"
  },
  SendMessageConfiguration: { acceptedOutputModes: null, pushNotification: "PushNotificationConfig", historyLength: null, blocking: null },
  SendMessageRequest: { message: "Message", configuration: "SendMessageConfiguration", metadata: "struct" },
  SendMessageResponse: { task: "Task", message: "Message" },
  StreamResponse: { task: "Task", message: "Message", statusUpdate: "TaskStatusUpdateEvent", artifactUpdate: "TaskArtifactUpdateEvent" },
  StringList: { list: null },
  Task: { id: null, contextId: null, status: "TaskStatus", artifacts: "Artifact", history: "Message", metadata: "struct" },
  TaskArtifactUpdateEvent: { taskId: null, contextId: null, artifact: "Artifact", append: null, lastChunk: null, metadata: "struct" },
  TaskPushNotificationConfig: { name: null, pushNotificationConfig: "PushNotificationConfig" },
  TaskStatus: { state: null, message: "Message", timestamp: null },
  TaskStatusUpdateEvent: { taskId: null, contextId: null, status: "TaskStatus", final: null, metadata: "struct" },
  TaskSubscriptionRequest: { name: null }
}

/** The paths (`task.status.foo`) of the fields in `json` that `message` of `table` does not have. */
export const unknownProtoFields = (table: ProtoTable, message: string, json: unknown, path = ""): ReadonlyArray<string> => {
  if (Array.isArray(json)) return json.flatMap((item, index) => unknownProtoFields(table, message, item, `${path}[${index}]`))
  if (typeof json !== "object" || json === null) return []
  const fields = table[message]
  if (fields === undefined) throw new Error(`no message ${message} in the table`)
  return Object.entries(json).flatMap(([key, value]) => {
    const at = path === "" ? key : `${path}.${key}`
    if (!(key in fields)) return [at]
    const type = fields[key]
    if (type === null || type === undefined || type === "struct" || type === "map") return []
    if (type.startsWith("map:")) {
      return Object.entries(value as Record<string, unknown>).flatMap(([name, item]) =>
        unknownProtoFields(table, type.slice(4), item, `${at}.${name}`)
      )
    }
    return unknownProtoFields(table, type, value, at)
  })
}

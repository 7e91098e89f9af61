/**
 * The programs the tools run, in one module the tools load on the first call that needs one
 * (toolKit.ts, withPrograms): they bring the A2A model and client, which `relay mcp` need not parse
 * to answer initialize and tools/list (test/cli/lazyLoading.test.ts holds it to that).
 */
export { RequestTimeout } from "../domain/clientErrors.js"
export { clearCredentials, setCredentials } from "../programs/credentials.js"
export { listNotifications } from "../programs/notifications.js"
export { login } from "../programs/oauth.js"
export { outgoingParts } from "../programs/outgoingParts.js"
export { deletePushConfig, getPushConfig, listPushConfigs, setPushConfig } from "../programs/pushConfig.js"
export { insideDirectories } from "../programs/readPermission.js"
export { sendMessage } from "../programs/sendMessage.js"
export { clearSessions, listSessions, showSession } from "../programs/sessions.js"
export { cancelTask, getTask, listTasks, waitForTask } from "../programs/tasks.js"

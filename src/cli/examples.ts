/**
 * Examples shown by `relay <command> --help`, keyed by the command's full path. Every command of
 * the tree has at least two (test/stress/help.test.ts), and each names only its own command's flags
 * (test/cli/namedFlags.test.ts). Kept here, apart from the command definitions, so that help can
 * teach without the command files growing.
 */

/** What it does, then the command line (without the leading `$ `). */
export type Example = readonly [what: string, command: string]

const AGENT = "http://127.0.0.1:8000"

export const EXAMPLES: Readonly<Record<string, ReadonlyArray<Example>>> = {
  "relay": [
    ["Ask an agent something", `relay message send --url ${AGENT} "What can you do?"`],
    ["Connect an AI assistant to A2A agents", "relay mcp install --client claude-desktop"],
    ["Check an agent's conformance", `relay check ${AGENT}`]
  ],
  "relay mcp": [
    ["Serve MCP on stdio (what MCP clients spawn)", "relay mcp"],
    ["Serve MCP over HTTP on a free port", "relay mcp -t streamable-http --port 0"],
    ["Let the MCP Inspector's web UI connect", "relay mcp -t streamable-http --allow-origin http://localhost:6274"]
  ],
  "relay mcp install": [
    ["Add relay to Claude Desktop", "relay mcp install --client claude-desktop"],
    ["Add it to this project's Cursor configuration", "relay mcp install --client cursor --scope project"],
    ["Show what would change, writing nothing", "relay mcp install --client codex --dry-run"]
  ],
  "relay mcp uninstall": [
    ["Remove relay from VS Code", "relay mcp uninstall --client vscode"],
    ["Show what would be removed", "relay mcp uninstall --client cursor --scope project --dry-run"]
  ],
  "relay mcp config": [
    ["Print the entry for Codex", "relay mcp config --client codex"],
    ["The entry for any client, under another name", "relay mcp config --name my-relay"]
  ],
  "relay message": [
    ["Ask once and print the answer", `relay message send --url ${AGENT} "Summarise this week"`],
    ["Print the answer as it streams", `relay message stream --url ${AGENT} "Write a haiku"`]
  ],
  "relay message send": [
    ["Ask once and print the answer", `relay message send --url ${AGENT} "What can you do?"`],
    ["Go on with the saved conversation", `relay message send --url ${AGENT} --continue "And in French?"`],
    [
      "Have updates pushed to a webhook; give up waiting after 60 s",
      `relay message send --url ${AGENT} --push-url http://127.0.0.1:9000/hook --wait 60 "Build the report"`
    ]
  ],
  "relay message stream": [
    ["Print the answer as it streams", `relay message stream --url ${AGENT} "Write a haiku"`],
    ["The result as JSON", `relay message stream --url ${AGENT} --json "Write a haiku"`]
  ],
  "relay task": [
    ["Show a task's state and answer", `relay task get --url ${AGENT} TASK_ID`],
    ["List the agent's working tasks", `relay task list --url ${AGENT} --status working`]
  ],
  "relay task get": [
    ["Show a task's state and answer", `relay task get --url ${AGENT} TASK_ID`],
    ["With its last 5 messages, as JSON", `relay task get --url ${AGENT} --history-length 5 --json TASK_ID`]
  ],
  "relay task list": [
    ["The agent's tasks, newest first", `relay task list --url ${AGENT}`],
    [
      "Working tasks of one conversation, 10 a page",
      `relay task list --url ${AGENT} --context-id CONTEXT_ID --status working --page-size 10`
    ]
  ],
  "relay task cancel": [
    ["Cancel a task", `relay task cancel --url ${AGENT} TASK_ID`],
    ["Cancel it and print its state as JSON", `relay task cancel --url ${AGENT} --json TASK_ID`]
  ],
  "relay task resubscribe": [
    ["Follow a running task again", `relay task resubscribe --url ${AGENT} TASK_ID`],
    ["The result as JSON", `relay task resubscribe --url ${AGENT} --json TASK_ID`]
  ],
  "relay task notification": [
    ["Send a task's updates to a webhook", `relay task notification set --url ${AGENT} --webhook-url http://127.0.0.1:9000/hook TASK_ID`],
    ["List a task's push configs", `relay task notification list --url ${AGENT} TASK_ID`]
  ],
  "relay task notification set": [
    ["Send a task's updates to a webhook", `relay task notification set --url ${AGENT} --webhook-url http://127.0.0.1:9000/hook TASK_ID`],
    [
      "With a token the webhook checks",
      `relay task notification set --url ${AGENT} --webhook-url http://127.0.0.1:9000/hook --webhook-token "$HOOK_TOKEN" TASK_ID`
    ]
  ],
  "relay task notification get": [
    ["Show a task's newest push config", `relay task notification get --url ${AGENT} TASK_ID`],
    ["Show one config by id", `relay task notification get --url ${AGENT} --config-id CONFIG_ID TASK_ID`]
  ],
  "relay task notification list": [
    ["List a task's push configs", `relay task notification list --url ${AGENT} TASK_ID`],
    ["As JSON", `relay task notification list --url ${AGENT} --json TASK_ID`]
  ],
  "relay task notification delete": [
    ["Remove a push config", `relay task notification delete --url ${AGENT} --config-id CONFIG_ID TASK_ID`],
    ["Remove it and say so as JSON", `relay task notification delete --url ${AGENT} --config-id CONFIG_ID --json TASK_ID`]
  ],
  "relay card": [
    ["Print an agent's card", `relay card get --url ${AGENT}`],
    ["Validate a card file", "relay card validate --file agent-card.json"]
  ],
  "relay card get": [
    ["Print an agent's card", `relay card get --url ${AGENT}`],
    ["The extended card for authenticated clients", `relay card get --url ${AGENT} --authenticated`],
    ["Save the card to a file (card validate --file reads it)", `relay card get --url ${AGENT} > agent-card.json`]
  ],
  "relay card validate": [
    ["Validate the card an agent serves", `relay card validate ${AGENT}`],
    ["Validate a card file, issues as JSON", "relay card validate --file --json agent-card.json"]
  ],
  "relay check": [
    ["Check every interface the card declares", `relay check ${AGENT}`],
    ["Only A2A 1.0 over JSON-RPC", `relay check ${AGENT} --protocol 1.0 --binding jsonrpc`],
    ["In CI, with a JUnit report", `relay check ${AGENT} --junit a2a-conformance.xml`],
    ["Fail on SHOULD checks and warnings too", `relay check ${AGENT} --fail-on should`]
  ],
  "relay agent": [
    ["Save an agent under a name, then use the name", `relay agent add local ${AGENT}`],
    ["Make it the default of commands given no --url", "relay agent use local"]
  ],
  "relay agent add": [
    ["Save an agent under a name (its card is read and checked)", `relay agent add local ${AGENT}`],
    ["An agent whose card is off the well-known path", `relay agent add weather ${AGENT} --card-url ${AGENT}/weather.json`],
    ["With your own description", `relay agent add local ${AGENT} --description "The echo agent for tests"`]
  ],
  "relay agent list": [
    ["The saved agents, their cards and skills", "relay agent list"],
    ["Names and URLs only, a tab between", "relay agent list --names"]
  ],
  "relay agent show": [
    ["One agent, each skill described", "relay agent show local"],
    ["As JSON", "relay agent show local --json"]
  ],
  "relay agent use": [
    ["Commands given no --url use this agent", "relay agent use local"],
    ["As JSON", "relay agent use local --json"]
  ],
  "relay agent remove": [
    ["Forget a name (the URL's session and credentials stay)", "relay agent remove local"],
    ["As JSON", "relay agent remove local --json"]
  ],
  "relay agent refresh": [
    ["Read every saved agent's card again", "relay agent refresh"],
    ["Only one", "relay agent refresh local"]
  ],
  "relay agent discover": [
    ["The agents a domain's AI catalog names", "relay agent discover https://agents.example"],
    ["Save them all under their cards' names", "relay agent discover https://agents.example --add"]
  ],
  "relay session": [
    ["What relay remembers per agent", "relay session list"],
    ["Forget one agent's conversation", `relay session clear --url ${AGENT}`]
  ],
  "relay session list": [
    ["What relay remembers per agent", "relay session list"],
    ["As JSON", "relay session list --json"]
  ],
  "relay session show": [
    ["One agent's saved session", `relay session show --url ${AGENT}`],
    ["As JSON", `relay session show --url ${AGENT} --json`]
  ],
  "relay session clear": [
    ["Forget one agent's conversation", `relay session clear --url ${AGENT}`],
    ["Forget every agent's (credentials are kept)", "relay session clear --all"]
  ],
  "relay auth": [
    ["Save a bearer token, read from stdin", `relay auth set --url ${AGENT} --bearer-token -`],
    ["Log in with OAuth as the card declares", `relay auth login --url ${AGENT} --client-id relay-cli`]
  ],
  "relay auth set": [
    ["Save a bearer token, read from stdin", `relay auth set --url ${AGENT} --bearer-token -`],
    ["Save an API key sent in another header", `relay auth set --url ${AGENT} --api-key - --api-key-header X-Key`]
  ],
  "relay auth show": [
    ["Show an agent's saved credentials, masked", `relay auth show --url ${AGENT}`],
    ["As JSON", `relay auth show --url ${AGENT} --json`]
  ],
  "relay auth clear": [
    ["Remove an agent's saved credentials", `relay auth clear --url ${AGENT}`],
    ["And say so as JSON", `relay auth clear --url ${AGENT} --json`]
  ],
  "relay auth login": [
    ["Log in in a browser (authorization code)", `relay auth login --url ${AGENT} --client-id relay-cli`],
    ["A machine: client credentials, secret from stdin", `relay auth login --url ${AGENT} --client-id ci --client-secret -`],
    ["A terminal without a browser (device code)", `relay auth login --url ${AGENT} --client-id relay-cli --flow device_code`]
  ],
  "relay auth logout": [
    ["Revoke and forget an agent's OAuth tokens", `relay auth logout --url ${AGENT}`],
    ["And say so as JSON", `relay auth logout --url ${AGENT} --json`]
  ],
  "relay server": [
    ["A local A2A agent on port 8000", "relay server agent --host 127.0.0.1"],
    ["A webhook receiver for push notifications", "relay server push"]
  ],
  "relay server agent": [
    ["An agent on this machine only, echo model", "relay server agent --host 127.0.0.1 -m echo"],
    ["The scriptable test agent, slow on purpose", "relay server agent -m mock --latency 2s"],
    ["Require an API key (one is generated and printed)", "relay server agent --auth"]
  ],
  "relay server push": [
    ["Receive push notifications on port 9000", "relay server push"],
    ["Require a token, kept out of the process list", "RELAY_PUSH_TOKEN=secret relay server push --port 9100"],
    ["In the background of a terminal you keep using: print nothing", "relay server push --quiet &"]
  ],
  "relay notifications": [
    ["What the agents pushed", "relay notifications list"],
    ["Keep watching", "relay notifications list --follow"]
  ],
  "relay notifications list": [
    ["The last 10 minutes' notifications about one task", "relay notifications list --task-id TASK_ID --since 10m"],
    ["Keep watching, one JSON line each", "relay notifications list --follow --json"]
  ],
  "relay doctor": [
    ["Check the installation", "relay doctor"],
    ["As JSON", "relay doctor --json"]
  ],
  "relay completions": [
    ["Bash: add to ~/.bashrc", "source <(relay completions bash)"],
    ["Fish", "relay completions fish | source"]
  ]
}

/** The command line's help: one page for the whole and one per command, printed by `--help`. */
export const GENERAL_HELP = `usage: llm-gateway <command> [options]

commands:
  start               serve the gateway on HOST:PORT (default 127.0.0.1:8787)
  keys                create, list, show, update, rotate and delete virtual keys
  credentials         store, list, rotate and delete provider credentials
  routes              check a route definition before using it
  import              store a Portkey config or a LiteLLM proxy config as routes, aliases and credentials
  rotate-master-key   re-wrap every stored secret under a new master key
  reset-account-key   replace the stored account API key (shown once)
  org                 recover an owner's access (org recover --email <email>)
  doctor              check Node, the data dir, Redis/PostgreSQL, the master key and the config
  audit               verify the audit trail's hash chain, or export it as JSON Lines

options every command takes:
  --config <file>     the gateway.config.ts or .js to load (default: GATEWAY_CONFIG, else the shipped one)
  --json              machine-readable output (JSON on stdout)
  -h, --help          this help, or a command's (llm-gateway keys --help)

Secrets are never read from the command line: they come from stdin (--stdin) or an environment
variable, or at a terminal from a prompt that does not echo. Without a command this help is printed.`;

export const COMMAND_HELP: Readonly<Record<string, string>> = {
  start: `usage: llm-gateway start [--config <file>]

Serves the gateway configured by --config (else GATEWAY_CONFIG, else the shipped gateway.config)
on HOST:PORT. The first start generates an account API key and prints it once. SIGTERM or SIGINT
let requests in flight finish (up to GATEWAY_SHUTDOWN_GRACE_MS, default 30000) before it exits.`,
  keys: `usage: llm-gateway keys <action> [options]

  keys create --name <name> --provider <id> [--credential <id> | --stdin] [--custom-host <url>]
        [--policy <name>] [--budget-usd <n>] [--budget-period total|day|month] [--rpm <n>] [--rpd <n>]
        [--users a,b] [--models a,b] [--routes a,b] [--expires-at <iso time>] [--no-log-bodies]
      --routes grants the routes (stored route ids or names, config route names) the key may name
      in x-gateway-config besides model aliases; any other is refused with 403 route_not_allowed.
      without --credential the provider key comes from stdin with --stdin, else GATEWAY_PROVIDER_KEY,
      else (at a terminal) a prompt that does not echo. The new key is shown once.
  keys update <id> [--name <name>] [--credential <id> | --stdin] [--custom-host <url>] [--policy <name>]
        [--budget-usd <n>] [--budget-period total|day|month] [--rpm <n>] [--rpd <n>] [--users a,b]
        [--models a,b] [--routes a,b] [--expires-at <iso time>] [--log-bodies | --no-log-bodies]
      changes the fields given and keeps the others (limits too); none removes one (--rpm none,
      --policy none; --routes replaces the granted routes whole, --routes none removes them).
      --stdin reads a new provider key; the key's value and id do not change.
  keys list
  keys get <id>        (also: keys show <id>)
  keys usage <id>
  keys rotate <id>     a new key value, shown once; the old one is refused from then on
  keys delete <id>

The commands work on the store directly (the same validation as the admin API); with the embedded
store a running gateway sees a change within 30 s.`,
  credentials: `usage: llm-gateway credentials <action> [options]

  credentials create --name <name> [--provider <id>] [--stdin] [--json]
      the secret comes from stdin with --stdin, else GATEWAY_PROVIDER_KEY, else (at a terminal) a
      prompt that does not echo. With --json, stdin is {"api_key": "...", "fields": {...}} (a structured
      credential) and the output is JSON.
  credentials list
  credentials rotate <id> [--stdin] [--json]
      replaces the stored secret and keeps the id, so the keys and routes using the credential go on
      working with the new secret; it comes as for create (with --json, stdin is {"api_key": ...}).
  credentials delete <id>`,
  routes: `usage: llm-gateway routes check <file.json | -> [--json]
       llm-gateway routes list | show <id or name> | versions <id or name> [--json]

check: checks a route (the x-gateway-config shape: strategy, targets, retry, …) with the gateway's
own validator, and that every provider it names is configured; - reads it from stdin. Errors name
the field by its path (route.targets[1].weight). Exits 1 when the route is refused.
list, show, versions: the stored routes of the admin API (/admin/routes), read from the state store
(the data dir, or Redis with REDIS_URL); versions lists every version, oldest first.`,
  org: `usage: llm-gateway org recover --email <email> [--json]

Makes the user with that email an active owner (creating the user when none has it) and prints a
one-time sign-in link valid for an hour: the way back in when every owner is locked out, including
with auth.accountKey: 'disabled'. Run it on the host, with the gateway's data dir (or REDIS_URL).`,
  import: `usage: llm-gateway import portkey <config.json> [--name <route name>] [--json]
       llm-gateway import litellm <config.yaml> [--json]

portkey: stores a Portkey config (nested targets included) as a route, named --name (default: the
file's name); api_key and AWS keys become stored credentials.
litellm: turns a LiteLLM proxy config's model_list into credentials, one route per model group
(load-balanced by router_settings.routing_strategy, with num_retries, timeouts and fallbacks) and a
model alias of the group's name; os.environ/ values are read from the environment now.
Both write where the running gateway reads (the data dir, or Redis with REDIS_URL), replace a stored
route of the same name, print what was stored and every field that could not be carried over (never
a secret), and exit 0 when something was imported.`,
  'rotate-master-key': `usage: llm-gateway rotate-master-key [--json]

Re-wraps every stored data key under a new master key, record by record, while gateways keep
serving. With the data-dir key file a new key is added; with GATEWAY_MASTER_KEY put the new key
first (new,old) before running it. Progress is reported on stderr.`,
  'reset-account-key': `usage: llm-gateway reset-account-key [--json]

Replaces the data dir's account API key with a new one, printed once; the previous key stops
working when the gateway next starts. Refused while GATEWAY_API_KEY is set.`,
  audit: `usage: llm-gateway audit verify | export [--json]

verify: recomputes the audit trail's hash chain (the store the gateway writes: the data dir's
audit.db, or the log's PostgreSQL schema with DATABASE_URL) from its start, or from the anchor the
last retention recorded. Exits 0 when it is whole, printing the count and the last seq and hash
(note them: removing the newest events is seen only against a head noted earlier); exits 1 printing
the seq and id of the first event that was changed, removed or inserted (or, with "error:",
why the store could not be read).
export: writes every event, oldest first, one JSON object per line, to stdout.`,
  doctor: `usage: llm-gateway doctor [--config <file>] [--json]

Checks, and prints as a checklist: the Node version, the data dir's modes (0700 for the directory,
0600 for its files), Redis (REDIS_URL) and PostgreSQL (DATABASE_URL) when set, the master key
(it must open the stored vault) and the config file (it loads and validates). Exits 1 when a
check fails.`,
};

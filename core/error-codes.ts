import { errorTypeForStatus } from './errors.js';

/** One error code the gateway itself sends in `error.code`. */
export interface ErrorCodeEntry {
  /** The HTTP statuses it comes with (several when different paths meet the same condition). */
  readonly status: readonly number[];
  /** `error.type` when it is not the one {@link errorTypeForStatus} gives the status. */
  readonly type?: string;
  /** When it happens and what to do, for operators and client authors. */
  readonly when: string;
}

/**
 * The codes of the gateway's own errors (`core/errors.ts` builds them), by area. docs/errors.md is
 * generated from this table (`npm run docs:errors`); test/docs/error-catalogue.test.ts fails when a
 * code the source sends is missing here, when its status differs, or when docs/errors.md is stale.
 * An upstream's own error keeps the upstream's code and adds `provider`.
 */
export const ERROR_CODES: Readonly<Record<string, Readonly<Record<string, ErrorCodeEntry>>>> = {
  'Authentication and access': {
    missing_api_key: { status: [401, 400], when: 'No `x-gateway-api-key` (nor a gateway key as the Bearer token where one is accepted); 400 when the dashboard sign-in body has no `api_key`.' },
    invalid_api_key: { status: [401], when: 'The `x-gateway-api-key` is neither the account key nor a live virtual key, or the admin API got a key that is not the account key.' },
    invalid_jwt: { status: [401], when: "A bearer JWT of a configured issuer (`auth.jwt`) did not verify: signature, key (one its issuer does not publish), algorithm (asymmetric only; never `none` or HMAC), audience, expiry or not-before; the message says which (docs/sso.md)." },
    jwt_not_mapped: { status: [401], when: 'A bearer JWT verified, but no service account or mapping rule of the gateway maps its claims to a caller.' },
    jwt_keys_unavailable: { status: [502], type: 'upstream_error', when: "The signing keys of a JWT's issuer could not be fetched (its JWK Set or discovery document is unreachable or malformed); retried at most every 30 s." },
    too_many_failed_auth: { status: [429], when: 'Too many failed authentications from one client address (or from all together) in the window: further wrong keys get 429 until `Retry-After`; a valid key keeps working.' },
    invalid_authorization: { status: [401], when: 'The `Authorization` header is not `Bearer <token>`.' },
    virtual_key_expired: { status: [401], when: 'The virtual key is past its `expires_at`; rotate it or create a new one.' },
    credential_missing: { status: [401], when: "The virtual key's stored credential was deleted; re-point the key (`keys update --credential`)." },
    credential_exchange_refused: { status: [401], when: "The provider's token endpoint refused to exchange the credential (an API key it does not know, or revoked): check the credential (docs/writing-a-provider.md \"Credentials exchanged before use\")." },
    missing_provider_credentials: { status: [401], when: 'A provider that needs a credential got none: send `Authorization: Bearer <provider key>` or use a virtual key.' },
    admin_forbidden: { status: [403], when: 'A virtual key was sent to the admin API, which takes only the account key.' },
    permission_denied: { status: [403], when: "The admin caller's role (or token) lacks the permission the route or the object needs, or the change would grant more than the caller holds; the message names the permission or the rule." },
    user_suspended: { status: [401], when: "The admin session's or token's user is suspended or was removed; an administrator can reactivate it." },
    token_expired: { status: [401], when: 'The personal access token or service account token is past its expiry; create a new one.' },
    account_key_disabled: { status: [401], when: 'The account key is turned off for the admin API and the dashboard (`auth.accountKey: "disabled"`, and an owner user exists); sign in as a user.' },
    provider_not_allowed: { status: [403], when: "The key's team may not use this provider (the team's `allowed_providers`)." },
    csrf_token_invalid: { status: [403], when: "A dashboard request that changes state lacks the session's CSRF token." },
    inline_route_forbidden: { status: [403], when: 'A virtual key sent a JSON route in `x-gateway-config`; only the account key may; name a stored route instead.' },
    route_not_allowed: {
      status: [403],
      when: "A virtual key named in `x-gateway-config` a route that is neither its own `route` nor in its `allowed_routes`, or a name no route has (the two are not told apart); grant the route with `allowed_routes` (`keys update --routes`). Model aliases need no grant.",
    },
    mcp_not_granted: { status: [403], when: 'An MCP `initialize` (or any MCP request) from a key without an `mcp` grant (its own or its team\'s), or from the account key, which holds none; also a Responses request with an `mcp` tool from a caller that is not a virtual key. Grant servers with `PATCH /admin/virtual-keys/{id}` or `PATCH /admin/teams/{id}` `{ "mcp": { "servers": { … } } }` (docs/mcp.md).' },
    mcp_only_key: { status: [403], when: 'A model request with a virtual key that has an MCP grant and no provider or route: such a key serves `/mcp` only.' },
    passthrough_not_judged: { status: [403], when: "A pass-through request under a guardrail policy that cannot judge it; use a unified operation or set `passthrough: 'allow-unjudged'` on the policy." },
    host_not_pinned: { status: [400], when: "A stored credential fixes the upstream host, and the request's headers tried to choose it." },
    provider_mismatch: { status: [400], when: '`x-gateway-provider` names another provider than the one the virtual key is bound to.' },
    custom_host_not_allowed: { status: [400], when: "`x-gateway-custom-host` with a virtual key whose target is fixed." },
    custom_host_refused: { status: [400], when: '`x-gateway-custom-host` is refused: not an http(s) URL, credentials or a query in it, a name that does not resolve, or an address the `customHosts` policy refuses (private ranges unless `allowPrivate` or `allowCidrs`, cloud metadata addresses always).' },
    header_not_forwardable: { status: [400], when: '`x-gateway-forward-headers` names a header that may not be forwarded (hop-by-hop, gateway headers, cookies unless allowed).' },
    gateway_key_not_forwardable: {
      status: [400],
      when: 'A header that would go upstream holds a gateway key (the account key or a `vk-…` value): `Authorization` next to `x-gateway-api-key` (it would be the provider credential), or a header named in `x-gateway-forward-headers`; `param` names the header. Send the gateway key in `x-gateway-api-key` only and the provider\'s own token in `Authorization`.',
    },
  },
  'Limits and budgets': {
    budget_exceeded: { status: [403], when: "A budget that applies (the key's, its team's, its user's, the organization's, an end user's or a tag's) is spent for its period, or this request's estimate is more than is left; `error.budget` names the level and tells spent, reserved and reset (docs/limits.md#levels)." },
    model_not_priced: { status: [403], when: 'A key with a budget asked for a model the gateway has no price for; add one under `pricing.models` (or `pricing.unknownModel`).' },
    model_not_allowed: { status: [403], when: "The request's model is not in the key's `allowed_models`." },
    user_not_allowed: { status: [403], when: "The request's `user` is not in the key's `allowed_users`." },
    rate_limit_exceeded: { status: [429], when: "A requests-per-minute or per-day limit of a level that applies (`error.budget.level`) is reached; wait for `Retry-After`." },
    tokens_per_minute_exceeded: { status: [429], when: "A tokens-per-minute limit of a level that applies is reached (or this request's estimate alone exceeds it: lower `max_tokens`); wait for `Retry-After`." },
    too_many_concurrent_requests: { status: [429], when: "A level that applies has `max_concurrent` requests in flight; retry once one ends (`Retry-After: 1`)." },
    quota_wait_exceeded: { status: [429], when: "A provider's `quota` (on the stored credential or route target) had no room within the team's share for `max_wait_ms` (default 5000); wait for `Retry-After` (docs/limits.md)." },
    quota_queue_full: { status: [429], when: "As many requests as `quota.maxQueue` (default 1000) already wait for this provider quota on this instance; wait for `Retry-After`." },
    too_many_tails: { status: [429], when: 'Too many live log tails are open on this instance; close one.' },
    overloaded: { status: [503], type: 'overloaded_error', when: "The gateway holds as much request and answer data in memory as it is configured to (`GATEWAY_MEMORY_BUDGET_MB`); retry after `Retry-After`." },
  },
  'Requests the gateway cannot take': {
    invalid_value: { status: [400], when: 'A field of the body (or of an admin record) has a value the schema refuses; `param` names it.' },
    invalid_type: { status: [400], when: 'A content field has the wrong type (a string or an array of parts was expected).' },
    invalid_json: { status: [400], when: 'The body is not valid JSON, or not a JSON object where one is needed.' },
    invalid_header: { status: [400], when: 'A gateway header (`x-gateway-cache`, `x-gateway-request-timeout`, `x-gateway-trace-id`, …) has a value it does not take.' },
    invalid_metadata: { status: [400], when: '`x-gateway-metadata` is not a flat JSON object of short strings.' },
    invalid_query: { status: [400], when: 'A query parameter of an admin endpoint is missing or out of range.' },
    invalid_path: { status: [400], when: 'The request path is not accepted (encoded separators, dot segments, control characters).' },
    invalid_content_type: { status: [400], when: 'An operation that takes multipart/form-data got another body.' },
    invalid_multipart: { status: [400], when: 'The multipart body is malformed (no boundary end, too many parts, bad part headers).' },
    field_too_large: { status: [400], when: 'A multipart form field (not a file) is longer than the limit.' },
    invalid_region: { status: [400], when: 'The region header is not an AWS region name.' },
    missing_provider: { status: [400], when: 'No `x-gateway-provider` (nor a virtual key or route that names one).' },
    unknown_provider: { status: [400], when: '`x-gateway-provider` (or a route target) names a provider that is not configured; the message lists the known ones.' },
    missing_required_header: { status: [400], when: 'A provider needs a header the request lacks (the Azure resource or deployment, …).' },
    missing_required_parameter: { status: [400], when: 'A field the provider needs is missing (a tool message without `tool_call_id`, …).' },
    unsupported_parameter: { status: [400], when: 'A field or content part the chosen provider cannot take.' },
    unsupported_content: { status: [400], when: 'Content the provider cannot fetch by URL; send the bytes (base64).' },
    unsupported_content_part: { status: [400], when: 'A content part type the provider does not accept in chat messages.' },
    unsupported_content_type: { status: [400], when: 'The dashboard sign-in was not sent as application/json.' },
    unsupported_operation: { status: [400], when: 'The provider does not support the operation (embeddings on a chat-only provider, …).' },
    unsupported_signing: { status: [400], when: 'A Bedrock pass-through request cannot be signed with SigV4; use a Bedrock API key or a unified route.' },
    unsupported_tool: { status: [400], when: 'A built-in Responses tool the provider cannot run.' },
    strict_api_compliance: { status: [400], when: "A field outside the OpenAI schema (`thinking`, …) without `x-gateway-strict-api-compliance: false`." },
    guardrail_denied: { status: [400], when: "The guardrail policy refused the request's content; the flagged text is never logged." },
    body_too_large: { status: [413], when: "The body is larger than the gateway's limit (`GATEWAY_MAX_BODY_MB`)." },
    headers_too_large: { status: [400], when: "The request headers are larger than Node's limit." },
    malformed_request: { status: [400], when: 'The request is not valid HTTP/1.1.' },
    body_timeout: { status: [408], when: 'The client stopped sending its body for longer than the idle limit.' },
    request_timeout: { status: [408], when: 'The headers or body did not arrive within the server timeout.' },
    expectation_failed: { status: [417], when: 'An `Expect` header other than `100-continue`.' },
    method_not_allowed: { status: [405], when: 'A pass-through request with a method other than GET, POST, PUT or DELETE; a request to `/mcp` other than GET, POST or DELETE.' },
    client_closed: { status: [499], type: 'client_closed_request', when: 'The client went away before the answer was complete; only ever logged (at info level), never sent.' },
  },
  Routing: {
    unknown_route: { status: [400], when: '`x-gateway-config` from the account key (or a key\'s own `route`) names no route; the CLI `routes list` shows them. A virtual key naming one gets 403 `route_not_allowed`.' },
    invalid_route: { status: [400], when: 'A route (stored or inline) fails validation; `param` is the path of the field (`route.targets[1].weight`).' },
    no_route_match: { status: [400], when: 'No condition of a conditional route matches and it has no default target.' },
    unknown_credential: { status: [400], when: 'A route target names a stored credential that does not exist.' },
    unknown_virtual_key: { status: [400], when: 'A route target names a virtual key that does not exist or is not bound to a provider.' },
    no_healthy_target: { status: [503], type: 'service_unavailable_error', when: "Every target of the route has an open circuit breaker; retry after `Retry-After`." },
  },
  'Not found and conflicts (admin API)': {
    route_not_found: { status: [404], when: 'No gateway endpoint at this path, no stored route with this id (or one of a team the caller cannot see, also when a key names it: `param` says where), or no dashboard asset of this name.' },
    credential_not_found: { status: [404], when: 'No stored credential with this id (or one of a team the caller cannot see), also when a key or a route target names it (`param` says where).' },
    virtual_key_not_found: { status: [404], when: 'No virtual key with this id.' },
    model_alias_not_found: { status: [404], when: 'No model alias of this name.' },
    team_not_found: { status: [404], when: 'No team with this id, or one the caller cannot see (another team is answered as if it did not exist).' },
    user_not_found: { status: [404], when: 'No user with this id (or not a member of the team named).' },
    service_account_not_found: { status: [404], when: 'No service account with this id, or one of a team the caller cannot see.' },
    token_not_found: { status: [404], when: 'No personal access token with this id among the ones the caller may revoke.' },
    mcp_tool_not_found: { status: [404], when: '`POST /admin/mcp-servers/{id}/tools/{tool}/approve` names a tool the server does not list (now).' },
    mcp_server_not_found: { status: [404], when: 'No stored MCP server with this id (admin API), or `/mcp/<server>` (or a Responses `mcp` tool\'s `server_label`, `param` naming it) names a server that does not exist or that the key may not reach (the two are not told apart).' },
    log_not_found: { status: [404], when: 'No request log entry with this id.' },
    not_found: { status: [404], when: 'No stored Responses answer with this id (or it belongs to another key).' },
    previous_response_not_found: { status: [404], when: '`previous_response_id` names no stored answer this caller may read.' },
    duplicate_name: { status: [409], type: 'conflict_error', when: 'Another virtual key, route, MCP server, team, service account (in its team) or user (by email) already has this name.' },
    credential_in_use: { status: [409], type: 'conflict_error', when: 'Deleting a credential that keys or routes still use; re-point them first.' },
    virtual_key_in_use: { status: [409], type: 'conflict_error', when: 'Deleting a virtual key that a route names as a target.' },
    route_in_use: { status: [409], type: 'conflict_error', when: 'Deleting a route that keys or model aliases still name.' },
    team_not_empty: { status: [409], type: 'conflict_error', when: 'Deleting a team that still owns keys, credentials, routes or service accounts (or the `default` team, which is never deleted).' },
    user_active: { status: [409], type: 'conflict_error', when: 'A new invitation for a user who already accepted one.' },
  },
  'Batches and files (translated providers)': {
    batch_not_found: { status: [404], when: 'No file or batch the gateway keeps with this id for the calling key (another key\'s is not found either); docs/batches.md.' },
    batch_provider_mismatch: { status: [400], when: 'The file or batch belongs to another provider than the request names; send it with the provider it was made for.' },
    invalid_batch: { status: [400], when: 'A batch request the gateway cannot take for a translated provider: no `input_file_id`, an endpoint the provider does not batch, a `completion_window` other than `24h`, bad `metadata`, a form without its `file`, a bad list `limit`.' },
    invalid_file_purpose: { status: [400], when: 'A file for a translated provider was uploaded with another purpose than `batch`.' },
    batch_storage_missing: { status: [400], when: 'A Bedrock or Vertex AI batch names no storage location for its job: the S3 location and IAM role (`x-gateway-cloud-c-batch-s3-uri`, `x-gateway-cloud-c-batch-role-arn`), or the Cloud Storage location (`x-gateway-cloud-b-batch-gcs-uri`), as headers, credential fields or plugin params; docs/batches.md.' },
    batch_not_cancellable: { status: [400], when: 'The batch has already ended (completed, failed, expired or cancelled).' },
    batch_failed: { status: [200], type: 'batch_line_error', when: "Not an answer's error: `errors.data[0].code` of a batch the provider failed as a whole (its reason in the message)." },
    batch_expired: { status: [200], type: 'batch_line_error', when: "Not an answer's error: a line of a batch's error file (`error.code`) that the provider did not run before the batch expired." },
    batch_cancelled: { status: [200], type: 'batch_line_error', when: "Not an answer's error: a line of a batch's error file that was not run because the batch was cancelled." },
    batch_line_missing: { status: [200], type: 'batch_line_error', when: "Not an answer's error: a line of a batch's error file that the provider's results did not include." },
  },
  'Upstream failures': {
    upstream_unreachable: { status: [502], type: 'upstream_error', when: 'The provider could not be reached (DNS, connection refused, TLS).' },
    upstream_timeout: { status: [504], type: 'timeout_error', when: 'The provider did not answer (or finish answering) within the timeout (`x-gateway-request-timeout`, the route\'s `request_timeout`).' },
    upstream_reset: { status: [502], type: 'upstream_error', when: 'The provider reset the connection during its answer.' },
    upstream_truncated: { status: [502], type: 'upstream_error', when: 'The provider closed the connection before its answer was complete.' },
    upstream_error: { status: [502], type: 'upstream_error', when: 'Another failure talking to the provider.' },
    credential_exchange_failed: { status: [502], type: 'upstream_error', when: "The provider's token endpoint, where the credential is exchanged before use, could not be reached, failed or answered without a token." },
    upstream_invalid_json: { status: [502], type: 'upstream_error', when: 'The provider answered with a body that is not JSON.' },
    upstream_invalid_response: { status: [502], type: 'upstream_error', when: 'The provider answered with JSON the gateway cannot map.' },
    upstream_response_too_large: { status: [502], type: 'upstream_error', when: 'The provider answered with more bytes than the gateway reads into memory.' },
    upstream_stream_error: { status: [502], type: 'upstream_error', when: 'The provider answered a stream with an error before its first chunk.' },
    upstream_generation_failed: { status: [502], type: 'upstream_error', when: 'The provider ended the generation with a failure reason.' },
    stream_incomplete: { status: [200], type: 'upstream_error', when: 'The provider stream ended early; sent as an error event inside a stream already answered 200.' },
    cache_miss: { status: [504], type: 'cache_miss_error', when: '`x-gateway-cache: only-if-cached` and the cache holds no answer.' },
  },
  'Realtime sessions (sent as `error` events inside an open session; the upgrade itself is refused with the codes above)': {
    session_expired: { status: [101], when: 'The Realtime session reached `realtime.maxSessionMs`; the gateway closes it with 1008 after this event.' },
    session_idle_timeout: { status: [101], when: 'No message went either way for `realtime.idleTimeoutMs`; the gateway closes the session with 1008 after this event.' },
    upstream_closed: { status: [101], type: 'server_error', when: 'The provider closed the Realtime session without a normal close (a dropped connection); the gateway closes the client with 1011 after this event.' },
    frame_too_large: { status: [101], when: 'A WebSocket message passed `realtime.maxFrameBytes`; the side that sent it is closed with 1009 and the session ends (recorded in the log entry).' },
  },
  'Gateway faults': {
    internal_error: { status: [500], type: 'api_error', when: 'An unexpected failure; the log line has the details (never the client).' },
    credential_tampered: { status: [500], type: 'api_error', when: 'A stored credential failed its integrity check (altered, or sealed under another master key) and was not used; restore `gateway.sqlite` and `master.key` from the same backup (docs/operations.md).' },
    master_key_unavailable: { status: [500], type: 'api_error', when: 'Storing a secret needs the master key a rotation made current, and this instance does not hold it: give every instance the same `GATEWAY_MASTER_KEY` (or `master.key`), then restart it.' },
    state_unavailable: {
      status: [503],
      type: 'service_unavailable_error',
      when: 'The shared state (Redis) could not answer: the node holding what the request needs is failing over or unreachable. The request was not served and is not charged; retry after `Retry-After` (docs/deployment.md, "During a failover").',
    },
    guardrail_policy_missing: { status: [500], type: 'api_error', when: "The key's guardrail policy was removed from the configuration; the request is refused rather than served unguarded." },
  },
};

const cell = (text: string): string => text.replaceAll('|', '\\|');

/** docs/errors.md, generated from {@link ERROR_CODES}. */
export function renderErrorCatalogue(): string {
  const lines = [
    '# Error codes',
    '',
    '<!-- Generated from core/error-codes.ts by `npm run docs:errors`; do not edit by hand. -->',
    '',
    'Every error the gateway sends is OpenAI-shaped: `{"error": {"message", "type", "param", "code"}}`',
    '(an upstream\'s own error keeps its status and code and adds `provider`). These are the gateway\'s',
    'own codes. docs/troubleshooting.md walks through the common ones.',
  ];
  for (const [area, codes] of Object.entries(ERROR_CODES)) {
    lines.push('', `## ${area}`, '', '| code | status | type | when |', '|---|---|---|---|');
    for (const [code, entry] of Object.entries(codes)) {
      const type = entry.type ?? errorTypeForStatus(entry.status[0]);
      lines.push(`| \`${code}\` | ${entry.status.join(', ')} | \`${type}\` | ${cell(entry.when)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

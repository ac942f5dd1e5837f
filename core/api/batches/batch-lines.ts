import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors.js';
import type { BatchLineResult, BatchUpstreamLine } from '../../spec/batches.js';
import { isRecord } from '../../spec/is-record.js';
import type { ProviderPlugin, ProviderTarget } from '../../spec/provider.js';
import type { ChatRequest, ChatResponse, ErrorBody, Usage } from '../../spec/unified.js';
import { validateChatRequest } from '../chat-schema.js';

/** One problem of a batch's input, in OpenAI's `errors.data` shape (`line` from 1). */
export interface BatchInputError {
  readonly code: string;
  readonly message: string;
  readonly param: string | null;
  readonly line: number | null;
}

/** A batch's input read and checked: each line's custom id and unified request, or the problems found. */
export interface ParsedBatchInput {
  readonly customIds: string[];
  readonly requests: ChatRequest[];
  readonly errors: BatchInputError[];
}

/** Most problems reported for one input file (the rest are not listed). */
const MAX_REPORTED = 100;

/** The provider's id of line `index`: providers restrict theirs (Anthropic: `^[a-zA-Z0-9_-]{1,64}$`), so the caller's stay with the gateway. */
export const lineId = (index: number): string => `r${index}`;

/**
 * Reads an OpenAI batch input file: one JSON object per line, `{custom_id, method: "POST", url,
 * body}`, `url` the batch's endpoint, custom ids unique, each body a valid chat request (the same
 * checks as `POST /v1/chat/completions`, streaming excluded) that the provider's own `validate`
 * accepts. Every problem is reported with its line, as OpenAI's `validating` step reports them.
 */
export function parseBatchInput(content: string, endpoint: string, provider: ProviderPlugin, limits: { maxLines: number; mixedModels: boolean }): ParsedBatchInput {
  const customIds: string[] = [];
  const requests: ChatRequest[] = [];
  const problems: BatchInputError[] = [];
  const seen = new Set<string>();
  const report = (line: number, code: string, message: string, param: string | null = null) => {
    if (problems.length < MAX_REPORTED) problems.push({ code, message, param, line });
  };
  const texts = content.split('\n');
  if (texts.at(-1)?.trim() === '') texts.pop();
  if (texts.length === 0) report(1, 'empty_file', 'The input file has no lines.');
  if (texts.length > limits.maxLines) report(limits.maxLines + 1, 'too_many_lines', `A batch for the provider "${provider.id}" holds at most ${limits.maxLines} lines.`);
  texts.slice(0, limits.maxLines).forEach((text, index) => {
    const line = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return report(line, 'invalid_json_line', 'This line is not valid JSON.');
    }
    if (!isRecord(value)) return report(line, 'invalid_json_line', 'This line is not a JSON object.');
    const customId = value.custom_id;
    if (typeof customId !== 'string' || customId === '') return report(line, 'missing_required_parameter', 'custom_id must be a non-empty string.', 'custom_id');
    if (seen.has(customId)) return report(line, 'duplicate_custom_id', `The custom_id "${customId.slice(0, 64)}" is used by an earlier line.`, 'custom_id');
    seen.add(customId);
    if (value.method !== 'POST') return report(line, 'invalid_method', 'method must be "POST".', 'method');
    if (value.url !== endpoint) return report(line, 'mismatched_url', `url must be the batch's endpoint, "${endpoint}".`, 'url');
    if (!isRecord(value.body)) return report(line, 'invalid_request', 'body must be a JSON object.', 'body');
    if (value.body.stream === true) return report(line, 'invalid_request', 'A batch line cannot stream.', 'body.stream');
    try {
      const request = validateChatRequest(value.body, true);
      provider.operations.chat?.validate?.(request);
      if (!limits.mixedModels && requests.length > 0 && request.model !== requests[0].model) {
        return report(line, 'mismatched_model', `Every line of a batch for the provider "${provider.id}" must name one model ("${requests[0].model}").`, 'body.model');
      }
      customIds.push(customId);
      requests.push(request);
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      report(line, error.body.code ?? 'invalid_request', error.body.message, error.body.param ? `body.${error.body.param}` : 'body');
    }
  });
  return { customIds, requests, errors: problems };
}

/** Each line mapped by the provider's chat adapter, as for a single call; a line it refuses is reported. */
export function mapBatchLines(requests: readonly ChatRequest[], provider: ProviderPlugin, target: ProviderTarget): { lines: BatchUpstreamLine[]; errors: BatchInputError[] } {
  const lines: BatchUpstreamLine[] = [];
  const problems: BatchInputError[] = [];
  requests.forEach((request, index) => {
    try {
      lines.push({ customId: lineId(index), request, upstream: provider.operations.chat!.toUpstream(request, target) });
    } catch (error) {
      if (!(error instanceof GatewayError)) throw error;
      if (problems.length < MAX_REPORTED) problems.push({ code: error.body.code ?? 'invalid_request', message: error.body.message, param: error.body.param ? `body.${error.body.param}` : 'body', line: index + 1 });
    }
  });
  return { lines, errors: problems };
}

/** The output and error files of an ended batch, and what ran (for the charge and the log). */
export interface BatchOutcome {
  readonly output: string[];
  readonly errors: string[];
  readonly summary: { succeeded: number; errored: number; expired: number; cancelled: number };
  /** Each line that ran, with its model and usage. */
  readonly ran: Array<{ model: string; usage?: Usage }>;
}

const requestId = (): string => `batch_req_${randomBytes(12).toString('hex')}`;

const LINE_ERRORS = {
  expired: { code: 'batch_expired', message: 'This line was not run before the batch expired.' },
  cancelled: { code: 'batch_cancelled', message: 'This line was not run: the batch was cancelled.' },
  missing: { code: 'batch_line_missing', message: "The provider's results did not include this line." },
} as const;

/**
 * The provider's line results as OpenAI's output file (one `{id, custom_id, response: {status_code,
 * request_id, body}, error: null}` per succeeded line, its body mapped by the chat adapter) and error
 * file (an errored line with its status and error body; an expired, cancelled or missing one with
 * `response: null` and an `error` code), in input order.
 */
export function batchOutcome(
  results: readonly BatchLineResult[],
  input: { customIds: readonly string[]; requests: readonly ChatRequest[] },
  provider: ProviderPlugin,
  target: ProviderTarget,
  providerBatchId: string,
  /** What a line the results leave out became: the batch expired or was cancelled before it ran, or it is missing. */
  unreported: 'expired' | 'cancelled' | 'missing' = 'missing',
): BatchOutcome {
  const byId = new Map(results.map((result) => [result.customId, result]));
  const outcome: BatchOutcome = { output: [], errors: [], summary: { succeeded: 0, errored: 0, expired: 0, cancelled: 0 }, ran: [] };
  input.requests.forEach((request, index) => {
    const result = byId.get(lineId(index));
    const custom_id = input.customIds[index];
    const request_id = `${providerBatchId}:${lineId(index)}`;
    if (result?.kind === 'succeeded') {
      let body: ChatResponse;
      try {
        body = provider.operations.chat!.fromUpstream(result.body, request, target);
      } catch {
        const error: ErrorBody = { message: `The provider "${provider.id}" answered this line with a body the gateway could not read.`, type: 'upstream_error', param: null, code: 'upstream_invalid_response' };
        outcome.errors.push(JSON.stringify({ id: requestId(), custom_id, response: { status_code: 502, request_id, body: { error } }, error: null }));
        outcome.summary.errored++;
        return;
      }
      outcome.summary.succeeded++;
      outcome.ran.push({ model: body.model || request.model, ...(body.usage ? { usage: body.usage } : {}) });
      outcome.output.push(JSON.stringify({ id: requestId(), custom_id, response: { status_code: 200, request_id, body }, error: null }));
    } else if (result?.kind === 'errored') {
      outcome.summary.errored++;
      outcome.errors.push(JSON.stringify({ id: requestId(), custom_id, response: { status_code: result.status, request_id, body: { error: { ...result.error, provider: provider.id } } }, error: null }));
    } else {
      const kind = result === undefined ? unreported : result.kind;
      if (kind === 'cancelled') outcome.summary.cancelled++;
      else if (kind === 'expired') outcome.summary.expired++;
      else outcome.summary.errored++;
      outcome.errors.push(JSON.stringify({ id: requestId(), custom_id, response: null, error: LINE_ERRORS[kind] }));
    }
  });
  return outcome;
}

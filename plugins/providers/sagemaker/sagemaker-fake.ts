import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFakeRenderer, ReceivedRequest, RenderedAnswer, Scenario } from '../../../core/spec/index.js';
import { encodeMessage } from '../../shared/aws-eventstream/eventstream.js';
import { verifySigV4 } from '../../shared/aws-sigv4/verify.js';
import type { CompatibleProviderManifest } from '../openai-compatible/index.js';
import { compatibleFake } from '../openai-compatible/openai-compatible-fake.js';
import { SAGEMAKER_CHAT_QUIRKS } from './sagemaker-chat.js';

const fixtures = join(process.cwd(), 'plugins/providers/sagemaker/__fixtures__');

export const sageMakerFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

/** The cloud credentials and endpoint the conformance subject sends; the fake checks the signature with them. */
export const FAKE_SECRET_ACCESS_KEY = 'conformance/SageMaker+Secret/Key000000000';
export const FAKE_SESSION_TOKEN = 'conformance-sagemaker-session-token';
export const FAKE_REGION = 'eu-west-1';
export const FAKE_ENDPOINT = 'llama-3-1-8b-instruct-tgi';

/** One `PayloadPart` frame: its payload is raw bytes of the container's stream. */
export const payloadPart = (bytes: Uint8Array): Buffer => encodeMessage({ ':event-type': 'PayloadPart', ':content-type': 'application/octet-stream', ':message-type': 'event' }, bytes);

/** A modelled exception frame (`ModelStreamError`, `InternalStreamFailure`). */
export const streamException = (type: string, body: Record<string, unknown>): Buffer =>
  encodeMessage({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, JSON.stringify(body));

/** A byte stream cut into PayloadParts of `size` bytes, wherever that falls (inside a line, inside a character). */
export function payloadParts(stream: Uint8Array, size = 9): Buffer[] {
  const parts: Buffer[] = [];
  for (let offset = 0; offset < stream.length; offset += size) parts.push(payloadPart(stream.subarray(offset, offset + size)));
  return parts;
}

/** The container's wire: OpenAI's shapes as TGI's Messages API speaks them (one choice, usage when asked). */
const wire: CompatibleProviderManifest = { id: 'sagemaker', name: 'SageMaker', description: 'fake', baseUrl: 'http://unused', operations: ['chat'], auth: { kind: 'bearer' }, chat: SAGEMAKER_CHAT_QUIRKS };
const ERROR_TYPE: Record<number, string> = { 400: 'ValidationError', 401: 'UnrecognizedClientException', 403: 'AccessDeniedException', 404: 'ValidationError', 429: 'ThrottlingException', 500: 'InternalFailure', 503: 'ServiceUnavailable' };
const JSON_TYPE = { 'content-type': 'application/json' };
const ENDPOINT_PATH = /\/endpoints\/([^/]+)\/(invocations|invocations-response-stream)$/;

const failure = (status: number, message: string, retryAfter?: string): RenderedAnswer => ({
  status,
  headers: { ...JSON_TYPE, 'x-amzn-errortype': `${ERROR_TYPE[status] ?? 'InternalFailure'}:http://internal.amazon.com/coral/com.amazon.sagemaker/`, ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) },
  chunks: [JSON.stringify({ Message: message })],
});

/** The received body as the container sees it, with the model name TGI reports (SageMaker sends no model). */
function asContainer(request: ReceivedRequest): ReceivedRequest | RenderedAnswer {
  const body = JSON.parse(request.body.toString('utf8')) as Record<string, unknown>;
  if ('model' in body) return failure(400, 'The endpoint is the model: the gateway must not send "model".');
  if (!Array.isArray(body.messages)) return failure(424, 'Received client error (422) from primary: the container expects "messages".');
  return { ...request, body: Buffer.from(JSON.stringify({ ...body, model: 'tgi' })) };
}

/**
 * SageMaker Runtime in front of a TGI container with its Messages API, faked: SigV4 (service
 * `sagemaker`), the endpoint in the path, `/invocations` answering the container's JSON and
 * `/invocations-response-stream` its SSE bytes cut into eventstream `PayloadPart`s; errors as
 * `{Message}` with `x-amzn-errortype`.
 */
export function sageMakerFake(): ProviderFakeRenderer {
  const inner = compatibleFake(wire);
  return {
    ...inner,
    classify(request) {
      const match = ENDPOINT_PATH.exec(request.url.split('?')[0]);
      return match ? { operation: 'chat', stream: match[2] === 'invocations-response-stream' } : { operation: 'other', stream: false };
    },
    render(scenario: Scenario, request, stream) {
      const match = ENDPOINT_PATH.exec(request.url.split('?')[0]);
      if (!match) return failure(404, `no route for ${request.url}`);
      if (match[1] !== FAKE_ENDPOINT) return failure(400, `Endpoint ${match[1]} of account 123456789012 not found.`);
      if (scenario.kind === 'error') return failure(scenario.status, scenario.message, scenario.retryAfter);
      const container = asContainer(request);
      if ('status' in container) return container;
      const answer = inner.render(scenario, container, stream);
      if (!stream || answer.status !== 200) return answer;
      const bytes = Buffer.concat(answer.chunks.map((chunk) => Buffer.from(chunk)));
      return { status: 200, headers: { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-sagemaker-content-type': 'text/event-stream' }, chunks: payloadParts(bytes) };
    },
    checkAuth: (request, credential) =>
      verifySigV4(request, { accessKeyId: credential, secretAccessKey: FAKE_SECRET_ACCESS_KEY, sessionToken: FAKE_SESSION_TOKEN }, { region: FAKE_REGION, service: 'sagemaker' }),
  };
}

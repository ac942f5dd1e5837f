import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ImageScenario, multipartParts, type ProviderFakeRenderer, type ReceivedRequest, type RenderedAnswer, type Scenario } from '../../../core/spec/index.js';

const fixtures = join(process.cwd(), 'plugins/providers/stability-ai/__fixtures__');

export const stabilityFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

const JSON_TYPE = { 'content-type': 'application/json' };
const ASPECT_RATIOS = new Set(['16:9', '1:1', '21:9', '2:3', '3:2', '4:5', '5:4', '9:16', '9:21']);
const FORMATS = new Set(['png', 'jpeg', 'webp']);
const NAME_BY_STATUS: Record<number, string> = { 400: 'bad_request', 401: 'unauthorized', 403: 'content_moderation', 404: 'not_found', 413: 'payload_too_large', 429: 'rate_limit_exceeded', 500: 'internal_error' };

const failure = (status: number, messages: string[], retryAfter?: string): RenderedAnswer => ({
  status,
  headers: retryAfter === undefined ? JSON_TYPE : { ...JSON_TYPE, 'retry-after': retryAfter },
  chunks: [JSON.stringify({ id: 'a1b2c3d4e5f60718293a4b5c6d7e8f90', name: NAME_BY_STATUS[status] ?? 'error', errors: messages })],
});

const endpoint = (request: ReceivedRequest) => /\/stable-image\/generate\/(ultra|core|sd3)$/.exec(request.url.split('?')[0])?.[1];

/** What Stability would refuse: another path, a JSON body, no prompt, an unknown format or ratio, sd3 without a model. */
function refusal(request: ReceivedRequest): RenderedAnswer | undefined {
  const path = endpoint(request);
  if (request.method !== 'POST' || !path) return failure(404, [`no route for ${request.method} ${request.url.split('?')[0]}`]);
  const parts = multipartParts(request);
  if (parts.length === 0) return failure(400, ['content-type: must be multipart/form-data']);
  const field = (name: string) => parts.find((part) => part.name === name)?.bytes.toString('utf8');
  if (!field('prompt')) return failure(400, ['prompt: cannot be empty']);
  const format = field('output_format');
  if (format !== undefined && !FORMATS.has(format)) return failure(400, [`output_format: must be one of png, jpeg, webp`]);
  const ratio = field('aspect_ratio');
  if (ratio !== undefined && !ASPECT_RATIOS.has(ratio)) return failure(400, [`aspect_ratio: must be one of ${[...ASPECT_RATIOS].join(', ')}`]);
  if (path === 'sd3' && field('model') === undefined) return failure(400, ['model: required for /generate/sd3 in this fake']);
  for (const name of ['n', 'size', 'response_format']) if (field(name) !== undefined) return failure(400, [`${name}: unknown field`]);
  return undefined;
}

/**
 * Stability AI's stable-image generate endpoints, faked: a multipart form with the key as Bearer;
 * `Accept: application/json` answers `{image, finish_reason, seed}`, `image/*` the bytes; errors as
 * `{id, name, errors}`.
 */
export const stabilityFake: ProviderFakeRenderer = {
  classify: (request) => ({ operation: endpoint(request) ? 'image' : 'other', stream: false }),
  render(scenario: Scenario, request: ReceivedRequest): RenderedAnswer {
    if (scenario.kind === 'error') return failure(scenario.status, [scenario.message], scenario.retryAfter);
    return refusal(request) ?? failure(500, ['the fake answers images only through the image scenario']);
  },
  renderImage(scenario: ImageScenario, request: ReceivedRequest): RenderedAnswer {
    const refused = refusal(request);
    if (refused) return refused;
    const png = Buffer.from(scenario.png);
    if (!(request.headers.accept ?? '').includes('application/json')) return { status: 200, headers: { 'content-type': 'image/png', 'finish-reason': 'SUCCESS', seed: '1050625087' }, chunks: [png] };
    return { status: 200, headers: JSON_TYPE, chunks: [JSON.stringify({ image: png.toString('base64'), finish_reason: 'SUCCESS', seed: 1050625087 })] };
  },
  checkAuth: (request, credential) => (request.headers.authorization === `Bearer ${credential}` ? [] : ['expected "Authorization: Bearer <key>"']),
  roles: () => [],
  stopSequences: () => [],
};

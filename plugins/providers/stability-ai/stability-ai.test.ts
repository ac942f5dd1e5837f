import test from 'ava';
import { GatewayError } from '../../../core/errors.js';
import { multipartParts, type ImageGenerateRequest, type ImageResponse, type ProviderTarget } from '../../../core/spec/index.js';
import { pluginDependencies } from '../../../test/plugin-dependencies.js';
import { mapStabilityError } from './stability-ai-error.js';
import { stabilityFixture } from './stability-ai-fake.js';
import { aspectRatioOf, toStabilityForm } from './stability-ai-images.js';
import { stabilityAI } from './index.js';

const clock = { now: () => 1_764_370_000_000 };
const plugin = stabilityAI().create({ ...pluginDependencies(), clock });
const target: ProviderTarget = { baseUrl: 'https://api.stability.ai/v2beta', customHost: false, headers: {}, credentials: { apiKey: 'sk-stability' }, strict: true };
const request: ImageGenerateRequest = { prompt: 'A lighthouse on a cliff at dawn', model: 'stable-image-core', size: '1792x1024' };
const refusal = (body: ImageGenerateRequest) => (t: { throws: (f: () => unknown, e: object) => unknown }) => (t.throws(() => toStabilityForm(body), { instanceOf: GatewayError }) as GatewayError).body;

test('a request becomes the generate endpoint of its model, as a multipart form asking for JSON', (t) => {
  const upstream = plugin.operations.imageGenerate!.toUpstream(request, target);
  t.is(upstream.url, 'https://api.stability.ai/v2beta/stable-image/generate/core');
  t.is(upstream.headers.accept, 'application/json');
  t.deepEqual(plugin.auth(upstream, target), { authorization: 'Bearer sk-stability' });
  const parts = multipartParts({ method: 'POST', url: '/', headers: { 'content-type': upstream.headers['content-type'] }, body: upstream.body as Buffer });
  t.deepEqual(Object.fromEntries(parts.map((part) => [part.name, part.bytes.toString('utf8')])), { prompt: request.prompt, aspect_ratio: '16:9', output_format: 'png' });
});

test('models pick the endpoint: ultra, core (also for OpenAI names and none), sd3 with the model in the form', (t) => {
  t.is(toStabilityForm({ prompt: 'x', model: 'stable-image-ultra' }).path, '/stable-image/generate/ultra');
  t.is(toStabilityForm({ prompt: 'x' }).path, '/stable-image/generate/core');
  t.is(toStabilityForm({ prompt: 'x', model: 'dall-e-3' }).path, '/stable-image/generate/core');
  t.deepEqual(toStabilityForm({ prompt: 'x', model: 'sd3.5-large', negative_prompt: 'fog', seed: 7 }), {
    path: '/stable-image/generate/sd3',
    fields: { prompt: 'x', model: 'sd3.5-large', output_format: 'png', negative_prompt: 'fog', seed: '7' },
  });
});

test('sizes become the nearest aspect ratio', (t) => {
  t.is(aspectRatioOf('1024x1024'), '1:1');
  t.is(aspectRatioOf('1024x1792'), '9:16');
  t.is(aspectRatioOf('1536x1024'), '3:2');
  t.is(aspectRatioOf('2560x1080'), '21:9');
});

test('what Stability cannot do is refused with a 400 naming the field', (t) => {
  t.like(refusal({ prompt: 'x', n: 2 })(t), { param: 'n', code: 'unsupported_parameter' });
  t.like(refusal({ prompt: 'x', response_format: 'url' })(t), { param: 'response_format' });
  t.like(refusal({ prompt: 'x', model: 'midjourney' })(t), { param: 'model', code: 'invalid_value' });
  t.like(refusal({ prompt: 'x', size: 'big' })(t), { param: 'size' });
  t.like(refusal({ prompt: 'x', output_format: 'gif' })(t), { param: 'output_format' });
});

test("the recorded answers map to OpenAI's image response; a filtered image says so", (t) => {
  const image = JSON.parse(stabilityFixture('generate-core-response.json')) as { image: string };
  t.deepEqual(plugin.operations.imageGenerate!.fromUpstream(image, request, target), { created: 1_764_370_000, data: [{ b64_json: image.image, seed: 1050625087 }] } as unknown as ImageResponse);
  const filtered = plugin.operations.imageGenerate!.fromUpstream(JSON.parse(stabilityFixture('generate-filtered-response.json')), request, target);
  t.is((filtered.data[0] as Record<string, unknown>).finish_reason, 'CONTENT_FILTERED');
});

test("Stability's errors keep their messages and name", (t) => {
  t.deepEqual(mapStabilityError({ status: 400, headers: {}, body: Buffer.from(stabilityFixture('error-400.json')) }), {
    message: 'aspect_ratio: must be one of 16:9, 1:1, 21:9, 2:3, 3:2, 4:5, 5:4, 9:16, 9:21',
    type: 'invalid_request_error',
    param: null,
    code: 'bad_request',
  });
  t.like(mapStabilityError({ status: 403, headers: {}, body: Buffer.from(stabilityFixture('error-403-moderation.json')) }), { code: 'content_moderation', type: 'permission_error' });
});

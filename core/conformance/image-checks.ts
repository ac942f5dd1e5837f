import { type Check, CheckSkipped, expect, routedAs } from './check.js';
import { KIT_ACCOUNT_KEY } from './gateway.js';
import type { ImageScenario } from '../spec/conformance.js';

const show = (value: unknown) => JSON.stringify(value);

/** A 1x1 PNG (one opaque pixel): what the fake provider "made". */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const IMAGE: ImageScenario = { kind: 'image', png: PNG };

let traces = 0;

const images: Check = {
  name: 'images',
  description: "image generation answers the provider's image as b64_json, from one upstream request carrying the provider's credential",
  async run(context) {
    if (!context.plugin.operations.imageGenerate) throw new CheckSkipped('the plugin declares no image generation');
    context.server.scenario = IMAGE;
    const trace = `conformance-image-${process.pid}-${++traces}`;
    const before = context.server.received.length;
    const result = await context.client.images.generate(
      { model: context.subject.imageModel ?? 'dall-e-3', prompt: 'A lighthouse on a cliff at dawn', size: '1024x1024', response_format: 'b64_json' },
      { headers: { 'x-gateway-trace-id': trace } },
    );
    const requests = context.server.received.slice(before);
    expect(requests.length === 1, `the provider received ${requests.length} requests`);
    const problems = context.subject.fake.checkAuth(requests[0], context.credential);
    expect(problems.length === 0, `the image request's credential: ${problems.join('; ')}`);
    const leaked = Object.entries(requests[0].headers).filter(([name, value]) => name.startsWith('x-gateway-') || value?.includes(KIT_ACCOUNT_KEY));
    expect(leaked.length === 0, `gateway headers reached the provider: ${leaked.map(([name]) => name).join(', ')}`);
    expect(result.data?.length === 1, `${result.data?.length ?? 0} images, expected 1`);
    expect(result.data[0].b64_json === PNG.toString('base64'), `b64_json ${show(result.data[0].b64_json?.slice(0, 40))} is not the provider's image`);
    expect(typeof result.created === 'number', `created ${show(result.created)}`);
    const operation = await routedAs(context, trace);
    expect(operation === 'imageGenerate', `POST /v1/images/generations ran as ${operation ?? 'nothing'}, not as the imageGenerate operation`);
  },
};

const imagesUnsupported: Check = {
  name: 'images.unsupported',
  description: 'a plugin without image generation answers POST /v1/images/generations with a 400 naming it, and nothing is sent upstream',
  async run(context) {
    if (context.plugin.operations.imageGenerate) throw new CheckSkipped('the plugin declares image generation');
    const before = context.server.received.length;
    const response = await fetch(`${context.gateway.url}/v1/images/generations`, {
      method: 'POST',
      headers: { ...context.rawHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'dall-e-3', prompt: 'A lighthouse' }),
    });
    const body = (await response.json().catch(() => ({}))) as { error?: { code?: string; message?: string } };
    expect(response.status === 400, `HTTP ${response.status}, expected 400`);
    expect(body.error?.code === 'unsupported_operation', `code ${show(body.error?.code)}, expected "unsupported_operation"`);
    expect(String(body.error?.message).includes(`"${context.plugin.id}"`), `the message ${show(body.error?.message)} does not name the provider`);
    expect(context.server.received.length === before, `the provider received ${context.server.received.length - before} requests`);
  },
};

/** The image generation checks, run after the battery's others. */
export const imageChecks: readonly Check[] = [images, imagesUnsupported];

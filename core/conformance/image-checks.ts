import { type Check, CheckSkipped, expect, routedAs } from './check.js';
import { expectOneCleanRequest, expectRefused, nextTrace, show } from './expectations.js';
import type { ImageScenario } from '../spec/conformance.js';

/** A 1x1 PNG (one opaque pixel): what the fake provider "made". */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');
const IMAGE: ImageScenario = { kind: 'image', png: PNG };

const images: Check = {
  name: 'images',
  description: "image generation answers the provider's image as b64_json, from one upstream request carrying the provider's credential",
  async run(context) {
    if (!context.plugin.operations.imageGenerate) throw new CheckSkipped('the plugin declares no image generation');
    context.server.scenario = IMAGE;
    const trace = nextTrace('image');
    const before = context.server.received.length;
    const result = await context.client.images.generate(
      { model: context.subject.imageModel ?? 'dall-e-3', prompt: 'A lighthouse on a cliff at dawn', size: '1024x1024', response_format: 'b64_json' },
      { headers: { 'x-gateway-trace-id': trace } },
    );
    expectOneCleanRequest(context, context.server.received.slice(before), 'image');
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
    await expectRefused(context, '/v1/images/generations', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'dall-e-3', prompt: 'A lighthouse' }),
    });
  },
};

/** The image generation checks, run after the battery's others. */
export const imageChecks: readonly Check[] = [images, imagesUnsupported];

import test from 'ava';
import { type Fake, startFake } from '../fakes/openai-fake.js';
import { multipartHandler } from '../fakes/multipart-fake.js';
import { makePng } from '../fakes/png.js';
import { gatewayHeaders, startGateway, type TestGateway } from '../harness.js';

let gateway: TestGateway;
let fake: Fake;

test.before(async () => {
  fake = await startFake(multipartHandler);
  gateway = await startGateway();
});
test.after.always(async () => {
  await gateway?.close();
  await fake?.close();
});

const FOUR_MB = 4 * 1024 * 1024;
const rgba = makePng({ width: 64, height: 64, colourType: 6 });
const rgb = makePng({ width: 64, height: 64, colourType: 2 });
const rgbWithTrns = makePng({ width: 64, height: 64, colourType: 2, transparency: true });
const greyAlpha = makePng({ width: 64, height: 64, colourType: 4 });
const wide = makePng({ width: 64, height: 32, colourType: 6 });
const mask32 = makePng({ width: 32, height: 32, colourType: 6 });
const justUnder = makePng({ width: 16, height: 16, colourType: 6, padTo: FOUR_MB - 1 });
const exactly4 = makePng({ width: 16, height: 16, colourType: 6, padTo: FOUR_MB });
const over = makePng({ width: 16, height: 16, colourType: 6, padTo: FOUR_MB + 1 });
const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(200, 1)]);

type Part = string | { bytes: Buffer; name?: string; type?: string };
type Row = [label: string, path: string, parts: Record<string, Part>, param: string];

const edit = (parts: Record<string, Part>) => ({ image: { bytes: rgba }, prompt: 'a hat', ...parts });
const variation = (parts: Record<string, Part>) => ({ image: { bytes: rgb }, ...parts });
const audio = (parts: Record<string, Part>) => ({ file: { bytes: Buffer.from('ID3 fake audio'), name: 'a.mp3' }, model: 'whisper-1', ...parts });
const without = (parts: Record<string, Part>, name: string) => Object.fromEntries(Object.entries(parts).filter(([key]) => key !== name));

const E = '/v1/images/edits';
const V = '/v1/images/variations';
const T = '/v1/audio/transcriptions';
const L = '/v1/audio/translations';

const INVALID: Row[] = [
  ['edit: missing image', E, without(edit({}), 'image'), 'image'],
  ['edit: JPEG bytes named .png', E, edit({ image: { bytes: jpeg, name: 'x.png', type: 'image/png' } }), 'image'],
  ['edit: text named .png', E, edit({ image: { bytes: Buffer.from('not an image at all, just words'), name: 'x.png' } }), 'image'],
  ['edit: image of exactly 4 MB', E, edit({ image: { bytes: exactly4 } }), 'image'],
  ['edit: image of 4 MB + 1 byte', E, edit({ image: { bytes: over } }), 'image'],
  ['edit: non-square image', E, edit({ image: { bytes: wide } }), 'image'],
  ['edit: RGB image without alpha and no mask', E, edit({ image: { bytes: rgb } }), 'image'],
  ['edit: mask of other dimensions', E, edit({ mask: { bytes: mask32 } }), 'mask'],
  ['edit: mask not a PNG', E, edit({ mask: { bytes: jpeg } }), 'mask'],
  ['edit: mask of 4 MB + 1 byte', E, edit({ mask: { bytes: over } }), 'mask'],
  ['edit: missing prompt', E, without(edit({}), 'prompt'), 'prompt'],
  ['edit: empty prompt', E, edit({ prompt: '' }), 'prompt'],
  ['edit: prompt of 1001 characters', E, edit({ prompt: 'p'.repeat(1001) }), 'prompt'],
  ['edit: model dall-e-3', E, edit({ model: 'dall-e-3' }), 'model'],
  ['edit: n 0', E, edit({ n: '0' }), 'n'],
  ['edit: n 11', E, edit({ n: '11' }), 'n'],
  ['edit: n 1.5', E, edit({ n: '1.5' }), 'n'],
  ['edit: n not a number', E, edit({ n: 'two' }), 'n'],
  ['edit: size 1792x1024', E, edit({ size: '1792x1024' }), 'size'],
  ['edit: size 128x128', E, edit({ size: '128x128' }), 'size'],
  ['edit: response_format png', E, edit({ response_format: 'png' }), 'response_format'],
  ['edit: an extra file field', E, edit({ other: { bytes: rgba } }), 'other'],
  ['variation: missing image', V, {}, 'image'],
  ['variation: not a PNG', V, variation({ image: { bytes: jpeg } }), 'image'],
  ['variation: 4 MB + 1 byte', V, variation({ image: { bytes: over } }), 'image'],
  ['variation: non-square', V, variation({ image: { bytes: wide } }), 'image'],
  ['variation: model dall-e-3', V, variation({ model: 'dall-e-3' }), 'model'],
  ['variation: n 0', V, variation({ n: '0' }), 'n'],
  ['variation: n 11', V, variation({ n: '11' }), 'n'],
  ['variation: size 1024x1792', V, variation({ size: '1024x1792' }), 'size'],
  ['variation: response_format jpeg', V, variation({ response_format: 'jpeg' }), 'response_format'],
  ['transcription: missing file', T, without(audio({}), 'file'), 'file'],
  ['transcription: missing model', T, without(audio({}), 'model'), 'model'],
  ['transcription: response_format docx', T, audio({ response_format: 'docx' }), 'response_format'],
  ['transcription: temperature 1.5', T, audio({ temperature: '1.5' }), 'temperature'],
  ['transcription: temperature -0.1', T, audio({ temperature: '-0.1' }), 'temperature'],
  ['translation: missing file', L, without(audio({}), 'file'), 'file'],
  ['translation: missing model', L, without(audio({}), 'model'), 'model'],
];

const VALID: Array<[label: string, path: string, parts: Record<string, Part>]> = [
  ['edit: image of 4 MB - 1 byte', E, edit({ image: { bytes: justUnder } })],
  ['edit: RGBA without mask', E, edit({})],
  ['edit: RGB with a tRNS chunk, no mask', E, edit({ image: { bytes: rgbWithTrns } })],
  ['edit: grey + alpha, no mask', E, edit({ image: { bytes: greyAlpha } })],
  ['edit: RGB with a mask of the same size', E, edit({ image: { bytes: rgb }, mask: { bytes: rgba } })],
  ['edit: prompt of 1000 characters', E, edit({ prompt: 'p'.repeat(1000) })],
  ['edit: n 1, model dall-e-2, every size', E, edit({ n: '1', model: 'dall-e-2', size: '1024x1024' })],
  ['edit: n 10', E, edit({ n: '10', size: '256x256', response_format: 'b64_json' })],
  ['variation: n 1', V, variation({ n: '1' })],
  ['variation: n 10, 512x512', V, variation({ n: '10', size: '512x512' })],
  ['variation: 4 MB - 1 byte', V, variation({ image: { bytes: justUnder } })],
  ['transcription: temperature 0 and 1 edges', T, audio({ temperature: '0' })],
  ['transcription: temperature 1, verbose_json', T, audio({ temperature: '1', response_format: 'verbose_json' })],
  ['translation: text', L, audio({ response_format: 'text' })],
];

function formOf(parts: Record<string, Part>): FormData {
  const form = new FormData();
  for (const [name, part] of Object.entries(parts)) {
    if (typeof part === 'string') form.append(name, part);
    else form.append(name, new Blob([new Uint8Array(part.bytes)], { type: part.type ?? 'image/png' }), part.name ?? `${name}.png`);
  }
  return form;
}

/** Each request carries its own id through `x-gateway-forward-headers`, so "nothing sent upstream" holds while tests run concurrently. */
const send = (path: string, parts: Record<string, Part>, id: string) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: gatewayHeaders(fake.baseUrl, { 'x-test-id': id, 'x-gateway-forward-headers': 'x-test-id' }),
    body: formOf(parts),
  });
const reachedFake = (id: string) => fake.requests.some((request) => request.headers['x-test-id'] === id);

test(`the invalid table has at least 20 rows (${INVALID.length})`, (t) => {
  t.true(INVALID.length >= 20);
});

for (const [label, path, parts, param] of INVALID) {
  test(`400 ${label}`, async (t) => {
    const response = await send(path, parts, label);
    const body = (await response.json()) as { error: { param: string; type: string; message: string } };
    t.is(response.status, 400, JSON.stringify(body));
    t.is(body.error.type, 'invalid_request_error');
    t.is(body.error.param, param);
    t.true(body.error.message.length > 10);
    t.false(reachedFake(label), 'nothing was sent upstream');
  });
}

for (const [label, path, parts] of VALID) {
  test(`accepted: ${label}`, async (t) => {
    const response = await send(path, parts, label);
    t.is(response.status, 200, await response.clone().text());
    await response.arrayBuffer();
    t.true(reachedFake(label));
  });
}

test('a body that is not multipart is refused with 400 naming content-type', async (t) => {
  const response = await fetch(`${gateway.url}${E}`, {
    method: 'POST',
    headers: { ...gatewayHeaders(fake.baseUrl), 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'x' }),
  });
  t.is(response.status, 400);
  t.is(((await response.json()) as { error: { param: string } }).error.param, 'content-type');
});

test('a multipart body cut before its closing boundary is refused with 400', async (t) => {
  const boundary = 'cut-here';
  const response = await fetch(`${gateway.url}${V}`, {
    method: 'POST',
    headers: { ...gatewayHeaders(fake.baseUrl), 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: `--${boundary}\r\nContent-Disposition: form-data; name="n"\r\n\r\n2\r\n--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="a.png"\r\n\r\nxx`,
  });
  t.is(response.status, 400);
  t.is(((await response.json()) as { error: { code: string } }).error.code, 'invalid_multipart');
});

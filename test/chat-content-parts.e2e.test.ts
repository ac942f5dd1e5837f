import test, { type ExecutionContext } from 'ava';
import OpenAI from 'openai';
import config from '../gateway.config.js';
import { anthropicFakeRenderer } from '../plugins/providers/anthropic/anthropic-fake.js';
import { anthropic } from '../plugins/providers/anthropic/index.js';
import { azureOpenAIFake } from '../plugins/providers/azure-openai/azure-openai-fake.js';
import { azureOpenAI } from '../plugins/providers/azure-openai/index.js';
import { bedrockFake, FAKE_REGION, FAKE_SECRET_ACCESS_KEY } from '../plugins/providers/bedrock/bedrock-fake.js';
import { bedrock } from '../plugins/providers/bedrock/index.js';
import { cohereFake } from '../plugins/providers/cohere/cohere-fake.js';
import { cohere } from '../plugins/providers/cohere/index.js';
import { geminiFakeRenderer } from '../plugins/providers/gemini/gemini-fake.js';
import { gemini } from '../plugins/providers/gemini/index.js';
import { groq, groqManifest } from '../plugins/providers/groq/index.js';
import { openai } from '../plugins/providers/openai/index.js';
import { openaiFake } from '../plugins/providers/openai/openai-fake.js';
import { compatibleFake } from '../plugins/providers/openai-compatible/openai-compatible-fake.js';
import { vertexAI } from '../plugins/providers/vertex-ai/index.js';
import { vertexFakeRenderer } from '../plugins/providers/vertex-ai/vertex-ai-fake.js';
import type { ProviderFakeRenderer } from '../core/conformance/index.js';
import type { LogRecord } from '../core/logs/record.js';
import { type RenderedFake, startRenderedFake } from './fakes/rendered-fake.js';
import { policyGateway } from './guardrails/helpers.js';
import { ACCOUNT_KEY, gatewayClient, startGateway, type TestGateway, traceId } from './harness.js';

/**
 * Chat content parts beyond text and images (issue 17), through the real HTTP interface with the
 * official SDK: what each provider's fake upstream received, and the 400s of providers that cannot
 * take a part (nothing reaches their upstream).
 */

type Part = OpenAI.Chat.Completions.ChatCompletionContentPart;

const PDF = Buffer.from('%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n').toString('base64');
const TEXT = Buffer.from('Q3 revenue rose 12%.\n').toString('base64');
const WAV = Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ').toString('base64');
const MP3 = Buffer.from([0x49, 0x44, 0x33, 0x04, 0x00, 0xff, 0xfb, 0x90]).toString('base64');

const question: Part = { type: 'text', text: 'Summarise the attachment.' };
const pdfPart: Part = { type: 'file', file: { file_data: `data:application/pdf;base64,${PDF}`, filename: 'Q3 report_v2 (final).pdf' } };
const textFilePart: Part = { type: 'file', file: { file_data: `data:text/plain;base64,${TEXT}`, filename: 'notes.txt' } };
const fileIdPart: Part = { type: 'file', file: { file_id: 'file-abc123' } };
const wavPart: Part = { type: 'input_audio', input_audio: { data: WAV, format: 'wav' } };
const mp3Part: Part = { type: 'input_audio', input_audio: { data: MP3, format: 'mp3' } };

let gateway: TestGateway;
test.before(async () => {
  gateway = await startGateway({ providers: [openai(), azureOpenAI(), groq(), anthropic(), bedrock(), gemini(), vertexAI(), cohere()] });
});
test.after.always(() => gateway?.close());

const VERTEX = { 'x-gateway-cloud-b-project-id': 'acme-prod', 'x-gateway-cloud-b-region': 'europe-west4' };
const AZURE = { 'x-gateway-cloud-a-resource-name': 'contoso', 'x-gateway-cloud-a-deployment-id': 'gpt4o-prod', 'x-gateway-cloud-a-api-version': '2024-10-21' };
const BEDROCK = { 'x-gateway-cloud-c-secret-access-key': FAKE_SECRET_ACCESS_KEY, 'x-gateway-cloud-c-region': FAKE_REGION };

/** A provider behind its own fake: the renderer, the custom host's path and the provider's headers. */
const setups: Record<string, { renderer: ProviderFakeRenderer; path: string; headers?: Record<string, string>; model: string }> = {
  openai: { renderer: openaiFake, path: '/v1', model: 'gpt-4o' },
  'azure-openai': { renderer: azureOpenAIFake, path: '/openai', headers: AZURE, model: 'gpt-4o' },
  groq: { renderer: compatibleFake(groqManifest), path: '/v1', model: 'llama-3.3-70b-versatile' },
  anthropic: { renderer: anthropicFakeRenderer, path: '/v1', model: 'claude-sonnet-4-5' },
  bedrock: { renderer: bedrockFake, path: '', headers: BEDROCK, model: 'anthropic.claude-3-5-sonnet-20240620-v1:0' },
  gemini: { renderer: geminiFakeRenderer, path: '/v1', model: 'gemini-2.5-flash' },
  'vertex-ai': { renderer: vertexFakeRenderer, path: '/v1', headers: VERTEX, model: 'gemini-2.5-flash' },
  cohere: { renderer: cohereFake, path: '/v2', model: 'command-a-03-2025' },
};

async function setup(t: ExecutionContext, provider: string): Promise<{ fake: RenderedFake; client: OpenAI; model: string }> {
  const chosen = setups[provider];
  const fake = await startRenderedFake(chosen.renderer);
  t.teardown(() => fake.close());
  fake.answer({ kind: 'text', text: 'A short summary.', finishReason: 'stop', usage: { promptTokens: 40, completionTokens: 4 } });
  const client = gatewayClient(gateway.url, { 'x-gateway-provider': provider, 'x-gateway-custom-host': fake.origin + chosen.path, ...chosen.headers });
  return { fake, client, model: chosen.model };
}

const ask = (client: OpenAI, model: string, content: Part[]) => client.chat.completions.create({ model, messages: [{ role: 'user', content }] });

/** The SDK's error for a refused request, with the error body's fields. */
async function refusal(request: Promise<unknown>): Promise<{ status: number; message: string; type: string; param: string | null; code: string | null }> {
  const error = await request.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof OpenAI.APIError)) throw new Error('the request was not refused');
  const body = error.error as { message: string; type: string; param: string | null; code: string | null };
  return { status: error.status ?? 0, message: body.message, type: body.type, param: body.param, code: body.code };
}

async function assertRefused(t: ExecutionContext, provider: string, content: Part[], part: string, at: number, detail?: RegExp): Promise<void> {
  const { fake, client, model } = await setup(t, provider);
  const error = await refusal(ask(client, model, content));
  t.like(error, { status: 400, type: 'invalid_request_error', param: `messages[0].content[${at}]`, code: 'unsupported_content_part' });
  t.true(error.message.includes(`"${provider}"`) && error.message.includes(`"${part}"`), error.message);
  if (detail) t.regex(error.message, detail);
  t.is(fake.requests.length, 0, 'nothing reached the upstream');
}

for (const provider of ['openai', 'azure-openai', 'groq']) {
  test(`${provider}: file (data and id) and input_audio parts reach the upstream unchanged`, async (t) => {
    const { fake, client, model } = await setup(t, provider);
    const content = [question, pdfPart, fileIdPart, wavPart, mp3Part];
    const completion = await ask(client, model, content);
    t.is(completion.choices[0].message.content, 'A short summary.');
    t.is(fake.requests.length, 1);
    t.deepEqual(fake.body(0).messages, [{ role: 'user', content }]);
  });
}

test('anthropic: a PDF becomes a base64 document block, a text file a text document, titled by the file name', async (t) => {
  const { fake, client, model } = await setup(t, 'anthropic');
  await ask(client, model, [question, pdfPart, textFilePart]);
  t.deepEqual(fake.body(0).messages, [
    {
      role: 'user',
      content: [
        { type: 'text', text: 'Summarise the attachment.' },
        { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Q3 report_v2 (final).pdf' },
        { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Q3 revenue rose 12%.\n' }, title: 'notes.txt' },
      ],
    },
  ]);
});

test('anthropic refuses audio, OpenAI file ids and files of other types, naming provider and part', async (t) => {
  await assertRefused(t, 'anthropic', [question, wavPart], 'input_audio', 1);
  await assertRefused(t, 'anthropic', [question, pdfPart, fileIdPart], 'file', 2, /file_id/);
  const word: Part = { type: 'file', file: { file_data: 'data:application/msword;base64,0M8R4KGx', filename: 'a.doc' } };
  await assertRefused(t, 'anthropic', [word], 'file', 0, /"application\/msword".*application\/pdf, text\/plain/);
});

test('bedrock: files become Converse document blocks with a sanitised, unique name; audio and file ids are refused', async (t) => {
  const { fake, client, model } = await setup(t, 'bedrock');
  const unnamed: Part = { type: 'file', file: { file_data: `data:text/plain;base64,${TEXT}` } };
  await ask(client, model, [question, pdfPart, pdfPart, unnamed]);
  t.deepEqual(fake.body(0).messages, [
    {
      role: 'user',
      content: [
        { text: 'Summarise the attachment.' },
        { document: { format: 'pdf', name: 'Q3 report-v2 (final)', source: { bytes: PDF } } },
        { document: { format: 'pdf', name: 'Q3 report-v2 (final) (2)', source: { bytes: PDF } } },
        { document: { format: 'txt', name: 'document', source: { bytes: TEXT } } },
      ],
    },
  ]);
  await assertRefused(t, 'bedrock', [question, mp3Part], 'input_audio', 1);
  await assertRefused(t, 'bedrock', [fileIdPart], 'file', 0, /file_id/);
  const zip: Part = { type: 'file', file: { file_data: 'data:application/zip;base64,UEsDBA==' } };
  await assertRefused(t, 'bedrock', [zip], 'file', 0, /"application\/zip"/);
});

for (const provider of ['gemini', 'vertex-ai']) {
  test(`${provider}: files and wav / mp3 audio become inlineData with their media types; file ids are refused`, async (t) => {
    const { fake, client, model } = await setup(t, provider);
    await ask(client, model, [question, pdfPart, wavPart, mp3Part]);
    t.deepEqual(fake.body(0).contents, [
      {
        role: 'user',
        parts: [
          { text: 'Summarise the attachment.' },
          { inlineData: { mimeType: 'application/pdf', data: PDF } },
          { inlineData: { mimeType: 'audio/wav', data: WAV } },
          { inlineData: { mimeType: 'audio/mp3', data: MP3 } },
        ],
      },
    ]);
    await assertRefused(t, provider, [question, fileIdPart], 'file', 1, /file_id/);
  });
}

test('vertex-ai with a Claude model maps a PDF as Anthropic does and refuses audio', async (t) => {
  const { fake, client } = await setup(t, 'vertex-ai');
  await ask(client, 'claude-sonnet-4-5@20250929', [pdfPart]);
  t.deepEqual(fake.body(0).messages, [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: PDF }, title: 'Q3 report_v2 (final).pdf' }] }]);
  const claude = await setup(t, 'vertex-ai');
  const error = await refusal(ask(claude.client, 'claude-sonnet-4-5@20250929', [question, wavPart]));
  t.like(error, { status: 400, param: 'messages[0].content[1]', code: 'unsupported_content_part' });
  t.regex(error.message, /"vertex-ai".*"input_audio"/);
  t.is(claude.fake.requests.length, 0);
});

test('cohere declares no file or audio parts: both are refused, streamed or not', async (t) => {
  await assertRefused(t, 'cohere', [question, pdfPart], 'file', 1);
  await assertRefused(t, 'cohere', [wavPart], 'input_audio', 0);
  const { fake, client, model } = await setup(t, 'cohere');
  const error = await refusal(client.chat.completions.create({ model, messages: [{ role: 'user', content: [pdfPart] }], stream: true }));
  t.like(error, { status: 400, code: 'unsupported_content_part', param: 'messages[0].content[0]' });
  t.is(fake.requests.length, 0);
});

test('input guardrails judge the text parts only: a redacted text travels with the file and audio parts untouched', async (t) => {
  const setup = await policyGateway(config.policies!['pii-redact']);
  t.teardown(() => setup.close());
  const content: Part[] = [{ type: 'text', text: 'Mail ana.lopez@example.com the summary.' }, pdfPart, wavPart];
  await setup.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content }] });
  t.deepEqual(setup.fake.requests[0].json().messages, [{ role: 'user', content: [{ type: 'text', text: 'Mail [REDACTED_EMAIL] the summary.' }, pdfPart, wavPart] }]);
  // A request of file and audio parts alone has no text to judge: it is allowed, unchanged.
  await setup.client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: [pdfPart, wavPart] }] });
  t.deepEqual(setup.fake.requests[1].json().messages, [{ role: 'user', content: [pdfPart, wavPart] }]);
});

test('a large file is forwarded whole while the logged request body stays capped', async (t) => {
  const { fake, client, model } = await setup(t, 'openai');
  const big = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
  const trace = traceId('content-parts-big');
  const content: Part[] = [question, { type: 'file', file: { file_data: `data:application/pdf;base64,${big}`, filename: 'big.pdf' } }];
  await client.chat.completions.create({ model, messages: [{ role: 'user', content }] }, { headers: { 'x-gateway-trace-id': trace } });
  t.is(fake.body(0).messages[0].content[1].file.file_data.length, big.length + 'data:application/pdf;base64,'.length);
  await gateway.gateway.flushLogs();
  const admin = (path: string) => fetch(`${gateway.url}${path}`, { headers: { 'x-gateway-api-key': ACCOUNT_KEY } }).then((response) => response.json() as Promise<any>);
  const [row] = (await admin(`/admin/logs?trace_id=${encodeURIComponent(trace)}`)).data as LogRecord[];
  t.is(row.status, 200);
  const detail = (await admin(`/admin/logs/${row.id}`)) as LogRecord;
  t.true(detail.request_body!.length < 33 * 1024, `logged ${detail.request_body!.length} characters`);
  t.regex(detail.request_body!, /…\[truncated, \d+ in all\]$/);
});

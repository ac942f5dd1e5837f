import type { FakeHandler, RecordedRequest } from './openai-fake.js';

/** A multipart body as the fake provider received it, parsed by an implementation independent of the gateway's (undici's). */
export interface ReceivedForm {
  readonly fields: Record<string, string>;
  readonly files: Record<string, { filename: string; type: string; bytes: Buffer }>;
}

export async function receivedForm(request: RecordedRequest): Promise<ReceivedForm> {
  const form = await new Response(new Uint8Array(request.body), { headers: { 'content-type': String(request.headers['content-type']) } }).formData();
  const fields: Record<string, string> = {};
  const files: ReceivedForm['files'] = {};
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') fields[name] = value;
    else files[name] = { filename: value.name, type: value.type, bytes: Buffer.from(await value.arrayBuffer()) };
  }
  return { fields, files };
}

/** OpenAI's documented answers for the multipart operations. */
export const multipartHandler: FakeHandler = async (request, response) => {
  const path = request.url.split('?')[0];
  const form = await receivedForm(request);
  if (path.endsWith('/images/edits') || path.endsWith('/images/variations')) {
    const n = Number(form.fields.n ?? 1);
    const item = form.fields.response_format === 'b64_json' ? { b64_json: 'iVBORw0KGgo=' } : { url: 'https://images.example.test/out.png' };
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ created: 1_700_000_000, data: Array.from({ length: n }, () => item), extra_field: 'dropped in strict mode' }));
    return;
  }
  if (path.endsWith('/audio/transcriptions') || path.endsWith('/audio/translations')) {
    const text = path.endsWith('/translations') ? 'Hello, how are you?' : 'Bonjour, comment ça va ?';
    if (form.fields.response_format === 'text') {
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`${text}\n`);
    } else {
      response.writeHead(200, { 'content-type': 'application/json' });
      // whisper reports a duration; the newer transcription models report tokens.
      const usage = form.fields.model?.startsWith('gpt-')
        ? { type: 'tokens', input_tokens: 14, input_token_details: { audio_tokens: 14 }, output_tokens: 45, total_tokens: 59 }
        : { type: 'duration', seconds: 3 };
      response.end(JSON.stringify({ text, usage }));
    }
    return;
  }
  response.writeHead(404, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ error: { message: `no route ${path}`, type: 'invalid_request_error', param: null, code: null } }));
};

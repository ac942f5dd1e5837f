import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { multipartBody } from './multipart-body.js';

test('a form is re-encoded with every field value and the file bytes; its length is exact', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'multipart-'));
  const audio = Buffer.from([0, 1, 2, 255, 13, 10, 45, 45]);
  writeFileSync(join(directory, 'a'), audio);
  const { body, headers } = multipartBody({
    fields: { model: 'whisper-1', 'timestamp_granularities[]': 'segment', prompt: 'say "hi"\r\n' },
    repeated: { 'timestamp_granularities[]': ['word', 'segment'] },
    files: [{ field: 'file', filename: 'clip "1".mp3', contentType: 'audio/mpeg', path: join(directory, 'a'), size: audio.length }],
  });
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  t.is(String(bytes.length), headers['content-length']);
  const form = await new Response(bytes, { headers: { 'content-type': headers['content-type'] } }).formData();
  t.is(form.get('model'), 'whisper-1');
  t.deepEqual(form.getAll('timestamp_granularities[]'), ['word', 'segment']);
  t.is(form.get('prompt'), 'say "hi"\r\n');
  const file = form.get('file') as File;
  t.is(file.type, 'audio/mpeg');
  t.is(file.name, 'clip "1".mp3'); // quotes go as %22, as browsers send them
  t.deepEqual(Buffer.from(await file.arrayBuffer()), audio);
});

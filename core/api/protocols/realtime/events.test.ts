import test from 'ava';
import { addUsage, eventTypeOf, finishedText, itemTexts, usageOf } from './events.js';

const type = (text: string) => eventTypeOf(Buffer.from(text));

test('the top-level type is found without parsing, whatever comes first and whatever nested types say', (t) => {
  t.is(type('{"type":"response.done","response":{}}'), 'response.done');
  t.is(type('{"event_id":"e1","item":{"type":"message","content":[{"type":"input_text"}]},"type":"conversation.item.create"}'), 'conversation.item.create');
  t.is(type('{ "note": "a \\"type\\": \\"fake\\"", "type" : "session.update" }'), 'session.update');
  t.is(type(`{"type":"response.output_audio.delta","delta":"${'A'.repeat(50_000)}"}`), 'response.output_audio.delta');
  t.is(type(`{"delta":"${'A'.repeat(5000)}","type":"late"}`), undefined, 'past the scanned prefix');
  t.is(type('[{"type":"x"}]'), undefined);
  t.is(type('{"type":1}'), undefined);
  t.is(type('not json'), undefined);
});

test("response.done usage in the unified shape, summed over responses", (t) => {
  const event = { type: 'response.done', response: { usage: { total_tokens: 30, input_tokens: 10, output_tokens: 20, input_token_details: { cached_tokens: 4, audio_tokens: 6 }, output_token_details: { audio_tokens: 15 } } } };
  const usage = usageOf(event)!;
  t.like(usage, { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30, prompt_tokens_details: { cached_tokens: 4, audio_tokens: 6 }, completion_tokens_details: { audio_tokens: 15 } });
  t.like(addUsage(usage, usage), { prompt_tokens: 20, completion_tokens: 40, total_tokens: 60, prompt_tokens_details: { cached_tokens: 8 } });
  t.is(usageOf({ type: 'response.done', response: { usage: null } }), undefined);
});

test("a conversation item's texts are judged and put back in their places", (t) => {
  const event = { type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_audio', audio: 'AAA' }, { type: 'input_text', text: 'one' }] } };
  const { texts, rewrite } = itemTexts(event);
  t.deepEqual(texts, ['one']);
  t.deepEqual((rewrite(['[redacted]']).item as { content: unknown[] }).content, [{ type: 'input_audio', audio: 'AAA' }, { type: 'input_text', text: '[redacted]' }]);
  t.deepEqual(finishedText('response.audio_transcript.done', { transcript: 'hi', response_id: 'r', item_id: 'i', content_index: 0 }), { part: 'r:i:0', text: 'hi', kind: 'output' });
});

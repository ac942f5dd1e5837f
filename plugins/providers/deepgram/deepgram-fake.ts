import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProviderFakeRenderer, ReceivedRequest, RenderedAnswer, Scenario, TranscriptionScenario } from '../../../core/spec/index.js';

const fixtures = join(process.cwd(), 'plugins/providers/deepgram/__fixtures__');

export const deepgramFixture = (name: string): string => readFileSync(join(fixtures, name), 'utf8');

const JSON_TYPE = { 'content-type': 'application/json' };

const failure = (status: number, code: string, message: string, retryAfter?: string): RenderedAnswer => ({
  status,
  headers: retryAfter === undefined ? JSON_TYPE : { ...JSON_TYPE, 'retry-after': retryAfter },
  chunks: [JSON.stringify({ err_code: code, err_msg: message, request_id: 'fake-request' })],
});

/** What Deepgram would refuse: another path, no model, a form instead of audio bytes, an empty body. */
function refusal(request: ReceivedRequest): RenderedAnswer | undefined {
  const [path, query = ''] = request.url.split('?');
  if (request.method !== 'POST' || !path.endsWith('/listen')) return failure(404, 'NOT_FOUND', `no route for ${request.method} ${path}`);
  if (!new URLSearchParams(query).get('model')) return failure(400, 'Bad Request', 'model is required');
  const type = request.headers['content-type'] ?? '';
  if (type.startsWith('multipart/') || type.startsWith('application/json')) return failure(400, 'Bad Request', 'Bad Request: failed to process audio: corrupt or unsupported data');
  if (request.body.length === 0) return failure(400, 'Bad Request', 'Bad Request: empty body');
  return undefined;
}

/**
 * Deepgram pre-recorded transcription, faked: `POST …/listen?model=…` with the audio bytes as the
 * body and `Authorization: Token <key>`; answers the recorded transcript, errors as `{err_code, err_msg}`.
 */
/** The recorded answer with the scenario's transcript and duration (one word per token, timed evenly). */
function listenAnswer(scenario: TranscriptionScenario): string {
  const recorded = JSON.parse(deepgramFixture('listen-response.json')) as { metadata: Record<string, unknown>; results: { channels: Array<{ alternatives: Array<Record<string, unknown>> }> } };
  const tokens = scenario.text.split(' ');
  const step = scenario.seconds / tokens.length;
  recorded.metadata.duration = scenario.seconds;
  recorded.results.channels[0].alternatives[0] = {
    transcript: scenario.text,
    confidence: 0.99,
    words: tokens.map((token, index) => ({ word: token.toLowerCase().replace(/[^a-z0-9']/g, ''), start: index * step, end: (index + 1) * step, confidence: 0.99, punctuated_word: token })),
  };
  return JSON.stringify(recorded);
}

export const deepgramFake: ProviderFakeRenderer = {
  classify: (request) => ({ operation: request.url.split('?')[0].endsWith('/listen') ? 'transcription' : 'other', stream: false }),
  renderTranscription: (scenario, request) => refusal(request) ?? { status: 200, headers: JSON_TYPE, chunks: [listenAnswer(scenario)] },
  render(scenario: Scenario, request: ReceivedRequest): RenderedAnswer {
    if (scenario.kind === 'error') return failure(scenario.status, scenario.status === 401 ? 'INVALID_AUTH' : 'ERROR', scenario.message, scenario.retryAfter);
    return refusal(request) ?? { status: 200, headers: JSON_TYPE, chunks: [deepgramFixture('listen-response.json')] };
  },
  checkAuth: (request, credential) => (request.headers.authorization === `Token ${credential}` ? [] : ['expected "Authorization: Token <key>"']),
  roles: () => [],
  stopSequences: () => [],
};

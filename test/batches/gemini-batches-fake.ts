import type { ServerResponse } from 'node:http';
import { type Fake, type RecordedRequest, startFake } from '../fakes/openai-fake.js';
import { batchFake, sendJson as json } from './batch-fake.js';

/**
 * A loopback fake of the Gemini API's batch mode with inlined requests, following its documented
 * lifecycle: `POST /v1beta/models/{model}:batchGenerateContent` creates a long-running Operation
 * `batches/{id}` whose `metadata` is the batch, `BATCH_STATE_PENDING` at first; the test moves it
 * (`RUNNING`, then an end: `SUCCEEDED` with `output.inlinedResponses.inlinedResponses` in input
 * order, `FAILED`, `CANCELLED`, `EXPIRED`). `POST /v1beta/batches/{id}:cancel` answers `{}` (the
 * state is read again). Requires `x-goog-api-key`.
 */
export type GeminiLineOutcome = { readonly text: string; readonly usage: { prompt: number; output: number } } | { readonly error: { code: number; message: string } };

interface FakeGeminiBatch {
  name: string;
  model: string;
  requests: Array<{ request: Record<string, any>; metadata: { key: string } }>;
  state: string;
  cancelRequested: boolean;
  outcomes?: readonly GeminiLineOutcome[];
}

export interface GeminiBatchesFake extends Fake {
  readonly batches: Map<string, FakeGeminiBatch>;
  only(): FakeGeminiBatch;
  /** Moves a batch to a state; for `BATCH_STATE_SUCCEEDED`, each request's outcome in input order. */
  move(name: string, state: string, outcomes?: readonly GeminiLineOutcome[]): void;
}

function operationOf(batch: FakeGeminiBatch) {
  const ended = ['BATCH_STATE_SUCCEEDED', 'BATCH_STATE_FAILED', 'BATCH_STATE_CANCELLED', 'BATCH_STATE_EXPIRED'].includes(batch.state);
  const total = batch.requests.length;
  const failed = batch.outcomes?.filter((outcome) => 'error' in outcome).length ?? 0;
  const succeeded = batch.outcomes ? total - failed : 0;
  const output = batch.outcomes && {
    inlinedResponses: {
      inlinedResponses: batch.outcomes.map((outcome, index) => {
        const metadata = batch.requests[index].metadata;
        if ('error' in outcome) return { error: outcome.error, metadata };
        const response = {
          candidates: [{ content: { parts: [{ text: outcome.text }], role: 'model' }, finishReason: 'STOP', index: 0 }],
          usageMetadata: { promptTokenCount: outcome.usage.prompt, candidatesTokenCount: outcome.usage.output, totalTokenCount: outcome.usage.prompt + outcome.usage.output },
          modelVersion: batch.model,
        };
        return { response, metadata };
      }),
    },
  };
  return {
    name: batch.name,
    metadata: {
      '@type': 'type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch',
      model: `models/${batch.model}`,
      displayName: 'fake',
      state: batch.state,
      batchStats: { requestCount: String(total), successfulRequestCount: String(succeeded), failedRequestCount: String(failed), pendingRequestCount: String(ended ? 0 : total) },
      ...(output ? { output } : {}),
    },
    done: ended,
    ...(batch.state === 'BATCH_STATE_FAILED' ? { error: { code: 3, message: 'The batch input was refused.' } } : {}),
  };
}

export async function startGeminiBatchesFake(apiKey: string): Promise<GeminiBatchesFake> {
  const batches = new Map<string, FakeGeminiBatch>();
  let created = 0;
  const fake = await startFake();
  const handler = (request: RecordedRequest, response: ServerResponse) => {
    if (request.headers['x-goog-api-key'] !== apiKey) return json(response, 403, { error: { code: 403, message: 'API key not valid.', status: 'PERMISSION_DENIED' } });
    const path = request.url.split('?')[0];
    const create = /^\/v1beta\/models\/([^/:]+):batchGenerateContent$/.exec(path);
    if (request.method === 'POST' && create) {
      const body = request.json() as { batch: { inputConfig: { requests: { requests: FakeGeminiBatch['requests'] } } } };
      const batch: FakeGeminiBatch = { name: `batches/fake${++created}`, model: create[1], requests: body.batch.inputConfig.requests.requests, state: 'BATCH_STATE_PENDING', cancelRequested: false };
      batches.set(batch.name, batch);
      return json(response, 200, operationOf(batch));
    }
    const match = /^\/v1beta\/(batches\/[^/:]+)(:cancel)?$/.exec(path);
    const batch = match ? batches.get(match[1]) : undefined;
    if (!batch) return json(response, 404, { error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' } });
    if (request.method === 'POST' && match![2]) {
      batch.cancelRequested = true;
      return json(response, 200, {});
    }
    if (request.method === 'GET' && !match![2]) return json(response, 200, operationOf(batch));
    return json(response, 404, { error: { code: 404, message: 'Not found', status: 'NOT_FOUND' } });
  };
  fake.handle(handler);
  return batchFake(fake, batches, 'batch', {
    batches,
    move(name: string, state: string, outcomes?: readonly GeminiLineOutcome[]) {
      const batch = batches.get(name)!;
      batch.state = state;
      if (outcomes) batch.outcomes = outcomes;
    },
  });
}

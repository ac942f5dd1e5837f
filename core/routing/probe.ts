import type { UpstreamClient } from '../http/upstream.js';
import type { AuthSlice } from '../pipeline/context.js';
import type { UpstreamRequest } from '../spec/provider.js';
import type { ProbeSender } from './health.js';
import type { Target } from './route.js';

/** A probe's answer body is read (and dropped) up to this many bytes; the connection is closed past it. */
const MAX_PROBE_BYTES = 1024 * 1024;

/** A target whose provider cannot take the probe its health check asks for (shown as the probe's `last_error`). */
export class ProbeUnsupported extends Error {
  readonly code = 'probe_unsupported';
}

/**
 * Sends health-check probes through the gateway's provider plugins, as the cache's embedder sends
 * its calls: the target is opened like a route's (its stored credential or virtual key; a target
 * that takes the caller's Bearer is probed without one), the provider's own adapter builds the
 * request (`models`: its models list; `chat`: a 1-token chat), and the upstream client sends it
 * within the probe's time-out. Probes are not request log entries and cost no virtual key budget.
 */
export function createProbeSender(dependencies: { open: (target: Target) => Promise<AuthSlice>; upstream: UpstreamClient }): ProbeSender {
  return async (target, check, timeoutMs) => {
    const auth = await dependencies.open(target);
    const { provider } = auth;
    const override = target.override_params?.model;
    const model = check.model ?? (typeof override === 'string' ? override : undefined);
    const kind = check.request ?? (model !== undefined && provider.operations.chat ? 'chat' : 'models');
    let request: UpstreamRequest;
    if (kind === 'chat') {
      const adapter = provider.operations.chat;
      if (!adapter || model === undefined) throw new ProbeUnsupported(`the provider "${provider.id}" cannot take a chat probe here`);
      const body = { model, messages: [{ role: 'user' as const, content: 'ping' }], max_tokens: 1 };
      adapter.validate?.(body);
      request = adapter.toUpstream(body, auth.target);
    } else {
      const adapter = provider.operations.models;
      if (!adapter) throw new ProbeUnsupported(`the provider "${provider.id}" has no models list: give the health check request "chat" and a model`);
      request = adapter.toUpstream(auth.target);
    }
    const upstreamRequest = { ...request, headers: { ...request.headers } };
    Object.assign(upstreamRequest.headers, provider.auth(upstreamRequest, auth.target));
    const answer = await dependencies.upstream.send(upstreamRequest, { signal: AbortSignal.timeout(timeoutMs), guarded: auth.target.customHost, timeoutMs });
    let read = 0;
    try {
      for await (const chunk of answer.body) {
        read += (chunk as Buffer).length;
        if (read > MAX_PROBE_BYTES) break;
      }
    } catch {
      // The status is what the probe judges; a body cut short changes nothing.
    } finally {
      answer.body.destroy();
    }
    return answer.status;
  };
}

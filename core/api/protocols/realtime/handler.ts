import { errors } from '../../../errors.js';
import type { GatewayContext } from '../../../pipeline/context.js';
import type { UpstreamRequest } from '../../../spec/provider.js';
import { type OperationHandler, unsupportedOperation } from '../../operation.js';

/** The upstream request of each admitted session, from the transform stage to the upgrade (see {@link realtime}). */
const admitted = new WeakMap<GatewayContext, UpstreamRequest>();

/** The upstream request the transform stage built for an admitted session; undefined when it was not admitted. */
export const admittedUpstream = (context: GatewayContext): UpstreamRequest | undefined => admitted.get(context);

/** The longest `model` accepted (a model id or an Azure deployment name). */
const MODEL_MAX = 256;

/**
 * `GET /v1/realtime?model=…`, as the pipeline sees it: the session's "request" is its query. The
 * stages run as for any request (key, target and credentials, limits admission, the guardrail
 * policy), and the transform stage answers locally: it maps the session to the provider's realtime
 * endpoint (`operations.realtime`, with the forwarded headers and `auth()` applied, as for every
 * request) and hands that to the upgrade, which opens the provider's WebSocket; nothing is sent by
 * the forward stage. Input guardrails judge nothing here: the session's texts are judged as they come.
 */
export const realtime: OperationHandler = {
  name: 'realtime',
  method: 'GET',
  mapsErrors: true,
  judged: () => ({ texts: [], parameters: {} }),

  async parse(request) {
    const query = new URLSearchParams((request.url ?? '').split('?')[1] ?? '');
    const model = query.get('model');
    if (!model) throw errors.invalidRequest("The Realtime API needs the session's model: GET /v1/realtime?model=<model>.", { param: 'model', code: 'missing_required_parameter' });
    if (model.length > MODEL_MAX) throw errors.invalidRequest(`Invalid 'model': at most ${MODEL_MAX} characters.`, { param: 'model', code: 'invalid_value' });
    return { model, body: { model }, streaming: true };
  },

  toUpstream(context, provider, target) {
    const adapter = provider.operations.realtime;
    if (!adapter) throw unsupportedOperation(provider.id, 'realtime', 'GET /v1/realtime');
    return adapter.toUpstream({ model: context.request.model! }, target);
  },

  async answerLocally(context, provider) {
    const auth = context.auth!;
    // As the transform stage maps every request: the adapter's request, the forwarded headers, then auth() last.
    const mapped = realtime.toUpstream(context, provider, auth.target);
    const upstreamRequest = { ...mapped, headers: { ...mapped.headers, ...auth.forwardHeaders } };
    Object.assign(upstreamRequest.headers, provider.auth(upstreamRequest, auth.target));
    admitted.set(context, upstreamRequest);
    return { status: 101, headers: {}, body: null };
  },

  respond() {
    throw new Error('a Realtime session is answered by its upgrade, not by respond()');
  },
};

import { type ErrorBody, errorBody, readErrorReply, type UpstreamReply } from '../../../core/spec/index.js';

/**
 * SageMaker Runtime errors: `{"message": "…"}` (or `Message`) with the exception in
 * `x-amzn-errortype` (`ValidationError`, `ThrottlingException`, `ModelError`…). A container's own
 * failure is a 424 `ModelError` whose body keeps the container's status and message
 * (`OriginalStatusCode`, `OriginalMessage`): the container's message is the one kept.
 */
export function mapSageMakerError(reply: UpstreamReply): ErrorBody {
  const { json, snippet } = readErrorReply(reply);
  const header = reply.headers['x-amzn-errortype'];
  const errorType = (Array.isArray(header) ? header[0] : header)?.split(':')[0] ?? (typeof json?.ErrorCode === 'string' ? json.ErrorCode : undefined);
  const message = typeof json?.OriginalMessage === 'string' && json.OriginalMessage ? json.OriginalMessage : (json?.message ?? json?.Message);
  return errorBody(reply.status, typeof message === 'string' ? message : undefined, errorType ?? null, json ? '' : snippet);
}

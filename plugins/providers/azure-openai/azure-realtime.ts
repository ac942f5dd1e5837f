import type { RealtimeAdapter } from '../../../core/spec/index.js';
import { AZURE_HEADERS } from './azure-target.js';

const API_VERSION = /^\d{4}-\d{2}-\d{2}(-preview)?$/;
const DEPLOYMENT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Azure OpenAI's Realtime endpoint on a deployment (the `x-gateway-cloud-a-deployment-id` header,
 * else the session's `model`): the v1 API's `{base}/v1/realtime?model={deployment}` by default; with
 * an `x-gateway-cloud-a-api-version` header, the dated API's
 * `{base}/realtime?api-version={version}&deployment={deployment}`. The key goes as `api-key` (auth()).
 */
export const azureRealtime: RealtimeAdapter = {
  toUpstream(request, target) {
    const named = target.headers[AZURE_HEADERS.deploymentId]?.trim();
    const deployment = named && DEPLOYMENT.test(named) ? named : request.model;
    const version = target.headers[AZURE_HEADERS.apiVersion]?.trim();
    const url =
      version && API_VERSION.test(version)
        ? `${target.baseUrl}/realtime?api-version=${encodeURIComponent(version)}&deployment=${encodeURIComponent(deployment)}`
        : `${target.baseUrl}/v1/realtime?model=${encodeURIComponent(deployment)}`;
    return { method: 'GET', url, headers: {} };
  },
};

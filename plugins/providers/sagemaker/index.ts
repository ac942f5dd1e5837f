import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { AWS_HEADERS, AWS_REGION, awsRegion, signAwsRequest } from '../../shared/aws-sigv4/aws-target.js';
import { sageMakerChat } from './sagemaker-chat.js';
import { mapSageMakerError } from './sagemaker-error.js';

export { INFERENCE_COMPONENT_HEADER } from './sagemaker-chat.js';

export interface SageMakerParams {
  /** Region when the request names none in `x-gateway-cloud-c-region` (default `us-east-1`). */
  defaultRegion?: string;
}

/** The spec's cloud-c headers, as Bedrock reads them: SageMaker runs in the same cloud. */
export const SAGEMAKER_HEADERS = AWS_HEADERS;

/**
 * Amazon SageMaker real-time endpoints (the spec's cloud-c): chat through InvokeEndpoint and
 * InvokeEndpointWithResponseStream on an endpoint whose container serves OpenAI's messages schema
 * (LMI, TGI's Messages API, vLLM). The model is the endpoint's name; the Bearer token is the AWS
 * access key id, signed with SigV4 using `x-gateway-cloud-c-secret-access-key`.
 */
export function sagemaker(params: SageMakerParams = {}): ProviderRegistration {
  const defaultRegion = params.defaultRegion ?? 'us-east-1';
  return {
    manifest: {
      id: 'sagemaker',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: "Amazon SageMaker endpoints: chat (InvokeEndpoint / InvokeEndpointWithResponseStream, SigV4) on containers serving OpenAI's messages schema; the model is the endpoint name.",
      params: { type: 'object', additionalProperties: false, properties: { defaultRegion: { type: 'string', pattern: AWS_REGION.source } } },
    },
    params,
    // LiteLLM's prefixes, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['sagemaker_chat', 'sagemaker'] },
    create() {
      return {
        id: 'sagemaker',
        name: 'Amazon SageMaker',
        operations: { chat: sageMakerChat },
        capabilities: { developerRole: () => false },
        baseUrl: (headers) => `https://runtime.sagemaker.${awsRegion(headers, defaultRegion)}.amazonaws.com`,
        auth(request, target): Record<string, string> {
          const accessKeyId = target.credentials.apiKey;
          const secretAccessKey = target.headers[SAGEMAKER_HEADERS.secretAccessKey];
          if (!accessKeyId || !secretAccessKey) {
            throw errors.authentication(`SageMaker needs "Authorization: Bearer <access key id>" and "${SAGEMAKER_HEADERS.secretAccessKey}" (SigV4; it takes no API key).`, {
              code: 'missing_provider_credentials',
            });
          }
          const signedHeaders: Record<string, string> = {};
          for (const name of ['content-type', 'accept', 'x-amzn-sagemaker-inference-component']) {
            const value = request.headers[name];
            if (value !== undefined) signedHeaders[name] = value;
          }
          return signAwsRequest(request, target, {
            accessKeyId,
            secretAccessKey,
            headers: signedHeaders,
            scope: { region: awsRegion(target.headers, defaultRegion), service: 'sagemaker' },
            streamed: 'Pass-through requests to SageMaker cannot be signed with SigV4 (their body is streamed); use the chat route.',
          });
        },
        authHeaders: ['authorization', 'x-amz-*'],
        mapError: mapSageMakerError,
      };
    },
  };
}

import { errors, type ProviderRegistration } from '../../../core/spec/index.js';
import { AWS_HEADERS, AWS_REGION, awsRegion, signAwsRequest } from '../../shared/aws-sigv4/aws-target.js';
import { BEDROCK_BATCH_HEADERS, bedrockBatches } from './bedrock-batches.js';
import { bedrockChat } from './bedrock-chat.js';
import { BEDROCK_CONTENT_PARTS } from './bedrock-document.js';
import { bedrockEmbed } from './bedrock-embed.js';
import { bedrockMessages } from './bedrock-messages.js';
import { mapBedrockError } from './bedrock-error.js';
import { bedrockRerank } from './bedrock-rerank.js';

export interface BedrockParams {
  /** Region when the request names none in `x-gateway-cloud-c-region` (default `us-east-1`). */
  defaultRegion?: string;
  /** Where batch jobs read and write when the request names none (`s3://bucket/prefix`; docs/batches.md). */
  batchS3Uri?: string;
  /** The IAM service role batch jobs run as when the request names none. */
  batchRoleArn?: string;
}

export { BEDROCK_BATCH_HEADERS };

export const BEDROCK_HEADERS = AWS_HEADERS;

/**
 * Amazon Bedrock (the spec's cloud-c): chat through Converse / ConverseStream, embeddings through
 * InvokeModel (Titan, Cohere). The Bearer token is the AWS access key id, signed with SigV4 using
 * `x-gateway-cloud-c-secret-access-key` (and `x-gateway-cloud-c-session-token`); without a secret
 * it is sent as a Bedrock API key.
 */
export function bedrock(params: BedrockParams = {}): ProviderRegistration {
  const defaultRegion = params.defaultRegion ?? 'us-east-1';
  return {
    manifest: {
      id: 'bedrock',
      kind: 'provider',
      specificationVersion: 'v1',
      version: '1.0.0',
      description: 'Amazon Bedrock: Converse / ConverseStream chat (SigV4 or Bedrock API key), the Messages API natively for Claude (InvokeModel), Titan and Cohere embeddings, Amazon and Cohere rerank models (Agents runtime Rerank), OpenAI batches as batch inference jobs over the caller S3 location.',
      params: {
        type: 'object',
        additionalProperties: false,
        properties: {
          defaultRegion: { type: 'string', pattern: AWS_REGION.source },
          batchS3Uri: { type: 'string', pattern: '^s3://' },
          batchRoleArn: { type: 'string', pattern: '^arn:' },
        },
      },
    },
    params,
    // LiteLLM's prefix, for `llm-gateway import litellm`.
    foreignNames: { litellm: ['bedrock'] },
    create() {
      return {
        id: 'bedrock',
        name: 'Amazon Bedrock',
        operations: {
          chat: bedrockChat,
          embed: bedrockEmbed,
          messages: bedrockMessages,
          rerank: bedrockRerank((headers) => awsRegion(headers, defaultRegion)),
          batches: bedrockBatches({ region: (headers) => awsRegion(headers, defaultRegion), ...(params.batchS3Uri ? { s3Uri: params.batchS3Uri } : {}), ...(params.batchRoleArn ? { roleArn: params.batchRoleArn } : {}) }),
        },
        // No developer role upstream: the core sends developer messages as system. Converse reads the thinking budget.
        capabilities: { developerRole: () => false, contentParts: () => BEDROCK_CONTENT_PARTS, chatExtensions: () => ['thinking'] },
        baseUrl: (headers) => `https://bedrock-runtime.${awsRegion(headers, defaultRegion)}.amazonaws.com`,
        auth(request, target) {
          const accessKeyId = target.credentials.apiKey;
          if (!accessKeyId) {
            throw errors.authentication('Bedrock needs "Authorization: Bearer <access key id or Bedrock API key>".', { code: 'missing_provider_credentials' });
          }
          const secretAccessKey = target.headers[BEDROCK_HEADERS.secretAccessKey];
          if (!secretAccessKey) return { authorization: `Bearer ${accessKeyId}` };
          const contentType = request.headers['content-type'];
          // A batch's S3 object requests carry their payload hash, which S3 requires signed (bedrock-batches.ts).
          const payloadHash = request.headers['x-amz-content-sha256'];
          return signAwsRequest(request, target, {
            accessKeyId,
            secretAccessKey,
            headers: { ...(contentType ? { 'content-type': contentType } : {}), ...(payloadHash ? { 'x-amz-content-sha256': payloadHash } : {}) },
            scope: { region: awsRegion(target.headers, defaultRegion), service: payloadHash ? 's3' : 'bedrock' },
            streamed: 'Pass-through requests to Bedrock cannot be signed with SigV4 (their body is streamed); use a Bedrock API key (omit x-gateway-cloud-c-secret-access-key) or a unified route.',
          });
        },
        // SigV4 signs with authorization and x-amz-date / x-amz-content-sha256 / x-amz-security-token.
        authHeaders: ['authorization', 'x-amz-*'],
        mapError: mapBedrockError,
        // The catalogue knows Bedrock's model ids, cross-region prefixes (`us.`, `eu.`, `global.`) included.
        modelCatalogue: { catalogProvider: 'amazon-bedrock' },
        // Batch inference is billed at 50% of the on-demand price (Bedrock's pricing page).
        pricing: { catalogProvider: 'aws', batchDiscount: 0.5 },
      };
    },
  };
}

// The AWS event stream framing is shared with SageMaker: it lives in plugins/shared/aws-eventstream.
export * from '../../shared/aws-eventstream/eventstream.js';

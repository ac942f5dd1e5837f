import test from 'ava';
import { errors, errorTypeForStatus } from './errors.js';

test('the catalogue keeps each error its status and type (the table gives 4xx and 500, the gateway names its own 5xx)', (t) => {
  const shapes = Object.fromEntries(Object.entries(errors).map(([name, make]) => [name, [make('m').status, make('m').body.type]]));
  t.deepEqual(shapes, {
    invalidRequest: [400, 'invalid_request_error'],
    authentication: [401, 'authentication_error'],
    permission: [403, 'permission_error'],
    notFound: [404, 'not_found_error'],
    conflict: [409, 'conflict_error'],
    methodNotAllowed: [405, 'invalid_request_error'],
    requestTimeout: [408, 'timeout_error'],
    tooLarge: [413, 'request_too_large'],
    expectationFailed: [417, 'invalid_request_error'],
    rateLimited: [429, 'rate_limit_error'],
    clientClosed: [499, 'client_closed_request'],
    internal: [500, 'api_error'],
    badGateway: [502, 'upstream_error'],
    upstreamTimeout: [504, 'timeout_error'],
    cacheMiss: [504, 'cache_miss_error'],
    overloaded: [503, 'overloaded_error'],
    unavailable: [503, 'service_unavailable_error'],
    routeNotAllowed: [403, 'permission_error'],
    gatewayKeyNotForwardable: [400, 'invalid_request_error'],
  });
  t.like(errors.routeNotAllowed('m').body, { param: 'x-gateway-config', code: 'route_not_allowed' });
  t.like(errors.gatewayKeyNotForwardable('m', { param: 'authorization' }).body, { param: 'authorization', code: 'gateway_key_not_forwardable' });
  t.deepEqual(errors.invalidRequest('Bad.', { param: 'n', code: 'invalid_value' }).toJSON(), {
    error: { message: 'Bad.', type: 'invalid_request_error', param: 'n', code: 'invalid_value' },
  });
});

test("an upstream status maps by the one table; other 5xx are api_error, other statuses invalid_request_error; a provider's quirks come first", (t) => {
  t.is(errorTypeForStatus(409), 'conflict_error');
  t.is(errorTypeForStatus(422), 'invalid_request_error');
  t.is(errorTypeForStatus(418), 'invalid_request_error');
  t.is(errorTypeForStatus(502), 'api_error');
  t.is(errorTypeForStatus(503), 'api_error');
  t.is(errorTypeForStatus(503, { 503: 'overloaded_error' }), 'overloaded_error');
  t.is(errorTypeForStatus(429, { 503: 'overloaded_error' }), 'rate_limit_error');
});

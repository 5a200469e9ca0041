/**
 * tenacious/grpc: a @grpc/grpc-js client interceptor that retries unary calls (and server
 * streams until their first message) with tenacious's engine and rules (per-attempt deadlines
 * under the call's, `grpc-previous-rpc-attempts`, pushback, the presets), and the channel
 * option that turns grpc-js's own retries off.
 * @grpc/grpc-js is an optional peer dependency; this entry imports its types only.
 *
 * @example
 * import { NO_CHANNEL_RETRIES, grpcRetryInterceptor } from 'tenacious/grpc';
 *
 * @module tenacious/grpc
 */
export { grpcRetryInterceptor } from './interceptor.js';
export { type GrpcInterceptorOptions, type GrpcInterceptorPolicy, NO_CHANNEL_RETRIES } from './options.js';

// `tenacious schedule --from-service-config FILE --method Service/Method`, read and rendered
// in-process: the flags, the schedule of a real service config's retry policy, and the errors.
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { type CliRequest, UsageError, readArgs } from '../../src/cli/args.js';
import { renderSchedule } from '../../src/cli/schedule.js';
import { type ServiceConfigScheduleRequest, serviceConfigSchedule } from '../../src/cli/service-config.js';

const read = (argv: string[]): CliRequest => readArgs(argv, (config) => parseArgs(config));
const message = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error('expected a UsageError');
};

const PUBLISHER = JSON.stringify({
  methodConfig: [
    {
      name: [{ service: 'google.pubsub.v1.Publisher', method: 'Publish' }],
      timeout: '60s',
      retryPolicy: {
        maxAttempts: 8,
        initialBackoff: '0.1s',
        maxBackoff: '1s',
        backoffMultiplier: 3,
        retryableStatusCodes: ['UNAVAILABLE'],
      },
    },
    { name: [{ service: 'google.pubsub.v1.Publisher', method: 'ListTopics' }], hedgingPolicy: { maxAttempts: 3 } },
    { name: [{ service: 'google.pubsub.v1.Publisher', method: 'GetTopic' }], timeout: '5s' },
  ],
});
const request = (method: string, extra: Partial<ServiceConfigScheduleRequest> = {}): ServiceConfigScheduleRequest => ({
  kind: 'schedule-service-config',
  file: 'sc.json',
  service: 'google.pubsub.v1.Publisher',
  method,
  ...extra,
});

describe('readArgs: schedule --from-service-config', () => {
  it('reads the file name and the fully qualified method', () => {
    expect(read(['schedule', '--from-service-config', 'sc.json', '--method', 'google.pubsub.v1.Publisher/Publish'])).toEqual(
      request('Publish'),
    );
    expect(read(['schedule', '--from-service-config', 'sc.json', '--method', 'a.B/C', '--max-attempts', '3', '--deadline', '9s'])).toEqual({
      kind: 'schedule-service-config',
      file: 'sc.json',
      service: 'a.B',
      method: 'C',
      attempts: 3,
      deadlineMs: 9000,
    });
  });

  it.each([
    [['schedule', '--method', 'a.B/C'], '--method needs --from-service-config FILE'],
    [['schedule', '--from-service-config', 'sc.json'], '--from-service-config needs --method Service/Method'],
    [
      ['schedule', '--from-service-config', 'sc.json', '--method', 'Publish'],
      '--method must be Service/Method, the service fully qualified (e.g. google.pubsub.v1.Publisher/Publish), got "Publish"',
    ],
    [['schedule', '--from-service-config', 'sc.json', '--method', 'a.B/'], 'got "a.B/"'],
    [['schedule', '--from-service-config', '', '--method', 'a.B/C'], '--from-service-config needs a file name, got ""'],
    [
      ['schedule', '--from-service-config', 'sc.json', '--method', 'a.B/C', '--preset', 'iam'],
      '--preset does not apply with --from-service-config: the document gives the policy',
    ],
    [['--method', 'a.B/C', '--', 'true'], '--method does not apply to run'],
  ])('%j', (argv, expected) => {
    expect(message(() => read(argv))).toContain(expected);
  });
});

describe('serviceConfigSchedule', () => {
  it("prints the retry policy's waits, capped at 5 attempts, under the method config's timeout", () => {
    const spec = serviceConfigSchedule(request('Publish'), PUBLISHER);
    expect(spec).toEqual({
      backoff: { initialDelayMs: 100, multiplier: 3, maxDelayMs: 1000, jitter: 'full' },
      deadlineMs: 60_000,
      attempts: 5,
      source: 'sc.json, google.pubsub.v1.Publisher/Publish',
    });
    expect(Object.keys(spec)).not.toContain('attemptTimeoutMs');
    const lines = renderSchedule(spec).trimEnd().split('\n');
    expect(lines[0]).toBe('sc.json, google.pubsub.v1.Publisher/Publish: wait 100ms x3 up to 1s, jitter full, deadline 60s');
    const rows = lines.filter((line) => /^\s+\d+\s/.test(line)).map((line) => line.trim().split(/\s+/).slice(0, 4).map(Number));
    // A6: random in [0, min(0.1 s · 3^n, 1 s)].
    expect(rows).toEqual([
      [1, 0, 0.05, 0.1],
      [2, 0, 0.15, 0.3],
      [3, 0, 0.45, 0.9],
      [4, 0, 0.5, 1],
    ]);
  });

  it("takes the policy's perAttemptRecvTimeout as each attempt's timeout", () => {
    const config = JSON.parse(PUBLISHER);
    config.methodConfig[0].retryPolicy.perAttemptRecvTimeout = '2s';
    expect(serviceConfigSchedule(request('Publish'), JSON.stringify(config)).attemptTimeoutMs).toBe(2000);
  });

  it('takes --max-attempts and --deadline over the document', () => {
    expect(serviceConfigSchedule(request('Publish', { attempts: 8, deadlineMs: 5000 }), PUBLISHER)).toMatchObject({
      attempts: 8,
      deadlineMs: 5000,
    });
  });

  it('says "deadline none" for a method config without a timeout', () => {
    const config = JSON.parse(PUBLISHER);
    delete config.methodConfig[0].timeout;
    expect(renderSchedule(serviceConfigSchedule(request('Publish'), JSON.stringify(config)))).toMatch(/^[^\n]*deadline none\n/);
  });

  it('refuses, in one line naming the file, an unknown method, a hedging policy and a bad document', () => {
    expect(message(() => serviceConfigSchedule(request('Publsh'), PUBLISHER))).toBe(
      '--from-service-config sc.json: no entry, service-wide entry or default for "google.pubsub.v1.Publisher/Publsh" in methodConfig (did you mean "google.pubsub.v1.Publisher/Publish"?)',
    );
    expect(message(() => serviceConfigSchedule(request('ListTopics'), PUBLISHER))).toBe(
      '--from-service-config sc.json: google.pubsub.v1.Publisher/ListTopics has a hedgingPolicy, not a retryPolicy: no waits to print',
    );
    expect(message(() => serviceConfigSchedule(request('GetTopic'), PUBLISHER))).toBe(
      '--from-service-config sc.json: google.pubsub.v1.Publisher/GetTopic has no retryPolicy: no waits to print',
    );
    expect(message(() => serviceConfigSchedule(request('Publish'), '{'))).toMatch(
      /^--from-service-config sc\.json: the service config is not JSON/,
    );
    for (const text of [message(() => serviceConfigSchedule(request('Publsh'), PUBLISHER))]) expect(text).not.toContain('\n');
  });
});

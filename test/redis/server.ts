// A real redis-server for the tests (Debian's `redis-server` package; .ci/run installs it): one
// process per server on a free loopback port, no persistence, stopped after. It is not skipped
// when missing: the tests of tenacious/redis fail with a message that says what to install.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer, connect } from 'node:net';

/** Where Debian puts it; REDIS_SERVER overrides. */
const BINARY = process.env.REDIS_SERVER ?? 'redis-server';

/** A running redis-server. */
export interface RedisServer {
  readonly port: number;
  readonly url: string;
  /** Ends the server at once (SIGKILL): no goodbye to its clients, as a crash. */
  kill(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  restart(): Promise<void>;
  /** Stops it for good. */
  stop(): Promise<void>;
}

/** Throws, saying how to install it, unless redis-server runs here. */
export function assertRedisServer(): void {
  try {
    execFileSync(BINARY, ['--version'], { stdio: 'pipe' });
  } catch (error) {
    throw new Error(
      `the tests of tenacious/redis need a real redis-server and could not run "${BINARY} --version": sudo apt-get install -y redis-server (CONTRIBUTING.md, .ci/run)`,
      { cause: error },
    );
  }
}

/** A port that was free a moment ago on 127.0.0.1. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether a PING on `port` gets PONG within 200 ms. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(200, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/** Starts redis-server on `port` and resolves once it answers PING (10 s at most). */
async function launch(port: number): Promise<ChildProcess> {
  const child = spawn(BINARY, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const started = Date.now();
  while (!(await pong(port))) {
    if (child.exitCode !== null || Date.now() - started > 10_000) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING (exit ${child.exitCode}): ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return child;
}

/** Ends `child` with `signal` and waits for it to be gone. */
async function end(child: ChildProcess | undefined, signal: NodeJS.Signals): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise((resolve) => child.once('exit', resolve));
  child.kill(signal);
  await gone;
}

/** A fresh redis-server on a free port of 127.0.0.1. */
export async function startRedis(): Promise<RedisServer> {
  assertRedisServer();
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(port);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill: async () => {
      await end(child, 'SIGKILL');
      child = undefined;
    },
    restart: async () => {
      await end(child, 'SIGKILL');
      child = await launch(port);
    },
    stop: async () => {
      await end(child, 'SIGKILL');
      child = undefined;
    },
  };
}
